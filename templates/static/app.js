// Light or dark: the device's preference (app.css), unless the person chose otherwise on /whoami;
// the choice is this browser's (localStorage), set on <html> as data-theme.
(function () {
  "use strict";
  var KEY = "navmcp-theme";
  function chosen() { try { return localStorage.getItem(KEY) || ""; } catch (e) { return ""; } }
  function apply(theme) {
    if (theme) document.documentElement.dataset.theme = theme;
    else delete document.documentElement.dataset.theme;
  }
  apply(chosen());
  function offer() {  // the choice on /whoami (again after a live update replaced it)
    var box = document.getElementById("appearance");
    if (!box || !box.hidden) return;
    box.hidden = false;
    Array.prototype.forEach.call(box.querySelectorAll("input[name=theme]"), function (radio) {
      radio.checked = radio.defaultChecked = radio.value === chosen();
      radio.addEventListener("change", function () {
        try { if (radio.value) localStorage.setItem(KEY, radio.value); else localStorage.removeItem(KEY); } catch (e) { /* this page only */ }
        apply(radio.value);
      });
    });
  }
  offer();
  document.addEventListener("navmcp:replaced", offer);
})();

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

// Lists of words (tags, options) as chips. Without JavaScript they are a text area, one per line;
// here the text area is hidden and kept as what the form sends (one per line, so the params are
// the same), and a text input beside the chips adds one on Enter (or on a comma, where a comma can't
// be part of one), each chip with its own Remove button. Focus, labels and hints move to the input.
(function () {
  "use strict";

  function chips(area) {
    if (area.dataset.chipsReady) return;
    area.dataset.chipsReady = "1";
    var commas = area.dataset.chips === "commas";
    var label = document.querySelector('label[for="' + area.id + '"]');
    var name = label ? label.textContent.replace(/\s*\(optional\)\s*$/, "").trim() : area.name;
    var box = document.createElement("div");
    box.className = "chipbox";
    var list = document.createElement("ul");
    list.className = "entries";
    list.setAttribute("aria-label", name);
    var input = document.createElement("input");
    input.type = "text";
    input.autocomplete = "off";
    input.placeholder = commas ? "Type, then Enter or a comma" : "Type, then Enter";
    ["aria-describedby", "aria-invalid", "maxlength"].forEach(function (a) {
      if (area.hasAttribute(a)) input.setAttribute(a, area.getAttribute(a));
    });
    var hint = document.getElementById(area.id + "-hint");
    if (hint) hint.textContent = hint.textContent.replace(/one per line( or separated by commas)?$/,
      commas ? "Enter or a comma after each" : "Enter after each");
    var status = document.createElement("span");
    status.className = "visually-hidden";
    status.setAttribute("role", "status");
    input.id = area.id;
    area.id = area.id + "-lines";
    area.hidden = true;
    box.appendChild(list);
    box.appendChild(input);
    area.parentNode.insertBefore(box, area);
    area.parentNode.insertBefore(status, area.nextSibling);

    function values() {
      return Array.prototype.map.call(list.querySelectorAll(".entry-text"), function (s) { return s.textContent; });
    }
    function sync() {
      var all = values(), typed = input.value.trim();
      if (typed) all.push(typed);
      area.value = all.join("\n");
    }
    function add(text) {
      text = text.trim();
      if (!text || values().indexOf(text) >= 0) return false;
      var li = document.createElement("li");
      li.className = "entry";
      var span = document.createElement("span");
      span.className = "entry-text";
      span.textContent = text;
      var remove = document.createElement("button");
      remove.type = "button";
      remove.className = "remove";
      remove.setAttribute("aria-label", "Remove " + text);
      remove.textContent = "×";
      remove.addEventListener("click", function () {
        var next = li.nextElementSibling && li.nextElementSibling.querySelector("button");
        li.remove();
        sync();
        status.textContent = "Removed " + text;
        (next || input).focus();
      });
      li.appendChild(span);
      li.appendChild(remove);
      list.appendChild(li);
      return true;
    }
    area.value.split(/\r?\n/).forEach(function (line) {
      (commas ? line.split(",") : [line]).forEach(add);
    });
    input.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || (commas && event.key === ",")) {
        event.preventDefault();
        var typed = input.value;
        if (add(typed)) status.textContent = "Added " + typed.trim();
        input.value = "";
        sync();
      } else if (event.key === "Backspace" && !input.value) {
        var last = list.lastElementChild;
        if (last) last.querySelector("button").focus();
      }
    });
    input.addEventListener("input", function () {
      if (commas && input.value.indexOf(",") >= 0) {  // pasted "a, b": each becomes a chip
        var parts = input.value.split(",");
        input.value = parts.pop();
        parts.forEach(add);
      }
      sync();
    });
    box.addEventListener("click", function (event) { if (event.target === box || event.target === list) input.focus(); });
    sync();
  }

  function enhance(root) {
    Array.prototype.forEach.call(root.querySelectorAll("textarea[data-chips]"), chips);
  }
  enhance(document);
  document.addEventListener("navmcp:replaced", function (event) { enhance(event.target); });
})();

