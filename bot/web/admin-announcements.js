"use strict";
// "Pengumuman baru" on the admin page (issue 32): pending announcements with send / edit summary / discard, and the
// delivery counts of the ones sent. Uses window.Admin (session cookie + CSRF token).
(function () {
  var A = window.Admin;
  var byId = function (id) { return document.getElementById(id); };
  var STATUS = { pending: "menunggu", sent: "terkirim", discarded: "dibuang" };

  function say(message) { byId("announce-status").textContent = message; }

  function act(item, action, body) {
    var opts = { method: "POST" };
    if (body) { opts.headers = { "Content-Type": "application/json" }; opts.body = JSON.stringify(body); }
    return A.api("/admin/api/announcements/" + item.id + "/" + action, opts);
  }

  function button(label, cls, onClick) {
    var b = A.el("button", cls, label);
    b.type = "button";
    b.addEventListener("click", onClick);
    return b;
  }

  function render(items, message) {
    var list = byId("announcements");
    list.innerHTML = "";
    var waiting = items.filter(function (a) { return a.status === "pending"; }).length;
    var summary = items.length ? A.num(waiting) + " pengumuman menunggu." : "Belum ada pengumuman baru.";
    say(message ? message + " " + summary : summary);
    items.forEach(function (a) {
      var li = A.el("li", "announcement " + a.status);
      li.setAttribute("data-id", String(a.id));
      var title = A.el("a", "title", a.title);
      title.href = a.url; title.target = "_blank"; title.rel = "noopener";
      li.appendChild(title);
      li.appendChild(A.el("p", "meta", a.date + " · " + (STATUS[a.status] || a.status)));
      var summary = A.el("p", "summary", a.summary);
      li.appendChild(summary);
      if (a.status === "pending") {
        var edit = A.el("textarea", "summary-edit");
        edit.value = a.summary; edit.rows = 3; edit.maxLength = 1000; edit.hidden = true;
        edit.setAttribute("aria-label", "Ringkasan pengumuman");
        li.appendChild(edit);
        var row = A.el("div", "actions");
        row.appendChild(button("Kirim", "send", function () {
          act(a, "send").then(function (r) {
            load("Terkirim: " + A.num(r.sent || 0) + ", dilewati: " + A.num(r.skipped || 0) + ", gagal: " + A.num(r.failed || 0) + ".");
          }).catch(function (e) { say("Gagal mengirim: " + e.message); });
        }));
        row.appendChild(button("Ubah ringkasan", "edit", function () {
          if (edit.hidden) { edit.hidden = false; edit.focus(); return; }
          act(a, "summary", { summary: edit.value }).then(function () { load("Ringkasan disimpan."); })
            .catch(function (e) { say("Ringkasan tidak dapat disimpan: " + e.message); });
        }));
        row.appendChild(button("Buang", "discard", function () {
          act(a, "discard").then(function () { load("Pengumuman dibuang."); })
            .catch(function (e) { say("Gagal membuang: " + e.message); });
        }));
        li.appendChild(row);
      } else if (a.status === "sent") {
        var d = a.deliveries || {};
        li.appendChild(A.el("p", "counts", "Terkirim " + A.num(d.sent || 0) + " · dilewati " + A.num(d.skipped || 0) + " · gagal " + A.num(d.failed || 0)));
      }
      list.appendChild(li);
    });
  }

  function load(message) {
    return A.api("/admin/api/announcements").then(function (d) { render(d.announcements || [], message); })
      .catch(function (e) { say("Pengumuman tidak dapat dimuat: " + e.message); });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { load(); });
  } else {
    load();
  }
})();
