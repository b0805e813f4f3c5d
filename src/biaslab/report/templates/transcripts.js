// `biaslab view`: filters and pages over the attempts embedded as JSON (biaslab/report/transcripts.py).
// Every text goes into the page with textContent: an answer is never parsed as HTML.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("data").textContent);
  var rows = D.rows, runs = D.runs, PAGE = D.page_size, FOLD = 600, SHORT = 280;
  var $ = function (id) { return document.getElementById(id); };
  var num = function (n) { return n.toLocaleString("en-US"); };
  var hay = new Array(rows.length);  // each row's searchable text, lower-cased when first searched
  var state = {page: 0, matches: []};

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function counted(values) {  // [[value, count]] by count, then value
    var n = new Map();
    values.forEach(function (v) { n.set(v, (n.get(v) || 0) + 1); });
    return Array.from(n.entries()).sort(function (a, b) { return b[1] - a[1] || String(a[0]).localeCompare(String(b[0])); });
  }

  function fill(id, entries, label, keepOne) {  // entries: [[value, count]]; a filter of one choice is left off
    var s = $(id);
    s.appendChild(el("option", null, "all (" + num(rows.length) + ")")).value = "";
    entries.forEach(function (e) {
      s.appendChild(el("option", null, (label ? label(e[0]) : e[0]) + " (" + num(e[1]) + ")")).value = String(e[0]);
    });
    if (entries.length < (keepOne ? 1 : 2)) s.parentNode.hidden = true;
    s.addEventListener("change", function () { update(true); });
  }

  fill("f-run", runs.map(function (r, k) { return [k, r.n]; }), function (k) {
    return runs[k].label + " \u00b7 " + runs[k].model;
  });
  fill("f-model", counted(rows.map(function (r) { return runs[r.r].model; })));
  fill("f-probe", counted(rows.map(function (r) { return runs[r.r].probe; })));
  fill("f-reading", counted(rows.map(function (r) { return r.d; })));
  fill("f-reason", counted(rows.filter(function (r) { return r.w !== null; }).map(function (r) { return r.w; })), null, true);
  var inGroups = [];
  rows.forEach(function (r) { r.g.forEach(function (g) { inGroups.push(g); }); });
  fill("f-group", counted(inGroups), function (g) { return D.groups[g]; });

  function searchable(k) {
    if (hay[k] === undefined) {
      var r = rows[k], x = r.x || {};
      var parts = [r.i, D.prompts[r.p], r.t, r.e || "", r.w || ""];
      Object.keys(x).forEach(function (f) { parts.push(f + ": " + x[f]); });
      r.g.forEach(function (g) { parts.push(D.groups[g]); });
      hay[k] = parts.join("\n").toLowerCase();
    }
    return hay[k];
  }

  function update(reset) {
    var run = $("f-run").value, model = $("f-model").value, probe = $("f-probe").value;
    var rd = $("f-reading").value, why = $("f-reason").value, grp = $("f-group").value;
    var q = $("f-q").value.trim().toLowerCase(), g = grp === "" ? -1 : Number(grp);
    var out = [];
    for (var k = 0; k < rows.length; k++) {
      var r = rows[k], info = runs[r.r];
      if (run !== "" && String(r.r) !== run) continue;
      if (model !== "" && info.model !== model) continue;
      if (probe !== "" && info.probe !== probe) continue;
      if (rd !== "" && r.d !== rd) continue;
      if (why !== "" && r.w !== why) continue;
      if (g >= 0 && r.g.indexOf(g) < 0) continue;
      if (q && searchable(k).indexOf(q) < 0) continue;
      out.push(k);
    }
    state.matches = out;
    if (reset) state.page = 0;
    show();
  }

  function folded(text) {  // a long text: its start, the whole of it one click away
    var box = el("div", "txt");
    if (text === "") { box.appendChild(el("span", "empty", "(empty)")); return box; }
    if (text.length <= FOLD) { box.textContent = text; return box; }
    var d = el("details"), s = el("summary", null, text.slice(0, SHORT) + "\u2026 (" + text.length + " characters)");
    d.appendChild(s);
    d.addEventListener("toggle", function () {
      if (d.open && d.childNodes.length === 1) d.appendChild(document.createTextNode(text));
      s.textContent = d.open ? "fold (" + text.length + " characters)" : text.slice(0, SHORT) + "\u2026 (" + text.length + " characters)";
    });
    box.appendChild(d);
    return box;
  }

  function card(k) {
    var r = rows[k], info = runs[r.r], a = el("article", "att");
    a.dataset.row = String(k);
    var head = el("div", "head");
    head.appendChild(el("span", "rd" + (r.w !== null ? " undetected" : ""), r.d));
    if (r.w !== null) head.appendChild(el("span", "why", r.w));
    if (r.e !== null) head.appendChild(el("span", "ev", "evaluation " + r.e));
    head.appendChild(el("b", null, info.model));
    head.appendChild(el("span", null, info.probe + (info.label !== info.probe ? " \u00b7 " + info.label : "")));
    head.appendChild(el("span", null, "item " + r.i + (r.n[0] || r.n[1] ? " \u00b7 prompt " + r.n[0] + ", repetition " + r.n[1] : "")));
    r.g.forEach(function (g) { head.appendChild(el("span", "tag", D.groups[g])); });
    a.appendChild(head);
    var texts = el("div", "texts");
    [["prompt", D.prompts[r.p]], ["answer", r.t]].forEach(function (p) {
      var col = el("div");
      col.appendChild(el("h3", null, p[0]));
      col.appendChild(folded(p[1]));
      texts.appendChild(col);
    });
    a.appendChild(texts);
    var keys = Object.keys(r.x || {});
    if (keys.length) {
      var f = el("details", "fields");
      f.appendChild(el("summary", null, "fields (" + keys.length + ")"));
      keys.forEach(function (key) { f.appendChild(el("div", null, key + ": " + r.x[key])); });
      a.appendChild(f);
    }
    return a;
  }

  function pager(nav, pages) {
    nav.textContent = "";
    var first = state.page * PAGE, n = state.matches.length;
    var label = n === 0 ? "No attempt matches (of " + num(rows.length) + ")" :
      "Showing " + num(first + 1) + "\u2013" + num(Math.min(first + PAGE, n)) + " of " + num(n) +
      " matching attempts (of " + num(rows.length) + ")";
    nav.appendChild(el("span", "count", label));
    if (pages < 2) return;
    [["\u2190 previous", -1], ["next \u2192", 1]].forEach(function (b) {
      var btn = el("button", null, b[0]);
      btn.type = "button";
      btn.disabled = state.page + b[1] < 0 || state.page + b[1] >= pages;
      btn.addEventListener("click", function () { state.page += b[1]; show(); $("pager-top").scrollIntoView(); });
      nav.appendChild(btn);
    });
    nav.appendChild(el("span", null, "page " + num(state.page + 1) + " of " + num(pages)));
  }

  function show() {
    var pages = Math.max(1, Math.ceil(state.matches.length / PAGE));
    state.page = Math.min(Math.max(state.page, 0), pages - 1);
    var list = $("list"), frag = document.createDocumentFragment();
    state.matches.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (k) { frag.appendChild(card(k)); });
    list.textContent = "";
    list.appendChild(frag);
    pager($("pager-top"), pages);
    pager($("pager-bottom"), state.matches.length > PAGE ? pages : 0);
    $("pager-bottom").hidden = state.matches.length <= PAGE;
  }

  var timer = null;
  $("f-q").addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { update(true); }, 200);
  });
  $("f-clear").addEventListener("click", function () {
    ["f-run", "f-model", "f-probe", "f-reading", "f-reason", "f-group", "f-q"].forEach(function (id) { $(id).value = ""; });
    update(true);
  });
  update(true);
})();
