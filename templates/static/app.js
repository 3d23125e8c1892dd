// navmcp's one script, and an optional one: every page works without it (forms post and redirect).
// It opens and closes the action dialogs in browsers without the HTML `command` attributes, and
// keeps a dialog's Cancel from submitting anything.
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
