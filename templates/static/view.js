// The view inside a chat (MCP Apps, navmcp/mcp/views.py): JSON-RPC with the host over postMessage.
// It shows the page a navigate result carries (its HTML in `_meta`, the embed layout) and makes it
// work through the host: navmcp links navigate in place (tools/call navigate), other links ask the
// host to open them (ui/open-link), a form runs its action (tools/call execute_action, always with
// the page's url), then the page is navigated again and the model told what the person did
// (ui/update-model-context). It fetches nothing itself; what the server sent is inserted as it is
// (escaped there; no script in it runs).
(function () {
  "use strict";
  var PROTOCOL = "2026-01-26";
  var body = document.body;
  var HTML_META = body.dataset.htmlMeta;
  var BROWSER_ONLY = (body.dataset.browserOnly || "").split(",");
  var PUBLIC = body.dataset.public || "";
  var view = document.getElementById("view");
  var status = document.getElementById("view-status");
  var back = document.getElementById("view-back");
  var more = document.getElementById("view-more");
  var full = document.getElementById("view-full");
  var open = document.getElementById("view-open");
  var host = window.parent;
  var nextId = 1;
  var pending = {};
  var here = null;   // the page shown: its navmcp URL
  var trail = [];    // the pages navigated from, for Back
  var modes = [];    // display modes the host offers
  var mode = "inline";

  // --- JSON-RPC over postMessage -------------------------------------------------------------
  function send(message) { host.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*"); }
  function request(method, params) {
    var id = nextId++;
    send({ id: id, method: method, params: params || {} });
    return new Promise(function (resolve, reject) { pending[id] = { resolve: resolve, reject: reject }; });
  }
  function notify(method, params) { send({ method: method, params: params || {} }); }

  var handlers = {
    "ui/notifications/tool-input": function (params) {
      var url = params && params.arguments && params.arguments.url;
      if (typeof url === "string" && here === null) here = url;
    },
    "ui/notifications/tool-result": function (params) { show(params, false); },
    "ui/notifications/tool-cancelled": function () { say("The call was cancelled."); },
    "ui/notifications/host-context-changed": function (params) { context(params); },
    "ui/resource-teardown": function () { return {}; },
    "ping": function () { return {}; }
  };

  window.addEventListener("message", function (event) {
    if (event.source !== host) return;
    var m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.method === undefined) {  // a response to one of ours
      var p = pending[m.id];
      if (!p) return;
      delete pending[m.id];
      if (m.error) p.reject(m.error); else p.resolve(m.result);
      return;
    }
    var handler = handlers[m.method];
    if (m.id === undefined || m.id === null) { if (handler) handler(m.params || {}); return; }
    if (!handler) { send({ id: m.id, error: { code: -32601, message: "Method not found: " + m.method } }); return; }
    send({ id: m.id, result: handler(m.params || {}) || {} });
  });

  // --- the host's context: theme, variables, fonts, display modes --------------------------------
  // The host's standard variables that stand for navmcp's own (app.css keeps navmcp's as fallbacks).
  var VARIABLES = {
    "--panel": "--color-background-primary", "--soft": "--color-background-secondary",
    "--ink": "--color-text-primary", "--muted": "--color-text-secondary",
    "--line": "--color-border-primary", "--radius": "--border-radius-md"
  };
  function context(ctx) {
    if (!ctx) return;
    var root = document.documentElement;
    if (ctx.theme === "light" || ctx.theme === "dark") root.dataset.theme = ctx.theme;
    var vars = ctx.styles && ctx.styles.variables;
    if (vars) {
      Object.keys(vars).forEach(function (name) {
        if (/^--[a-z0-9-]+$/.test(name) && typeof vars[name] === "string") root.style.setProperty(name, vars[name]);
      });
      Object.keys(VARIABLES).forEach(function (own) {
        if (typeof vars[VARIABLES[own]] === "string") root.style.setProperty(own, "var(" + VARIABLES[own] + ")");
      });
    }
    var fonts = ctx.styles && ctx.styles.css && ctx.styles.css.fonts;
    if (typeof fonts === "string" && !document.getElementById("host-fonts")) {
      var style = document.createElement("style");
      style.id = "host-fonts";
      style.textContent = fonts;
      document.head.appendChild(style);
    }
    if (Array.isArray(ctx.availableDisplayModes)) modes = ctx.availableDisplayModes;
    if (ctx.displayMode) mode = ctx.displayMode;
    full.hidden = modes.indexOf("fullscreen") < 0;
    full.textContent = mode === "fullscreen" ? "Leave full screen" : "Full screen";
  }

  // --- showing a page ----------------------------------------------------------------------------
  function say(text) { status.textContent = text; }

  function show(result, moved) {
    var html = result && result._meta && result._meta[HTML_META];
    var text = result && result.content && result.content[0] && result.content[0].text;
    var structured = result && result.structuredContent;
    if (typeof html === "string") {
      view.innerHTML = html;
      var embed = view.querySelector(".embed");
      if (embed) here = embed.dataset.url;
    } else {  // no page HTML (an error, or a host that drops _meta): the text, inert
      view.textContent = "";
      var pre = document.createElement("pre");
      pre.className = "view-text";
      pre.textContent = text || "";
      view.appendChild(pre);
      if (structured && structured.url) here = structured.url;
    }
    back.hidden = trail.length === 0;
    open.hidden = !here;
    more.hidden = !view.querySelector(".embed-body");
    if (moved) { var h1 = view.querySelector("h1"); if (h1) { h1.tabIndex = -1; h1.focus(); } }
    size();
  }

  function call(name, args) {
    return request("tools/call", { name: name, arguments: args, _meta: { "io.github.navmcp/view": true } });
  }

  function go(url, remember) {
    say("Opening " + url + "…");
    return call("navigate", { url: url }).then(function (result) {
      if (remember && here && here !== url) trail.push(here);
      show(result, true);
      say(result.isError ? "Not opened." : "");
    }, function (error) { say("Not opened: " + (error && error.message || "the host refused")); });
  }

  function absolute(path) { return PUBLIC ? PUBLIC + path : ""; }

  function openOutside(url) {
    return request("ui/open-link", { url: url }).catch(function () { say("The host did not open " + url); });
  }

  function openInNavmcp(path) {
    var url = absolute(path);
    if (url) openOutside(url);
    else say("Open " + path + " in navmcp in your browser.");
  }

  // A link's target: a navmcp page (its path and query), or null for anything else.
  function inside(href) {
    if (!href || href.charAt(0) === "#") return null;
    var base = new URL(here || "/", "https://navmcp.invalid");
    var url;
    try { url = new URL(href, base); } catch (e) { return null; }
    if (url.origin === base.origin) return url.pathname + url.search;
    if (PUBLIC && (url.origin === new URL(PUBLIC).origin)) return url.pathname + url.search;
    return null;
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a[href]");
    if (link) {
      var href = link.getAttribute("href");
      if (href.charAt(0) === "#") return;
      event.preventDefault();
      var path = inside(href);
      if (link.dataset.browserOnly) openInNavmcp(path || here);
      else if (path) go(path, true);
      else openOutside(link.href);
      return;
    }
    var button = event.target.closest && event.target.closest("button");
    if (!button) return;
    if (button === back) { var previous = trail.pop(); if (previous) go(previous, false); return; }
    if (button === more) {
      var compact = view.classList.toggle("compact");
      more.textContent = compact ? "Show the whole page" : "Show less";
      more.setAttribute("aria-expanded", compact ? "false" : "true");
      size();
      return;
    }
    if (button === full) {
      request("ui/request-display-mode", { mode: mode === "fullscreen" ? "inline" : "fullscreen" })
        .then(function (result) { context({ displayMode: result && result.mode }); }, function () {});
      return;
    }
    if (button === open) { openInNavmcp(here); return; }
    if (button.hasAttribute("commandfor") && !("commandForElement" in HTMLButtonElement.prototype)) {
      var dialog = document.getElementById(button.getAttribute("commandfor"));  // the dialogs, where `command` is unknown
      if (dialog && button.getAttribute("command") === "show-modal") dialog.showModal();
      else if (dialog && button.getAttribute("command") === "close") dialog.close();
      return;
    }
    if (button.type === "submit" && button.form) { event.preventDefault(); submit(button.form, button); }
  });

  // Enter in a one-line input sends its form, as a browser would (a sandbox without allow-forms
  // never fires `submit`, so the view sends it itself).
  document.addEventListener("keydown", function (event) {
    var input = event.target;
    if (event.key !== "Enter" || !input.form || input.tagName !== "INPUT" || input.closest(".chips")) return;
    event.preventDefault();
    submit(input.form);
  });
  document.addEventListener("submit", function (event) { event.preventDefault(); submit(event.target); });

  // --- forms to params: the conventions navmcp.web.forms.params_from_form reads ---------------------
  function actionOf(form) {
    var match = /\/actions\/([a-z_]+)$/.exec(form.getAttribute("action") || "");
    return match ? match[1] : null;
  }

  // `submitter`: the button that sent the form, whose name and value it sends (e.g. "Accept all").
  function params(form, action, submitter) {
    var out = {};
    var data = {};
    var kinds = {};
    var edit = action.indexOf("edit_") === 0;
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || el.disabled || el.name === "csrf_token" || /\.was$/.test(el.name)) return;
      if (el.tagName === "BUTTON" && el !== submitter) return;
      if ((el.type === "checkbox" || el.type === "radio") && !el.checked) {
        if (el.type === "checkbox" && el.name.indexOf(".") < 0) kinds[el.name] = "boolean";
        return;
      }
      (data[el.name] = data[el.name] || []).push(el.value);
      if (el.type === "checkbox" && el.name.indexOf(".") < 0) kinds[el.name] = "boolean";
      else if (el.type === "number") kinds[el.name] = "integer";
      else if (el.type === "date" || (kinds[el.name] === "date")) kinds[el.name] = "date";
      else if (el.tagName === "TEXTAREA" && el.dataset.chips) kinds[el.name] = el.dataset.chips;
      else if (!kinds[el.name]) kinds[el.name] = "text";
      // an edit form's field still as it was filled (it has a NAME.was beside it) is left out
      var was = form.querySelector("input[name='" + CSS.escape(el.name + ".was") + "']");
      if (edit && was && el.value === el.defaultValue) kinds[el.name] = "unchanged";
    });
    var ballots = {};
    Object.keys(kinds).concat(Object.keys(data)).forEach(function (name) {
      if (name in out) return;
      var values = data[name] || [];
      var dot = name.indexOf(".");
      if (dot >= 0) { ballots[name.slice(0, dot)] = true; return; }
      var kind = kinds[name];
      var value = values[0] || "";
      if (kind === "boolean") out[name] = values.length > 0 && ["", "0", "false", "off"].indexOf(value) < 0;
      else if (kind === "lines" || kind === "commas") {
        var items = values.join("\n").split(kind === "commas" ? /[\n,]/ : /\n/)
          .map(function (s) { return s.trim(); }).filter(Boolean);
        if (items.length || edit) out[name] = items;
      } else if (kind === "date") {
        var words = values.filter(function (v) { return !/^\d{4}-\d{2}-\d{2}$/.test(v) && v.trim(); });
        var picked = values.filter(function (v) { return /^\d{4}-\d{2}-\d{2}$/.test(v); });
        if (words.length || picked.length) out[name] = (words[0] || picked[0]).trim();
      } else if (kind === "unchanged" || value.trim() === "") return;
      else if (kind === "integer" && /^-?\d+$/.test(value.trim())) out[name] = parseInt(value.trim(), 10);
      else out[name] = value.replace(/\r\n/g, "\n");
    });
    Object.keys(ballots).forEach(function (name) {
      var options = data[name + ".option"] || [];
      var flags = {};
      Array.prototype.forEach.call(form.querySelectorAll("input[type=checkbox]"), function (el) {
        var m = el.name.slice(0, name.length + 1) === name + "." ? el.name.slice(name.length + 1) : null;
        if (m && m.indexOf(".") < 0 && m !== "all") flags[m] = data[el.name] || [];
      });
      if ((data[name + ".all"] || [])[0] === "accept") flags.accept = options.slice();
      var unvoted = data[name + ".unvoted"] || [];
      var list = [];
      options.forEach(function (option) {
        var ballot = { option: option };
        var any = false;
        Object.keys(flags).forEach(function (f) { ballot[f] = flags[f].indexOf(option) >= 0; any = any || ballot[f]; });
        var skip = false;
        Object.keys(data).forEach(function (key) {  // a ballot's other fields: NAME.FIELD.OPTION
          var parts = key.split(".");
          if (parts.length === 3 && parts[0] === name && parts[2] === option) {
            var v = (data[key][0] || "").trim();
            if (v === "" || v === "0") skip = true;
            ballot[parts[1]] = /^\d+$/.test(v) ? parseInt(v, 10) : v;
          }
        });
        // a row marked unvoted counts once something of it is ticked; a form with no checkboxes
        // (edit_decision's renames, whose every row is marked so) keeps each row given a value
        var ticks = Object.keys(flags).length > 0;
        if (!skip && (!ticks || unvoted.indexOf(option) < 0 || any)) list.push(ballot);
      });
      if (list.length) out[name] = list;
    });
    return out;
  }

  function refusal(form, text) {
    var box = form.querySelector(".view-refusal");
    if (!box) {
      box = document.createElement("div");
      box.className = "alert error view-refusal";
      box.setAttribute("role", "alert");
      form.insertBefore(box, form.firstChild);
    }
    box.textContent = text;
  }

  function submit(form, submitter) {
    var action = actionOf(form);
    if (!action || !here) return;
    if (BROWSER_ONLY.indexOf(action) >= 0) { openInNavmcp(here); return; }
    var url = here;
    var args = { action: action, params: params(form, action, submitter), url: url };
    Array.prototype.forEach.call(form.querySelectorAll("button"), function (b) { b.disabled = true; });
    say("Working…");
    call("execute_action", args).then(function (result) {
      var outcome = (result && result.structuredContent) || {};
      if (result.isError) {
        Array.prototype.forEach.call(form.querySelectorAll("button"), function (b) { b.disabled = false; });
        var text = (outcome.message || (result.content && result.content[0] && result.content[0].text) || "Not done.")
          .replace(/\s*Available here: [^\n]*$/, "");
        refusal(form, "Not done: " + text);
        say("Not done.");
        return;
      }
      var dialog = form.closest("dialog");
      if (dialog && dialog.open && typeof dialog.close === "function") dialog.close();
      var target = outcome.url || url;
      request("ui/update-model-context", {
        content: [{ type: "text", text: "In the navmcp view of " + url + " the person ran " + action + " (" +
                   JSON.stringify(args.params) + "): " + (outcome.message || "done") +
                   ". The page is now " + target + "; navigate to it again before acting on it." }]
      }).catch(function () {});
      return go(target, target !== url).then(function () { say("Done: " + (outcome.message || action)); });
    }, function (error) {
      Array.prototype.forEach.call(form.querySelectorAll("button"), function (b) { b.disabled = false; });
      refusal(form, "Not sent: " + (error && error.message || "the host refused the call"));
    });
  }

  window.navmcpView = { params: params };  // for the parity check with params_from_form (tests)

  // --- size: the host follows the content's height ----------------------------------------------
  var last = "";
  function size() {
    var height = Math.ceil(document.documentElement.scrollHeight);
    var width = Math.ceil(document.documentElement.scrollWidth);
    var key = width + "x" + height;
    if (key === last) return;
    last = key;
    notify("ui/notifications/size-changed", { width: width, height: height });
  }
  if (window.ResizeObserver) new ResizeObserver(size).observe(document.body);

  // --- the handshake ------------------------------------------------------------------------------
  request("ui/initialize", {
    appInfo: { name: "navmcp", version: body.dataset.version || "" },
    appCapabilities: { availableDisplayModes: ["inline", "fullscreen"] },
    protocolVersion: PROTOCOL
  }).then(function (result) {
    context(result && result.hostContext);
    notify("ui/notifications/initialized", {});
    size();
  }, function (error) { say("The host did not start this view: " + (error && error.message)); });
})();