// Deadlines in local time: a person who set no time zone on /whoami reads them in the browser's
// (the server wrote UTC); one who set a zone reads the server's text, in theirs (navmcp.clock.zones).
(function () {
  function localize(root) {
    Array.prototype.forEach.call(root.querySelectorAll("time.local:not([data-zone])"), function (el) {
      var moment = new Date(el.getAttribute("datetime"));
      if (isNaN(moment.getTime())) return;
      try {
        el.textContent = moment.toLocaleString([], {weekday: "short", day: "numeric", month: "short", year: "numeric",
                                                     hour: "2-digit", minute: "2-digit", timeZoneName: "short"});
      } catch (e) { /* an old browser: the UTC text stays */ }
    });
  }
  localize(document);
  document.addEventListener("navmcp:replaced", function (event) { localize(event.target); });
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
        var doc = html && new DOMParser().parseFromString(html, "text/html");
        var fresh = doc && doc.getElementById("main");
        if (!fresh) return;
        var badge = doc.querySelector(".inbox-badge");
        if (badge) showUnread(badge.hidden ? 0 : badge.textContent.trim().split(" ")[0]);
        var mark = document.getElementById("live-mark");
        if (mark) mark.remove();
        // the one-time message this page came with ("✓ Joined (1 of 3)") stays while the page is
        // as it was (the page fetched again has none, as it was shown here); once anything else on
        // it changed, the message may be stale ("1 of 3" when 2 have joined): "Updated" replaces it
        var flash = main.querySelector(":scope > .alert.flash");
        if (flash && !fresh.querySelector(":scope > .alert.flash")) {
          fresh.insertBefore(flash.cloneNode(true), fresh.children[Array.prototype.indexOf.call(main.children, flash)] || null);
        }
        var old = Array.prototype.slice.call(main.children), parts = Array.prototype.slice.call(fresh.children);
        var kept = 0, changed = 0;
        if (old.length === parts.length) {
          for (var i = 0; i < parts.length; i++) {
            if (old[i].outerHTML === parts[i].outerHTML) continue;
            changed++;
            if (busy(old[i])) { kept++; continue; }
            old[i].replaceWith(document.importNode(parts[i], true));
          }
          if (changed && flash && flash.isConnected) flash.remove();
        } else if (!busy(main)) {
          main.replaceChildren.apply(main, parts.map(function (p) { return document.importNode(p, true); }));
          var stale = main.querySelector(":scope > .alert.flash");
          if (stale) stale.remove();
        } else {
          kept++;
        }
        main.dispatchEvent(new CustomEvent("navmcp:replaced", { bubbles: true }));
        say(kept ? "Updated just now — reload to see the rest once you are done here" : "Updated just now");
      })
      .catch(function () { /* the next change tries again */ })
      .finally(function () {
        fetching = false;
        if (again) { again = false; refresh(); }
      });
  }

  // The shell's unread badge follows your inbox from every page, on the page's own stream (one
  // stream per tab): its `inbox` events say to read the count again (the inbox page follows itself).
  function showUnread(n) {
    var badge = document.querySelector(".inbox-badge");
    if (!badge) return;
    badge.querySelector(".n").textContent = String(n);
    badge.hidden = !n || n === "0";
  }
  function readUnread() {
    fetch("/inbox.json", { credentials: "same-origin" })
      .then(function (reply) { return reply.ok ? reply.json() : null; })
      .then(function (page) { if (page) showUnread(page.data.unread); })
      .catch(function () { /* the next change tries again */ });
  }


  // EventSource reconnects by itself after a dropped connection, sending the id of the last event it
  // had (the server then says "changed" if anything changed meanwhile). An answer that is no stream
  // (the server restarting, its database away: 503) ends it for good: then a new one is opened after
  // a pause, growing to a minute, and the page is fetched again once it opens.
  var source = null, pause = 1000, leaving = false, ended = false;
  function watch(caughtUp) {
    source = new EventSource(here);
    source.addEventListener("open", function () {
      pause = 1000;
      if (!caughtUp) { caughtUp = true; refresh(); }
    });
    source.addEventListener("changed", refresh);
    source.addEventListener("inbox", readUnread);
    source.addEventListener("gone", function (event) {
      ended = true;
      source.close();
      say(JSON.parse(event.data));
    });
    source.addEventListener("error", function () {
      if (source.readyState !== EventSource.CLOSED || leaving || ended) return;
      setTimeout(function () { if (!leaving) watch(false); }, pause);
      pause = Math.min(pause * 2, 60000);
    });
  }
  watch(true);
  // A form sent from this page leaves it: the change it makes must not refresh the page on its way
  // out, which would take the one-time message meant for the page the form lands on.
  document.addEventListener("submit", function (event) {
    if (!event.defaultPrevented) { leaving = true; source.close(); }
  });
})();

