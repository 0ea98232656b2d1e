// The portal's copy buttons. Every page works without this script: the
// values are in read-only fields, selectable by hand. Where the clipboard
// can be written, each field's button appears and copies it, and the page's
// live region says whether that worked.
(function () {
  "use strict";

  var status = document.getElementById("copy-status");

  function say(text) {
    if (status) {
      status.textContent = text;
    }
  }

  // A read-only field selects its whole value when focused, for copying
  // with the keyboard.
  document.querySelectorAll("input[readonly]").forEach(function (field) {
    field.addEventListener("focus", function () {
      field.select();
    });
  });

  if (!navigator.clipboard || !window.isSecureContext) {
    return;
  }
  document.querySelectorAll("button.copy[data-copy]").forEach(function (button) {
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) {
      return;
    }
    var label = button.getAttribute("data-label") || "the value";
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(field.value).then(function () {
        say("Copied " + label + ".");
      }, function () {
        field.focus();
        say("Could not copy " + label + ": it is selected, copy it with the keyboard.");
      });
    });
  });
})();
