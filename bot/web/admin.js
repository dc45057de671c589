"use strict";
(function () {
  // the session is an HttpOnly cookie (set by /admin/login); a state-changing request carries the page's CSRF token
  var holder = document.querySelector("[data-csrf]");
  var headers = holder ? { "X-CSRF-Token": holder.getAttribute("data-csrf") } : {};

  function text(el, value) { el.textContent = value === undefined || value === null ? "-" : String(value); }

  function logLines(run) {
    var lines = run.log || run.logs || run.log_lines || run.lines || [];
    if (typeof lines === "string") { return lines; }
    return lines.map(function (l) { return typeof l === "string" ? l : JSON.stringify(l); }).join("\n");
  }

  function render(data) {
    var dl = document.getElementById("index");
    dl.innerHTML = "";
    var index = data.index || {};
    Object.keys(index).forEach(function (k) {
      var dt = document.createElement("dt"); text(dt, k);
      var v = index[k];
      var dd = document.createElement("dd"); text(dd, typeof v === "object" && v !== null ? JSON.stringify(v) : v);
      dl.appendChild(dt); dl.appendChild(dd);
    });
    var fb = data.feedback || {};
    text(document.getElementById("feedback"), "👍 " + (fb.up || 0) + "   👎 " + (fb.down || 0));
    var body = document.getElementById("runs");
    body.innerHTML = "";
    (data.runs || []).forEach(function (run) {
      var tr = document.createElement("tr");
      tr.className = "run";
      [run.run_id || run.id, run.status, run.started_at, run.ended_at || run.finished_at].forEach(function (v) {
        var td = document.createElement("td"); text(td, v); tr.appendChild(td);
      });
      var td = document.createElement("td");
      var pre = document.createElement("pre");
      pre.textContent = logLines(run);
      td.appendChild(pre); tr.appendChild(td);
      body.appendChild(tr);
    });
  }

  function load() {
    fetch("/admin/api/status", { headers: headers }).then(function (r) {
      return r.json().then(function (d) { if (!r.ok) { throw new Error(d.error || r.status); } return d; });
    }).then(render).catch(function (e) {
      text(document.getElementById("error"), "Gagal memuat status: " + e.message);
    });
  }

  document.getElementById("reindex").addEventListener("click", function () {
    var out = document.getElementById("reindex-status");
    out.textContent = "Memulai…";
    fetch("/admin/api/reindex", { method: "POST", headers: headers }).then(function (r) {
      return r.json().then(function (d) {
        out.textContent = r.ok ? "Pembaruan indeks dimulai. " + (d.detail || "") : "Gagal: " + (d.error || r.status);
        setTimeout(load, 1000);
      });
    }).catch(function (e) { out.textContent = "Gagal: " + e.message; });
  });
  load();
})();