// Keyboard shortcuts: "/" goes to the search box, "g" then "h" home, "?" lists them. None fires
// while a person types (in a field, a text box, anything editable), with Ctrl, Alt or Meta held,
// or while a dialog is open. /help lists them too.
(function () {
  "use strict";
  var SHORTCUTS = [["/", "Search"], ["g h", "Go home"], ["?", "This list of shortcuts"]];
  var g = false;

  function typing(el) {
    return el && (el.isContentEditable || el.matches("input, textarea, select"));
  }

  function list() {
    var dialog = document.getElementById("shortcuts");
    if (!dialog) {
      dialog = document.createElement("dialog");
      dialog.id = "shortcuts";
      dialog.setAttribute("aria-labelledby", "shortcuts-h");
      var box = document.createElement("div");
      box.className = "sheet";
      var h = document.createElement("h2");
      h.id = "shortcuts-h";
      h.textContent = "Keyboard shortcuts";
      var dl = document.createElement("dl");
      dl.className = "keys";
      SHORTCUTS.forEach(function (s) {
        var dt = document.createElement("dt");
        s[0].split(" ").forEach(function (k) { var kbd = document.createElement("kbd"); kbd.textContent = k; dt.appendChild(kbd); });
        var dd = document.createElement("dd");
        dd.textContent = s[1];
        dl.appendChild(dt);
        dl.appendChild(dd);
      });
      var buttons = document.createElement("div");
      buttons.className = "buttons";
      var close = document.createElement("button");
      close.type = "button";
      close.textContent = "Close";
      close.addEventListener("click", function () { dialog.close(); });
      buttons.appendChild(close);
      box.appendChild(h);
      box.appendChild(dl);
      box.appendChild(buttons);
      dialog.appendChild(box);
      document.body.appendChild(dialog);
    }
    if (typeof dialog.showModal === "function") dialog.showModal();
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey || typing(event.target)
        || document.querySelector("dialog[open]:not(.inline)")) { g = false; return; }
    var was = g;
    g = false;
    if (event.key === "/") {
      var search = document.getElementById("shell-q");
      if (search) { event.preventDefault(); search.focus(); search.select(); }
    } else if (event.key === "?") {
      event.preventDefault();
      list();
    } else if (event.key === "g") {
      g = true;
    } else if (event.key === "h" && was) {
      event.preventDefault();
      location.assign("/");
    }
  });
})();

// A new studio's handle is proposed from its name ("Team Ops" → team-ops) until the person types
// a handle of their own.
(function () {
  "use strict";
  function slug(name) {
    return name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
      .replace(/[^a-z0-9]+/g, "-").replace(/^-+/, "").slice(0, 32).replace(/-+$/, "");
  }
  document.addEventListener("input", function (event) {
    var el = event.target;
    if (el.id === "create_studio-handle") { el.dataset.typed = el.value ? "1" : ""; return; }
    if (el.id !== "create_studio-name") return;
    var handle = document.getElementById("create_studio-handle");
    if (handle && !handle.dataset.typed) handle.value = slug(el.value);
  });
})();

