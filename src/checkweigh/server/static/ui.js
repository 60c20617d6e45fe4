// Progressive enhancement only: every page works without this file.
// The runs list: the compare button is enabled when exactly two runs are picked.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var form = document.getElementById("compare-form");
  var button = document.getElementById("compare-button");
  if (!form || !button) {
    return;
  }
  var boxes = form.querySelectorAll('input[type="checkbox"][name="pick"]');
  function update() {
    var picked = 0;
    boxes.forEach(function (box) {
      if (box.checked) {
        picked += 1;
      }
    });
    button.disabled = picked !== 2;
    button.title = picked === 2 ? "" : "pick exactly two runs";
  }
  boxes.forEach(function (box) {
    box.addEventListener("change", update);
  });
  update();
});
