"use strict";
(function () {
  var form = document.getElementById("ask");
  var input = document.getElementById("message");
  var send = document.getElementById("send");
  var log = document.getElementById("log");
  var status = document.getElementById("status");
  var key = "prodibot-session";
  var session = null;
  try { session = window.localStorage.getItem(key); } catch (e) { session = null; }
  if (!session || !/^[A-Za-z0-9_-]{1,64}$/.test(session)) {
    session = "web-" + Math.random().toString(36).slice(2) + Date.now().toString(36);
    try { window.localStorage.setItem(key, session); } catch (e) { /* private mode */ }
  }

  function safeUrl(url) {
    try {
      var u = new URL(url, window.location.href);
      return (u.protocol === "http:" || u.protocol === "https:") ? u.href : null;
    } catch (e) { return null; }
  }

  function feedbackButtons(div, feedbackId) {
    var wrap = document.createElement("div");
    wrap.className = "feedback";
    var note = document.createElement("span");
    note.setAttribute("role", "status");
    [["up", "👍", "Jawaban membantu"], ["down", "👎", "Jawaban kurang membantu"]].forEach(function (b) {
      var btn = document.createElement("button");
      btn.type = "button";
      btn.className = "vote";
      btn.textContent = b[1];
      btn.setAttribute("aria-label", b[2]);
      btn.addEventListener("click", function () {
        wrap.querySelectorAll("button").forEach(function (x) { x.disabled = true; });
        fetch("/api/feedback", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ session_id: session, feedback_id: feedbackId, value: b[0] })
        }).then(function (r) { return r.json(); }).then(function (d) {
          note.textContent = d.reply || d.error || "";
        }).catch(function () { note.textContent = "Umpan balik gagal dikirim."; });
      });
      wrap.appendChild(btn);
    });
    wrap.appendChild(note);
    div.appendChild(wrap);
  }

  // an ask-back's candidates: one button (chip) each; a click sends the chip's text as the next message, exactly as
  // typing it and pressing send would, and disables the chips (so do a typed message and a later ask-back)
  function choiceChips(div, choices) {
    var wrap = document.createElement("div");
    wrap.className = "choices";
    wrap.setAttribute("role", "group");
    wrap.setAttribute("aria-label", "Pilih salah satu");
    choices.forEach(function (choice) {
      if (typeof choice !== "string" || !choice) { return; }
      var btn = document.createElement("button");
      btn.type = "button";
      btn.className = "chip";
      btn.textContent = choice;
      btn.addEventListener("click", function () {
        if (send.disabled) { return; }
        btn.setAttribute("aria-pressed", "true");
        ask(choice);
      });
      wrap.appendChild(btn);
    });
    div.appendChild(wrap);
  }

  function disableChoices() {
    log.querySelectorAll(".choices button").forEach(function (b) { b.disabled = true; });
  }

  // text with the first occurrence of each highlight (the reader's answer span) in <strong>, built as DOM nodes
  // (never innerHTML: the text is the page's and the student's, not markup)
  function fill(p, text, highlights) {
    var marks = [];
    (highlights || []).forEach(function (h) {
      var at = h ? text.indexOf(h) : -1;
      if (at < 0) { return; }
      var clash = marks.some(function (m) { return m[0] < at + h.length && at < m[1]; });
      if (!clash) { marks.push([at, at + h.length]); }
    });
    marks.sort(function (a, b) { return a[0] - b[0]; });
    var pos = 0;
    marks.forEach(function (m) {
      p.appendChild(document.createTextNode(text.slice(pos, m[0])));
      var strong = document.createElement("strong");
      strong.textContent = text.slice(m[0], m[1]);
      p.appendChild(strong);
      pos = m[1];
    });
    p.appendChild(document.createTextNode(text.slice(pos)));
  }

  function add(role, text, sources, isError, feedbackId, highlights, choices) {
    var div = document.createElement("div");
    div.className = "msg " + role + (isError ? " error" : "");
    var p = document.createElement("p");
    p.style.margin = "0";
    fill(p, text, highlights);
    div.appendChild(p);
    if (sources && sources.length) {
      var label = document.createElement("p");
      label.style.margin = ".5rem 0 0";
      label.textContent = "Sumber:";
      div.appendChild(label);
      var list = document.createElement("ol");
      list.className = "sources";
      sources.forEach(function (s) {
        var href = safeUrl(s.url);
        if (!href) { return; }
        var li = document.createElement("li");
        var a = document.createElement("a");
        a.href = href;
        a.target = "_blank";
        a.rel = "noopener noreferrer";
        a.textContent = s.title || s.url;
        li.appendChild(a);
        list.appendChild(li);
      });
      div.appendChild(list);
    }
    if (feedbackId) { feedbackButtons(div, feedbackId); }
    if (choices && choices.length) { choiceChips(div, choices); }
    log.appendChild(div);
    div.scrollIntoView({ block: "end" });
  }

  function ask(text) {
    disableChoices();
    add("user", text);
    send.disabled = true;
    input.setAttribute("aria-busy", "true");
    status.textContent = "Sedang mencari jawaban…";
    fetch("/api/chat", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ message: text, session_id: session })
    }).then(function (r) {
      return r.json().then(function (data) { return { ok: r.ok, data: data }; });
    }).then(function (res) {
      if (!res.ok) {
        add("bot", res.data.reply || res.data.error || "Mohon maaf, terjadi kendala. Silakan coba lagi.", null, true);
      } else {
        add("bot", res.data.reply || res.data.answer || "", res.data.sources || [], false, res.data.feedback_id,
            res.data.highlights || [], res.data.choices || []);
      }
    }).catch(function () {
      add("bot", "Mohon maaf, server tidak dapat dihubungi. Silakan coba lagi.", null, true);
    }).finally(function () {
      send.disabled = false;
      input.removeAttribute("aria-busy");
      status.textContent = "";
      input.focus();
    });
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var text = input.value.trim();
    if (!text || send.disabled) { return; }
    input.value = "";
    ask(text);
  });
  input.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter" && !ev.shiftKey) {
      ev.preventDefault();
      form.requestSubmit();
    }
  });
})();