// Markdown text boxes: a preview under each, rendered by the server's own renderer (POST /preview,
// navmcp/web/compose.py), so it shows exactly what the page will, written HTML inert; and after an
// "@", the studio's member handles to complete (GET /mentionable), as an accessible listbox: arrows
// move, Enter or Tab takes one, Escape closes it.
(function () {
  "use strict";
  if (!window.fetch) return;
  var studio = (location.pathname.match(/^\/studios\/([a-z0-9][a-z0-9-]*)/) || [])[1] || "";
  var csrf = (document.querySelector('input[name="csrf_token"]') || {}).value || "";
  var count = 0, handles = null;

  function preview(area) {
    if (area.dataset.previewed) return;
    area.dataset.previewed = "1";
    var box = document.createElement("div");
    box.className = "preview";
    box.id = area.id + "-preview";
    box.hidden = true;
    var label = document.createElement("p");
    label.className = "preview-label muted small";
    label.textContent = "Preview";
    label.id = box.id + "-h";
    var body = document.createElement("div");
    body.className = "md";
    box.setAttribute("role", "region");
    box.setAttribute("aria-labelledby", label.id);
    box.appendChild(label);
    box.appendChild(body);
    (area.closest(".chip-box") || area).after(box);
    var timer = null, asked = 0;
    function render() {
      var text = area.value, mine = ++asked;
      if (!text.trim()) { box.hidden = true; body.replaceChildren(); return; }
      var form = new URLSearchParams({ text: text, studio: studio, csrf_token: csrf });
      fetch("/preview", { method: "POST", body: form, credentials: "same-origin" })
        .then(function (reply) { return reply.ok ? reply.text() : null; })
        .then(function (html) {
          if (html === null || mine !== asked) return;
          // the server's renderer, raw HTML off: the same markup the page shows for this text
          var doc = new DOMParser().parseFromString("<div>" + html + "</div>", "text/html");
          body.replaceChildren.apply(body, Array.prototype.map.call(doc.body.firstChild.childNodes,
            function (n) { return document.importNode(n, true); }));
          box.hidden = false;
        })
        .catch(function () { /* the next keystroke tries again */ });
    }
    area.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(render, 250); });
    if (area.value.trim()) render();
  }

  function complete(area) {
    if (!studio || area.dataset.completes) return;
    area.dataset.completes = "1";
    var list = document.createElement("ul");
    list.className = "mention-list";
    list.id = area.id + "-mentions";
    list.setAttribute("role", "listbox");
    list.setAttribute("aria-label", "Members to mention");
    list.hidden = true;
    // A text box may not be aria-expanded (it is no combobox): a status line says the list opened.
    var status = document.createElement("span");
    status.className = "vh";
    status.setAttribute("role", "status");
    area.after(list);
    list.after(status);
    area.setAttribute("aria-autocomplete", "list");
    area.setAttribute("aria-controls", list.id);
    var active = -1, start = -1;

    function options() { return list.querySelectorAll("[role=option]"); }
    function close() {
      list.hidden = true;
      list.replaceChildren();
      status.textContent = "";
      area.removeAttribute("aria-activedescendant");
      active = -1;
    }
    function mark(i) {
      var all = options();
      if (!all.length) return;
      active = (i + all.length) % all.length;
      Array.prototype.forEach.call(all, function (o, j) { o.setAttribute("aria-selected", j === active ? "true" : "false"); });
      area.setAttribute("aria-activedescendant", all[active].id);
    }
    function take(handle) {
      var end = area.selectionStart;
      area.value = area.value.slice(0, start) + "@" + handle + " " + area.value.slice(end);
      var caret = start + handle.length + 2;
      area.setSelectionRange(caret, caret);
      close();
      area.dispatchEvent(new Event("input", { bubbles: true }));
      area.focus();
    }
    function show(word) {
      var found = handles.filter(function (h) { return h.indexOf(word) === 0; }).slice(0, 8);
      if (!found.length) { close(); return; }
      list.replaceChildren.apply(list, found.map(function (h, i) {
        var o = document.createElement("li");
        o.id = list.id + "-" + (++count);
        o.setAttribute("role", "option");
        o.textContent = "@" + h;
        o.addEventListener("mousedown", function (event) { event.preventDefault(); take(h); });
        return o;
      }));
      list.hidden = false;
      status.textContent = found.length + (found.length === 1 ? " member" : " members") +
        " to mention: up and down arrows to choose, Enter to take, Escape to close";
      mark(0);
    }
    area.addEventListener("input", function () {
      var before = area.value.slice(0, area.selectionStart), m = before.match(/(^|[^\w@])@([a-z0-9-]{0,32})$/);
      if (!m) { close(); return; }
      start = before.length - m[2].length - 1;
      if (handles) { show(m[2]); return; }
      fetch("/mentionable?studio=" + encodeURIComponent(studio), { credentials: "same-origin" })
        .then(function (reply) { return reply.ok ? reply.json() : { handles: [] }; })
        .then(function (data) { handles = data.handles || []; show(m[2]); })
        .catch(function () { handles = []; });
    });
    area.addEventListener("keydown", function (event) {
      if (list.hidden) return;
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        mark(active + (event.key === "ArrowDown" ? 1 : -1));
      } else if (event.key === "Enter" || event.key === "Tab") {
        event.preventDefault();
        take(options()[active].textContent.slice(1));
      } else if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();  // the box's dialog stays open
        close();
      }
    });
    area.addEventListener("blur", close);
  }

  function enhance(root) {
    Array.prototype.forEach.call(root.querySelectorAll("textarea[data-markdown]"), function (area) {
      preview(area);
      complete(area);
    });
  }
  enhance(document);
  document.addEventListener("navmcp:replaced", function (event) { enhance(event.target); });
})();
