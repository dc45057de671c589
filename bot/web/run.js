"use strict";
(function () {
  var A = window.Admin;
  var runId = decodeURIComponent(window.location.pathname.replace(/^\/admin\/runs\//, ""));
  var api = "/admin/api/runs/" + encodeURIComponent(runId);
  var timer = null;

  function row(cells, cls) {
    var tr = A.el("tr", cls || "");
    cells.forEach(function (c) {
      var td = A.el("td");
      if (c instanceof Node) { td.appendChild(c); } else { A.text(td, c); }
      tr.appendChild(td);
    });
    return tr;
  }

  function urlLink(url) {
    var a = A.el("a", "url", url);
    a.href = url;
    a.rel = "noopener noreferrer";
    return a;
  }

  function render(d) {
    A.text(document.getElementById("run-id"), d.run.run_id + " · " + d.status_label);
    document.title = "Proses " + d.run.run_id + " - " + d.status_label;
    var dl = document.getElementById("summary");
    dl.innerHTML = "";
    d.summary.forEach(function (pair) { dl.appendChild(A.el("dt", "", pair[0])); dl.appendChild(A.el("dd", "", pair[1])); });

    var live = document.getElementById("live");
    if (d.progress) {
      live.hidden = false;
      live.setAttribute("data-stage", d.progress.stage);
      A.text(live, "Sedang berjalan: " + d.progress.stage_label + (d.progress.text ? " (" + d.progress.text + ")" : ""));
    } else { live.hidden = true; }

    var stages = document.querySelector("#stages tbody");
    stages.innerHTML = "";
    d.stages.forEach(function (s) {
      var counts = s.counts.map(function (c) { return c[1] + " " + c[0]; }).join(", ");
      var tr = row([s.label, s.status_label, s.duration, counts || "-"], "stage stage-" + s.status);
      tr.setAttribute("data-stage", s.name);
      stages.appendChild(tr);
    });

    var checks = document.querySelector("#checks tbody");
    checks.innerHTML = "";
    d.checks.forEach(function (c) {
      checks.appendChild(row([c.label, c.threshold_text, c.measured_text, c.ok ? "lolos" : "GAGAL: " + (c.error || "")], c.ok ? "check ok" : "check failed"));
    });
    document.getElementById("checks-empty").hidden = d.checks.length > 0;

    var failed = document.querySelector("#failed tbody");
    failed.innerHTML = "";
    d.failed_pages.forEach(function (p) {
      var what = p.status ? "HTTP " + p.status + (p.error && p.error !== "HTTP " + p.status ? " · " + p.error : "") : (p.error || "-");
      failed.appendChild(row([urlLink(p.url), what, String(p.retries || 0)], "failed-page"));
    });
    document.getElementById("failed-empty").hidden = d.failed_pages.length > 0;

    var changes = document.getElementById("changes");
    changes.innerHTML = "";
    [["added", "Ditambah"], ["changed", "Berubah"], ["removed", "Dihapus"]].forEach(function (kind) {
      var urls = d.changes[kind[0]] || [];
      var h = A.el("h3", "", kind[1] + " (" + A.num(urls.length) + ")");
      changes.appendChild(h);
      if (!urls.length) { changes.appendChild(A.el("p", "hint", "Tidak ada.")); return; }
      var ul = A.el("ul", "urls changes-" + kind[0]);
      urls.forEach(function (u) { var li = A.el("li"); li.appendChild(urlLink(u)); ul.appendChild(li); });
      changes.appendChild(ul);
    });

    var ann = d.announcements || { available: false, items: [] };
    var annBody = document.querySelector("#announcements tbody");
    annBody.innerHTML = "";
    ann.items.forEach(function (a) {
      var n = a.deliveries;
      var link = urlLink(a.url);
      link.textContent = a.title;
      var tr = row([link, a.status_label, A.num(n.sent), A.num(n.skipped), A.num(n.failed)],
                   "announcement announcement-" + a.status);
      tr.setAttribute("data-id", String(a.id));
      annBody.appendChild(tr);
    });
    var annEmpty = document.getElementById("announcements-empty");
    annEmpty.hidden = ann.items.length > 0 && !ann.error;
    A.text(annEmpty, ann.error ? "Gagal memuat pengumuman: " + ann.error
      : !ann.available ? "Pengumuman tidak tersedia di proses ini."
      : "Proses ini tidak menemukan pengumuman.");
    document.querySelector("#announcements").hidden = ann.items.length === 0;

    if (d.run.status === "RUNNING" && !timer) { timer = setInterval(load, 1000); }
    if (d.run.status !== "RUNNING" && timer) { clearInterval(timer); timer = null; }
  }

  function load() {
    A.api(api).then(render).catch(function (e) {
      A.text(document.getElementById("error"), "Gagal memuat proses: " + e.message);
    });
  }

  document.getElementById("back").href = A.link("/admin");
  var q = window.location.search;
  document.getElementById("download").href = api + (q ? q + "&" : "?") + "download=1";
  load();
})();
