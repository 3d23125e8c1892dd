// navmcp's one script, and an optional one: every page works without it (forms post and redirect).
// It opens and closes the action dialogs in browsers without the HTML `command` attributes, keeps
// a dialog's Cancel from submitting anything, and keeps an open page up to date (below).
(function () {
  "use strict";
  var native = "commandForElement" in HTMLButtonElement.prototype;
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button[commandfor]");
    if (!button || native) return;
    var dialog = document.getElementById(button.getAttribute("commandfor"));
    if (!dialog || typeof dialog.showModal !== "function") return;
    var command = button.getAttribute("command");
    if (command === "show-modal") { event.preventDefault(); dialog.showModal(); }
    else if (command === "close") { event.preventDefault(); dialog.close(); }
  });
})();

// Live pages: an open page follows its facts. The page's own URL, asked for as an event stream,
// says "changed" when they change (another person, an agent); the page is fetched again and each
// part of it that holds nothing the person is working on (typing, a ticked box, an open dialog,
// focus) is replaced in place. Without JavaScript, or without EventSource, it is an ordinary page.
(function () {
  "use strict";
  var main = document.getElementById("main");
  if (!main || !window.EventSource || !window.fetch || !window.DOMParser || document.body.dataset.live !== "on") return;
  var here = location.pathname + location.search;

  function busy(el) {
    var active = document.activeElement;
    if (active && active !== document.body && el.contains(active) && active.matches("input, textarea, select")) return true;
    if (el.querySelector("dialog[open]")) return true;
    var fields = el.querySelectorAll("input, textarea, select");
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if (f.type === "checkbox" || f.type === "radio") {
        if (f.checked !== f.defaultChecked) return true;
      } else if (f.tagName === "SELECT") {
        for (var j = 0; j < f.options.length; j++) if (f.options[j].selected !== f.options[j].defaultSelected) return true;
      } else if (f.type !== "hidden" && f.value !== f.defaultValue) {
        return true;
      }
    }
    return false;
  }

  function say(text) {
    var mark = document.getElementById("live-mark");
    if (!mark) {
      mark = document.createElement("p");
      mark.id = "live-mark";
      mark.className = "live-mark muted small";
      mark.setAttribute("role", "status");
      main.insertBefore(mark, main.firstChild);
    }
    mark.textContent = text;
  }

  var fetching = false, again = false;
  function refresh() {
    if (fetching) { again = true; return; }
    fetching = true;
    fetch(here, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then(function (reply) { return reply.ok ? reply.text() : null; })
      .then(function (html) {
        var fresh = html && new DOMParser().parseFromString(html, "text/html").getElementById("main");
        if (!fresh) return;
        var mark = document.getElementById("live-mark");
        if (mark) mark.remove();
        var old = Array.prototype.slice.call(main.children), parts = Array.prototype.slice.call(fresh.children);
        var kept = 0;
        if (old.length === parts.length) {
          for (var i = 0; i < parts.length; i++) {
            if (old[i].outerHTML === parts[i].outerHTML) continue;
            if (busy(old[i])) { kept++; continue; }
            old[i].replaceWith(document.importNode(parts[i], true));
          }
        } else if (!busy(main)) {
          main.replaceChildren.apply(main, parts.map(function (p) { return document.importNode(p, true); }));
        } else {
          kept++;
        }
        say(kept ? "Updated just now — reload to see the rest once you are done here" : "Updated just now");
      })
      .catch(function () { /* the next change tries again */ })
      .finally(function () {
        fetching = false;
        if (again) { again = false; refresh(); }
      });
  }

  var source = new EventSource(here);
  source.addEventListener("changed", refresh);
  source.addEventListener("gone", function (event) {
    source.close();
    say(JSON.parse(event.data));
  });
})();
