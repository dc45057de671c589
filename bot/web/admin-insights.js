"use strict";
// The admin page's insights: the unanswered-question report (with a period filter), 👍/👎 per week, the answers
// with the most 👎, and the admin answers (write from a cluster, edit, expire, delete). Uses window.Admin.
(function () {
  var A = window.Admin;
  var byId = function (id) { return document.getElementById(id); };
  var CHANNELS = { web: "web", telegram: "Telegram", whatsapp: "WhatsApp" };
  var zone = null;  // TIMEZONE, from the report

  function channels(map) {
    return Object.keys(map || {}).map(function (k) { return (CHANNELS[k] || k) + " " + map[k]; }).join(", ");
  }

  function fillForm(question, answer) {
    byId("answer-id").value = answer ? String(answer.id) : "";
    byId("answer-question").value = question || "";
    byId("answer-text").value = answer ? answer.answer : "";
    byId("answer-link").value = answer ? answer.link : "";
    byId("answer-expires").value = answer ? answer.expires : "";
    byId("answer-save").textContent = answer ? "Simpan perubahan (#" + answer.id + ")" : "Simpan jawaban";
    byId("answer-status").textContent = "";
    byId("answer-form").scrollIntoView({ block: "start" });
    byId(answer ? "answer-text" : "answer-text").focus();
  }

  function renderClusters(report) {
    var list = byId("clusters");
    list.innerHTML = "";
    var clusters = report.clusters || [];
    byId("report-summary").textContent = clusters.length
      ? A.num(report.questions) + " pertanyaan dalam " + A.num(clusters.length) + " kelompok."
      : "Tidak ada pertanyaan yang belum terjawab pada periode ini.";
    clusters.forEach(function (c) {
      var li = A.el("li", "cluster" + (c.admin_answer ? " covered" : ""));
      li.setAttribute("data-count", String(c.count));
      li.appendChild(A.el("div", "rep", c.representative));
      var reasons = [];
      if (c.refused) { reasons.push(A.num(c.refused) + " tidak terjawab"); }
      if (c.thumbs_down) { reasons.push(A.num(c.thumbs_down) + " tidak disukai"); }
      li.appendChild(A.el("p", "meta", A.num(c.count) + " kali · " + channels(c.channels) + " · " + reasons.join(", ")
        + " · terakhir " + A.time(c.last_seen, zone)));
      if (c.examples && c.examples.length > 1) {
        var ul = A.el("ul");
        c.examples.forEach(function (q) { ul.appendChild(A.el("li", "", q)); });
        li.appendChild(ul);
      }
      (c.answers_given || []).forEach(function (given) {
        li.appendChild(A.el("p", "meta", "Jawaban bot yang tidak disukai: " + given));
      });
      if (c.admin_answer) {
        li.appendChild(A.el("p", "meta", "Sudah dijawab admin (#" + c.admin_answer + ")."));
      } else {
        var button = A.el("button", "small answer-cluster", "Jawab");
        button.type = "button";
        button.addEventListener("click", function () { fillForm(c.representative, null); });
        li.appendChild(button);
      }
      list.appendChild(li);
    });
  }

  function renderWeeks(weeks) {
    var body = byId("weeks");
    body.innerHTML = "";
    (weeks || []).forEach(function (w) {
      var tr = A.el("tr");
      [w.week, A.num(w.up), A.num(w.down), w.up_rate === null ? "-" : A.num(100 * w.up_rate) + "%"]
        .forEach(function (v) { tr.appendChild(A.el("td", "", v)); });
      body.appendChild(tr);
    });
  }

  function renderWorst(worst) {
    var list = byId("worst");
    list.innerHTML = "";
    byId("worst-empty").hidden = (worst || []).length > 0;
    (worst || []).forEach(function (w) {
      var li = A.el("li");
      li.appendChild(A.el("div", "", w.answer));
      li.appendChild(A.el("p", "hint", A.num(w.down) + " tidak suka · " + A.num(w.up) + " suka · contoh pertanyaan: " + w.question));
      list.appendChild(li);
    });
  }

  function renderAnswers(answers) {
    var body = byId("answers");
    body.innerHTML = "";
    var labels = ["#", "Pertanyaan", "Jawaban", "Berlaku sampai", "Ditulis"];
    (answers || []).forEach(function (a) {
      var tr = A.el("tr", a.active ? "answer" : "answer expired");
      tr.setAttribute("data-id", String(a.id));
      [a.id + " (v" + a.version + ")", a.question, a.answer + (a.link ? " — " + a.link : ""),
       a.expires ? a.expires + (a.active ? "" : " (kedaluwarsa)") : "tanpa batas", a.author + ", " + A.time(a.created_at, zone)
      ].forEach(function (v, i) {
        var td = A.el("td", "", v);
        td.setAttribute("data-label", labels[i]);
        tr.appendChild(td);
      });
      var actions = A.el("td");
      actions.setAttribute("data-label", "Aksi");
      var edit = A.el("button", "small secondary edit", "Ubah");
      edit.type = "button";
      edit.addEventListener("click", function () { fillForm(a.question, a); });
      var del = A.el("button", "small secondary delete", "Hapus");
      del.type = "button";
      del.addEventListener("click", function () {
        if (!window.confirm("Hapus jawaban admin #" + a.id + "?")) { return; }
        A.api("/admin/api/answers/" + a.id + "/delete", { method: "POST" })
          .then(function () { byId("answer-status").textContent = "Jawaban #" + a.id + " dihapus."; load(); })
          .catch(function (e) { byId("answer-status").textContent = "Gagal menghapus: " + e.message; });
      });
      actions.appendChild(edit);
      actions.appendChild(del);
      tr.appendChild(actions);
      body.appendChild(tr);
    });
  }

  function load() {
    var period = byId("period").value;
    return A.api("/admin/api/insights?since=" + encodeURIComponent(period)).then(function (d) {
      zone = d.timezone || null;
      renderClusters(d.report || {});
      renderWeeks(d.weeks);
      renderWorst(d.worst);
      renderAnswers(d.answers);
      document.body.setAttribute("data-insights", "loaded");
    }).catch(function (e) { byId("report-summary").textContent = "Laporan tidak dapat dimuat: " + e.message; });
  }

  byId("period").addEventListener("change", load);
  byId("answer-form").addEventListener("reset", function () {
    byId("answer-id").value = "";
    byId("answer-save").textContent = "Simpan jawaban";
  });
  byId("answer-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var id = byId("answer-id").value;
    var body = { question: byId("answer-question").value, answer: byId("answer-text").value,
                 link: byId("answer-link").value, expires: byId("answer-expires").value };
    if (id) { body.id = parseInt(id, 10); }
    var button = byId("answer-save");
    button.disabled = true;
    byId("answer-status").textContent = "Menyimpan dan memperbarui indeks…";
    A.api("/admin/api/answers", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
      .then(function (d) {
        byId("answer-form").reset();
        byId("answer-status").textContent = "Jawaban #" + d.answer.id + " (versi " + d.answer.version + ") tersimpan"
          + (d.indexed === false ? "; bot memakainya setelah pembaruan indeks yang sedang berjalan selesai."
                                 : " dan langsung dipakai bot.");
        return load();
      })
      .catch(function (e) { byId("answer-status").textContent = "Gagal menyimpan: " + e.message; })
      .then(function () { button.disabled = false; });
  });
  load();
})();
