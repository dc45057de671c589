"use strict";
// Shared by the admin page and the run page: authenticated requests and Indonesian formatting.
window.Admin = (function () {
  var query = window.location.search || "";

  // every admin request goes through here (one place to change when the authentication changes): the session is
  // an HttpOnly cookie (set by /admin/login), a state-changing request carries the page's CSRF token, and a lost
  // session goes back to the login form
  function api(path, options) {
    var opts = options || {};
    var method = (opts.method || "GET").toUpperCase();
    var holder = document.querySelector("[data-csrf]");
    var extra = method !== "GET" && holder ? { "X-CSRF-Token": holder.getAttribute("data-csrf") } : {};
    opts.headers = Object.assign({}, extra, opts.headers || {});
    opts.credentials = "same-origin";
    return fetch(path, opts).then(function (r) {
      if (r.status === 401) { window.location.assign("/admin/login"); }
      return r.json().catch(function () { return {}; }).then(function (d) {
        if (!r.ok) { throw new Error(d.error || ("HTTP " + r.status)); }
        return d;
      });
    });
  }

  // a link to another admin page that keeps the query (the token, while the admin page uses one)
  function link(path) { return path + query; }

  function text(el, value) { el.textContent = value === undefined || value === null || value === "" ? "-" : String(value); }

  function num(value, digits) {
    return new Intl.NumberFormat("id-ID", { maximumFractionDigits: digits || 0, minimumFractionDigits: digits || 0 }).format(value);
  }

  function duration(seconds) {
    if (seconds === null || seconds === undefined) { return "-"; }
    if (seconds < 60) { return num(seconds, 1) + " s"; }
    var m = Math.round(seconds) / 60 | 0, s = Math.round(seconds) % 60;
    if (m < 60) { return m + " mnt " + s + " dtk"; }
    return (m / 60 | 0) + " j " + (m % 60) + " mnt";
  }

  function time(iso, zone) {
    if (!iso) { return "-"; }
    var d = new Date(iso);
    if (isNaN(d.getTime())) { return String(iso); }
    var opts = { day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false, timeZoneName: "short" };
    if (zone) { opts.timeZone = zone; }
    try { return new Intl.DateTimeFormat("id-ID", opts).format(d); } catch (e) { return d.toISOString(); }
  }

  function el(tag, cls, value) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (value !== undefined) { text(node, value); }
    return node;
  }

  return { api: api, link: link, text: text, num: num, duration: duration, time: time, el: el };
})();
