/* psc_jit's report, in the browser: choosing a kernel (its box in a drawing, its row in the
   table), a line or a search highlights what belongs together, without a round trip to the
   kernel (which may be busy, or gone: a saved notebook works the same). The page's data
   (`script.psc-data`, from selection.page_data) says, for each kernel, line and equation,
   which kernels, equation nodes and lines go with it. */
(function (root) {
  if (!root || root.dataset.pscReady) { return; }
  root.dataset.pscReady = "1";
  var data = JSON.parse(root.querySelector("script.psc-data").textContent);
  var $ = function (selector) { return root.querySelector(selector); };
  var $$ = function (selector) { return Array.prototype.slice.call(root.querySelectorAll(selector)); };

  function union(parts, text) {
    var chosen = { kernels: {}, nodes: {}, lines: {}, text: text };
    parts.forEach(function (part) {
      (part.kernels || []).forEach(function (k) { chosen.kernels[k] = true; });
      (part.nodes || []).forEach(function (n) { chosen.nodes[n] = true; });
      (part.lines || []).forEach(function (l) { chosen.lines[l] = true; });
    });
    return chosen;
  }

  function plural(count, noun) { return count + " " + noun + (count === 1 ? "" : "s"); }

  function describe(chosen) {
    var lines = Object.keys(chosen.lines).map(Number).sort(function (a, b) { return a - b; });
    var counts = plural(Object.keys(chosen.nodes).length, "equation") + ", " +
      plural(Object.keys(chosen.kernels).length, "kernel") + ", " +
      (lines.length === 1 ? "line " : "lines ") + (lines.join(", ") || "none");
    return chosen.text ? chosen.text + ": " + counts : counts;
  }

  function nodeId(g) {
    var title = g.querySelector(":scope > title");
    return title ? title.textContent : "";
  }

  function show(chosen) {
    var any = chosen && (Object.keys(chosen.kernels).length || Object.keys(chosen.nodes).length ||
                         Object.keys(chosen.lines).length);
    root.classList.toggle("psc-has-hl", !!any);
    $$("svg g.psc-kernel").forEach(function (g) {
      g.classList.toggle("psc_hl", !!any && !!chosen.kernels[g.dataset.pscKernel]);
    });
    $$("svg g.node.psc-eq").forEach(function (g) {
      g.classList.toggle("psc_hl", !!any && !!chosen.nodes[nodeId(g)]);
    });
    $$("tr.psc-krow").forEach(function (row) {
      row.classList.toggle("psc_hl", !!any && !!chosen.kernels[row.dataset.kernel]);
    });
    $$("tr.psc-line").forEach(function (row) {
      row.classList.toggle("psc_hl", !!any && !!chosen.lines[row.dataset.line]);
    });
    var status = $(".psc-status");
    if (status) {
      status.innerHTML = "";
      var span = document.createElement("span");
      if (any) { span.className = "psc-chosen"; span.textContent = describe(chosen); }
      else { span.className = "psc-dim"; span.textContent = status.dataset.hint || ""; }
      status.appendChild(span);
    }
  }

  function chooseKernel(index) {
    var kernel = data.kernels[index];
    if (kernel) { show(union([kernel], "kernel " + kernel.name)); }
  }
  function chooseLine(line) {
    var found = data.lines[line];
    show(union([found || { lines: [Number(line)] }], "line " + line));
  }
  function chooseNode(id) {
    var found = data.nodes[id];
    if (found) { show(union([found], found.label)); }
  }
  function search(query) {
    var text = query.trim();
    if (!text) { show(null); return; }
    var line = /^\s*(?:line\s*)?(\d+)\s*$/i.exec(text);
    if (line) { chooseLine(line[1]); return; }
    var needle = text.toLowerCase(), parts = [];
    Object.keys(data.nodes).forEach(function (id) {
      var label = data.nodes[id].label.toLowerCase();
      if (label.indexOf(needle) >= 0 || label.split(":")[0] === needle) { parts.push(data.nodes[id]); }
    });
    data.kernels.forEach(function (kernel) {
      if (kernel.words.some(function (w) { return w.toLowerCase().indexOf(needle) >= 0; })) { parts.push(kernel); }
    });
    show(union(parts, "search '" + text + "'"));
  }

  /* clicks: a kernel's box, an equation's node, a table row, a line */
  root.addEventListener("click", function (event) {
    var target = event.target;
    var box = target.closest("g.psc-kernel");
    if (box && root.contains(box)) { event.preventDefault(); chooseKernel(box.dataset.pscKernel); return; }
    var eq = target.closest("g.node.psc-eq");
    if (eq && root.contains(eq)) { event.preventDefault(); chooseNode(nodeId(eq)); return; }
    var row = target.closest("tr.psc-krow");
    if (row && root.contains(row)) { chooseKernel(row.dataset.kernel); return; }
    var line = target.closest("tr.psc-line");
    if (line && root.contains(line)) { chooseLine(line.dataset.line); return; }
    var button = target.closest("button[data-psc]");
    if (button && root.contains(button)) { act(button); }
  });

  /* each kernel's box knows its index (its class psc-k<i>) and its time (in its tooltip) */
  $$("svg g.psc-kernel").forEach(function (g) {
    var match = /(?:^|\s)psc-k(\d+)(?:\s|$)/.exec(g.getAttribute("class") || "");
    if (!match) { return; }
    g.dataset.pscKernel = match[1];
    var kernel = data.kernels[Number(match[1])], link = g.querySelector("a");
    if (kernel && kernel.time && link) {
      var name = "http://www.w3.org/1999/xlink";
      link.setAttributeNS(name, "xlink:title", kernel.time + "\n" + (link.getAttributeNS(name, "title") || ""));
    }
  });

  function setPressed(group, button) {
    $$('button[data-psc="' + group + '"]').forEach(function (b) {
      b.setAttribute("aria-pressed", b === button ? "true" : "false");
    });
  }

  function act(button) {
    var what = button.dataset.psc, value = button.dataset.value;
    if (what === "view") {
      setPressed(what, button);
      $$(".psc-graph").forEach(function (pane) {
        var kind = pane.dataset.view;
        pane.hidden = !(value === "both" ? kind !== "none" : kind === value);
      });
      steps();
    } else if (what === "colour") {
      setPressed(what, button);
      root.classList.toggle("psc-colour-time", value === "time");
      root.classList.toggle("psc-colour-kernel", value !== "time");
    } else if (what === "zoom") {
      zoom(value);
    } else if (what === "sort") {
      setPressed(what, button);
      sortRows(value);
    } else if (what === "export") {
      exportAs(value);
    }
  }

  function steps() {
    var box = $("input.psc-steps"), hide = !box || box.checked;
    $$('.psc-graph[data-view="graph"] .psc-drawing').forEach(function (drawing) {
      drawing.hidden = (drawing.dataset.steps === "hidden") !== hide;
    });
  }
  var stepsBox = $("input.psc-steps");
  if (stepsBox) { stepsBox.addEventListener("change", steps); }

  var scale = null;                                  /* null: fit the pane's width */
  function zoom(how) {
    if (how === "fit") { scale = null; }
    else if (how === "in") { scale = (scale || 1) * 1.25; }
    else if (how === "out") { scale = (scale || 1) / 1.25; }
    else { scale = 1; }
    $$(".psc-graph svg").forEach(function (svg) {
      var width = parseFloat(svg.dataset.width || svg.getAttribute("width")) || 0;
      svg.dataset.width = svg.dataset.width || String(width);
      if (scale === null) { svg.style.width = "100%"; svg.style.maxWidth = width + "pt"; svg.style.height = "auto"; }
      else { svg.style.width = (width * scale) + "pt"; svg.style.maxWidth = "none"; svg.style.height = "auto"; }
    });
    var label = $(".psc-zoom-level");
    if (label) { label.textContent = scale === null ? "fit" : Math.round(scale * 100) + "%"; }
  }

  function sortRows(key) {
    var body = $("table.psc-kernel-table tbody");
    if (!body) { return; }
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) { return Number(b.dataset[key]) - Number(a.dataset[key]); });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  function download(name, type, text) {
    var link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([text], { type: type }));
    link.download = name;
    document.body.appendChild(link);
    link.click();
    setTimeout(function () { URL.revokeObjectURL(link.href); link.remove(); }, 1000);
  }

  function exportAs(kind) {
    var name = (data.name || "report").replace(/[^\w.-]+/g, "_");
    if (kind === "html") {
      var copy = root.cloneNode(true);
      delete copy.dataset.pscReady;
      download(name + ".html", "text/html",
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + name +
        "</title></head><body>" + copy.outerHTML + "</body></html>\n");
      return;
    }
    var svg = $(".psc-graph:not([hidden]) .psc-drawing:not([hidden]) svg");
    if (!svg) { return; }
    var clone = svg.cloneNode(true);
    clone.setAttribute("xmlns", "http://www.w3.org/2000/svg");
    var style = document.createElementNS("http://www.w3.org/2000/svg", "style");
    style.textContent = data.svg_style || "";
    clone.insertBefore(style, clone.firstChild);
    download(name + ".svg", "image/svg+xml", clone.outerHTML);
  }

  var searchBox = $("input.psc-search");
  if (searchBox) {
    searchBox.addEventListener("input", function () { search(searchBox.value); });
  }
  zoom("fit");
  steps();
  show(null);
})(document.currentScript && document.currentScript.closest(".psc-report"));
