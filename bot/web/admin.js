"use strict";
(function () {
  var A = window.Admin;
  var zone = null;  // TIMEZONE, from the overview
  var chart = null;
  var wasRunning = false;

  function renderFacts(facts, index) {
    var dl = document.getElementById("index");
    dl.innerHTML = "";
    var pairs = facts;
    if (!pairs) {  // no run views in this process: the status provider's index, as it comes
      pairs = Object.keys(index || {}).map(function (k) { return [k, index[k]]; });
    }
    pairs.forEach(function (pair) {
      var v = pair[1];
      dl.appendChild(A.el("dt", "", pair[0]));
      dl.appendChild(A.el("dd", "", typeof v === "object" && v !== null ? JSON.stringify(v) : v));
    });
  }

  var COLUMNS = ["Status", "Pemicu", "Mulai", "Durasi", "Halaman", "Keterangan"];

  function renderRuns(runs) {
    var body = document.getElementById("runs");
    body.innerHTML = "";
    (runs || []).forEach(function (run) {
      var tr = A.el("tr", "run status-" + String(run.status || "").toLowerCase());
      var id = run.run_id || run.id;
      var td = A.el("td", "run-id");
      td.setAttribute("data-label", "Proses");
      var a = A.el("a", "", id);
      a.href = A.link("/admin/runs/" + encodeURIComponent(id));
      td.appendChild(a);
      tr.appendChild(td);
      var labels = { SUCCESS: "Berhasil", FAILED: "Gagal", ABORTED: "Terhenti", SKIPPED: "Dilewati", RUNNING: "Berjalan" };
      var triggers = { schedule: "jadwal", admin: "admin", cli: "baris perintah" };
      var pages = run.pages_fetched === undefined ? "-" : A.num(run.pages_fetched) + " (" + A.num(run.pages_failed || 0) + " gagal)";
      var ended = run.ended_at || run.finished_at;
      var note = run.error || "";
      if (!note && run.log && run.log.length) {
        var last = run.log[run.log.length - 1];
        note = typeof last === "string" ? last : (last.msg || "");
      }
      [labels[run.status] || run.status, triggers[run.trigger] || run.trigger, A.time(run.started_at, zone),
       ended && run.duration_seconds !== undefined ? A.duration(run.duration_seconds) : "-", pages, note
      ].forEach(function (v, i) {
        var cell = A.el("td", i === 5 ? "note" : "", v);
        cell.setAttribute("data-label", COLUMNS[i]);
        tr.appendChild(cell);
      });
      body.appendChild(tr);
    });
  }

  function renderTrend(trend) {
    var box = document.getElementById("trend");
    var n = trend && trend.x ? trend.x.length : 0;
    box.setAttribute("data-runs", String(n));
    document.getElementById("trend-empty").hidden = n > 0;
    if (!n || typeof uPlot === "undefined") { return; }
    var data = [trend.x, trend.duration_s, trend.pages_fetched, trend.pages_failed, trend.chunks_total];
    var width = Math.max(240, box.clientWidth);
    var opts = {
      width: width,
      height: 220,
      tzDate: function (ts) { return zone ? uPlot.tzDate(new Date(ts * 1e3), zone) : new Date(ts * 1e3); },
      scales: { x: { time: true }, n: { auto: true }, s: { auto: true } },
      series: [
        { label: "Waktu", value: function (u, v) { return v === null ? "-" : A.time(new Date(v * 1e3).toISOString(), zone); } },
        { label: "Durasi (s)", scale: "s", stroke: "#0b4f8a", width: 2, points: { show: true, size: 6 },
          value: function (u, v) { return v === null ? "-" : A.num(v, 1); } },
        { label: "Halaman diambil", scale: "n", stroke: "#2e7d32", width: 2, points: { show: true, size: 6 } },
        { label: "Halaman gagal", scale: "n", stroke: "#b3261e", width: 2, points: { show: true, size: 6 } },
        { label: "Potongan teks", scale: "n", stroke: "#8a5a00", width: 2, points: { show: true, size: 6 } }
      ],
      axes: [
        { space: 70, values: function (u, ticks) {
          // days apart: "23 Nov"; runs within two days of each other: "23 Nov 09.43"
          var span = trend.x[trend.x.length - 1] - trend.x[0];
          var fmt = span > 2 * 86400 ? { day: "numeric", month: "short" } : { hour: "2-digit", minute: "2-digit", hour12: false };
          fmt.timeZone = zone || undefined;
          return ticks.map(function (t) { return new Intl.DateTimeFormat("id-ID", fmt).format(new Date(t * 1e3)); });
        } },
        { scale: "n", label: "jumlah" },
        { scale: "s", side: 1, label: "detik", grid: { show: false } }
      ]
    };
    if (chart) { chart.destroy(); }
    chart = new uPlot(opts, data, box);
  }

  function renderLive(live) {
    var box = document.getElementById("live");
    if (!live) {
      box.hidden = true;
      if (wasRunning) { wasRunning = false; load(); }
      return;
    }
    wasRunning = true;
    box.hidden = false;
    box.setAttribute("data-stage", live.stage);
    A.text(document.getElementById("live-stage"), live.stage_label);
    document.getElementById("live-count").textContent = live.text ? "(" + live.text + ")" : "";
    var bar = document.getElementById("live-bar");
    if (live.total) { bar.max = live.total; bar.value = live.done; } else { bar.removeAttribute("value"); }
    document.getElementById("live-link").href = A.link("/admin/runs/" + encodeURIComponent(live.run_id));
  }

  function load() {
    var overview = A.api("/admin/api/overview").catch(function () { return null; });
    var status = A.api("/admin/api/status");
    Promise.all([overview, status]).then(function (both) {
      var ov = both[0], st = both[1];
      zone = st.timezone || (ov && ov.timezone) || null;
      renderFacts(st.facts, st.index);
      var fb = st.feedback || {};
      A.text(document.getElementById("feedback"), "👍 " + (fb.up || 0) + "   👎 " + (fb.down || 0));
      renderRuns(st.runs);
      if (ov) { renderTrend(ov.trend); renderLive(ov.live); }
    }).catch(function (e) {
      A.text(document.getElementById("error"), "Gagal memuat status: " + e.message);
    });
  }

  function poll() {
    A.api("/admin/api/live").then(function (d) { renderLive(d.live); }).catch(function () {});
  }

  document.getElementById("reindex").addEventListener("click", function () {
    var out = document.getElementById("reindex-status");
    out.textContent = "Memulai…";
    A.api("/admin/api/reindex", { method: "POST" }).then(function (d) {
      out.textContent = "Pembaruan indeks dimulai. " + (d.detail || "");
      poll();
    }).catch(function (e) { out.textContent = "Gagal: " + e.message; });
  });
  window.addEventListener("resize", function () { if (chart) { chart.setSize({ width: Math.max(240, document.getElementById("trend").clientWidth), height: 220 }); } });
  load();
  setInterval(poll, 1000);
})();
