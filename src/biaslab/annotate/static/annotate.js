/* biaslab annotate: keyboard shortcuts and checks for the annotation form.
   Served as a static file: the Content-Security-Policy allows no inline script. */
(function () {
  "use strict";
  var form = document.getElementById("annotate-form");
  if (!form) { return; }
  var best = Array.prototype.slice.call(form.querySelectorAll('input[name="best"]'));
  var worst = Array.prototype.slice.call(form.querySelectorAll('input[name="worst"]'));
  var rows = Array.prototype.slice.call(form.querySelectorAll(".item-row"));
  var sameError = document.getElementById("same-error");
  var feedback = document.getElementById("feedback");
  var skip = document.getElementById("skip");
  var undo = document.getElementById("undo-skip");
  var sending = false;
  var BEST_KEYS = ["Digit1", "Digit2", "Digit3", "Digit4", "Digit5", "Digit6"];
  var NUMPAD_KEYS = ["Numpad1", "Numpad2", "Numpad3", "Numpad4", "Numpad5", "Numpad6"];
  var WORST_KEYS = ["KeyQ", "KeyW", "KeyE", "KeyR", "KeyT", "KeyY"];

  function checkedIndex(list) {
    for (var i = 0; i < list.length; i++) { if (list[i].checked) { return i; } }
    return -1;
  }

  function paint() {
    var b = checkedIndex(best), w = checkedIndex(worst);
    rows.forEach(function (row, i) {
      row.classList.toggle("is-best", i === b);
      row.classList.toggle("is-worst", i === w);
    });
    sameError.classList.add("hidden");
  }

  /* Choosing a text for one question clears it from the other: one text cannot be both. */
  function choose(list, other, index) {
    if (index < 0 || index >= list.length) { return; }
    list[index].checked = true;
    if (other[index].checked) { other[index].checked = false; }
    paint();
  }

  best.forEach(function (input, i) {
    input.addEventListener("change", function () { choose(best, worst, i); });
  });
  worst.forEach(function (input, i) {
    input.addEventListener("change", function () { choose(worst, best, i); });
  });

  form.addEventListener("submit", function (event) {
    var submitter = event.submitter;
    if (submitter && (submitter.id === "skip" || submitter.id === "undo-skip")) { sending = true; return; }
    var b = checkedIndex(best), w = checkedIndex(worst);
    if (b < 0 || w < 0 || b === w || sending) {
      event.preventDefault();
      if (b >= 0 && b === w) { sameError.classList.remove("hidden"); }
      return;
    }
    sending = true;   /* a second Enter does not post twice (the server would ignore it anyway) */
  });

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.altKey || event.metaKey) { return; }
    var target = event.target;
    if (target === feedback || (target && target.tagName === "INPUT" && target.type === "text")) { return; }
    var i = BEST_KEYS.indexOf(event.code);
    if (i < 0) { i = NUMPAD_KEYS.indexOf(event.code); }
    if (i >= 0) { event.preventDefault(); choose(best, worst, i); return; }
    i = WORST_KEYS.indexOf(event.code);
    if (i >= 0) { event.preventDefault(); choose(worst, best, i); return; }
    if (event.code === "KeyS") { event.preventDefault(); skip.click(); return; }
    if (event.code === "KeyU" && undo) { event.preventDefault(); undo.click(); return; }
    if (event.key === "Enter" && !(target && target.tagName === "BUTTON")) {
      event.preventDefault();
      if (form.requestSubmit) { form.requestSubmit(document.getElementById("submit")); } else { form.submit(); }
    }
  });

  paint();
  form.setAttribute("data-keys", "ready");  /* the shortcuts are bound (tests wait for it) */
}());
