// The report's explorer: draws the sections' results (the JSON document #ml-data) with
// Plotly and redraws every chart when a control changes.  Names from the data reach the
// page as text only: textContent in the DOM, and entity-escaped on their one way into
// Plotly (draw), whose own pseudo-HTML would otherwise read "<a href>" in a category
// level as a live link.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("ml-data").textContent);
  var state = {feature: D.features.length ? D.features[0] : null,
               output: D.explained === null ? 0 : D.explained, row: 0, pair: null,
               node: 0};
  // no mode bar: its buttons sat on the titles; dragging still zooms, a double click resets
  var CONFIG = {displaylogo: false, responsive: true, displayModeBar: false};
  var BLUE = "#2b5da8", GREY = "rgba(91,100,115,0.25)", RED = "#c0392b";

  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  // The one way strings reach Plotly (see draw): every string of a trace's data and
  // labels and of the layout's texts and ticks is entity-escaped, so that Plotly, which
  // reads <a href>, <span style>, <br>, <b> ... in any label, shows them as text.  Our
  // own hover templates are left alone; names reach them through meta (%{meta[0]}).
  var TRACE_TEXT = ["x", "y", "z", "text", "hovertext", "name", "meta", "labels",
                    "customdata", "ids"];
  var LAYOUT_TEXT = ["text", "ticktext", "tickvals", "categoryarray", "title", "name"];
  function escAll(v) {
    if (typeof v === "string") return esc(v);
    if (Array.isArray(v)) return v.map(escAll);
    return v;
  }
  function traceText(t) {
    var out = {};
    for (var k in t) out[k] = TRACE_TEXT.indexOf(k) >= 0 ? escAll(t[k]) : t[k];
    return out;
  }
  function layoutText(v, key) {
    if (typeof v === "string") return LAYOUT_TEXT.indexOf(key) >= 0 ? esc(v) : v;
    if (Array.isArray(v)) {
      return v.map(function (x) { return layoutText(x, LAYOUT_TEXT.indexOf(key) >= 0 ? key : ""); });
    }
    if (v && typeof v === "object") {
      var out = {};
      for (var k in v) out[k] = layoutText(v[k], k);
      return out;
    }
    return v;
  }
  function $(sel) { return document.querySelector(sel); }
  function chart(name) { return $('[data-ml-chart="' + name + '"]'); }
  function fmt(v) {
    if (v === null || v === undefined) return "n/a";
    if (typeof v !== "number") return String(v);
    return Number(v.toPrecision(4)).toString();
  }
  function layout(title, extra) {
    var base = {title: {text: title, font: {size: 13}, x: 0, xanchor: "left"},
                margin: {l: 55, r: 10, t: 36, b: 45}, height: 300, autosize: true,
                font: {size: 11}, showlegend: false, hovermode: "closest"};
    for (var k in extra) base[k] = extra[k];
    return base;
  }
  function axis(text, more) {
    var a = {title: {text: text}, automargin: true};
    for (var k in more) a[k] = more[k];
    return a;
  }
  // what a chart shows, for readers of the DOM (tests, screen readers)
  function mark(el, what, label) {
    ["feature", "class", "row", "pair", "region"].forEach(function (k) {
      if (what[k] === undefined) el.removeAttribute("data-ml-" + k);
      else el.setAttribute("data-ml-" + k, String(what[k]));
    });
    el.setAttribute("aria-label", label);
    var cap = el.parentNode.querySelector("figcaption");
    if (cap) cap.textContent = label;
  }
  function table(el, columns, rows) {
    var box = el.parentNode.querySelector(".ml-numbers");
    if (!box) return;
    if (!rows.length) { box.replaceChildren(); return; }
    var t = document.createElement("table"), head = t.createTHead().insertRow();
    columns.forEach(function (c) {
      var th = document.createElement("th"); th.scope = "col"; th.textContent = c;
      head.appendChild(th);
    });
    var body = t.createTBody();
    rows.forEach(function (r) {
      var tr = body.insertRow();
      r.forEach(function (c) { tr.insertCell().textContent = fmt(c); });
    });
    box.replaceChildren(t);
  }
  function note(el, text) {
    var box = el.parentNode.querySelector(".ml-note");
    if (box) { box.textContent = text || ""; box.hidden = !text; }
  }
  function draw(el, traces, lay) {
    return Plotly.react(el, traces.map(traceText), layoutText(lay, ""), CONFIG);
  }
  function empty(el, text) {
    Plotly.purge(el);
    el.replaceChildren();
    var p = document.createElement("p"); p.className = "note"; p.textContent = text;
    el.appendChild(p);
  }

  var R = D.rows;
  var outName = function () { return D.outputs[state.output]; };
  // a result of every output (by_output) gives the chosen class's part, else its one part
  function pick(list, byOutput) { return list[byOutput ? state.output : 0]; }
  // the name of the output a chart of a section of one output shows
  function shownOut(byOutput) {
    return byOutput || D.explained === null ? outName() : D.outputs[D.explained];
  }
  // a chart whose section computed one output only says so when another class is chosen
  // (every section computes every class today; a page of an older report may not)
  function oneOutputNote() {
    if (D.outputs.length < 2 || D.explained === state.output) return "";
    return "Computed for " + (D.explained === null ? "one output" : D.outputs[D.explained]) +
      " only (the output the report's sections of one output explain), not for " +
      D.outputs[state.output] + ".";
  }
  function rowLabel(i) {
    var p = R.positions[i], why = R.drawn.indexOf(p) >= 0 ? " (drawn in the report)" : "";
    return "row " + p + why;
  }

  // ------------------------------------------------------------------ effects
  function drawPD() {
    var el = chart("pd");
    if (!el) return;
    var f = state.feature, E = D.effects[f];
    if (!E) { empty(el, "No effects in this report."); return; }
    var cat = E.kind === "categorical", traces = [], k = state.output;
    var mode = cat ? "markers+lines" : "lines";
    if (E.ice) {
      // every ICE curve in one trace, split by gaps: one SVG path, not one trace per row
      // (drawing fifty traces took most of the page's start); customdata names each
      // point's row for the hover and the click
      var xs = [], ys = [], rows = [], chosenCurve = null, chosenPos = R ? R.positions[state.row] : null;
      E.ice[k].forEach(function (curve, i) {
        var pos = D.ice_rows[i];
        if (pos === chosenPos) chosenCurve = curve;
        for (var g = 0; g < curve.length; g++) { xs.push(E.pd.x[g]); ys.push(curve[g]); rows.push(pos); }
        xs.push(null); ys.push(null); rows.push(null);
      });
      traces.push({x: xs, y: ys, type: "scatter", mode: mode, name: "ICE",
                   line: {color: GREY, width: 1}, marker: {size: 4}, customdata: rows,
                   connectgaps: false, hovertemplate: "row %{customdata}: %{y}<extra></extra>"});
      if (chosenCurve) {
        traces.push({x: E.pd.x, y: chosenCurve, type: "scatter", mode: mode,
                     name: "row " + chosenPos, line: {color: RED, width: 2.5}, marker: {size: 5},
                     customdata: E.pd.x.map(function () { return chosenPos; }),
                     hovertemplate: "row " + chosenPos + ": %{y}<extra></extra>"});
      }
    }
    traces.push({x: E.pd.x, y: E.pd.y[k], type: "scatter", mode: mode, name: "PD",
                 line: {color: BLUE, width: 3}, hovertemplate: "PD: %{y}<extra></extra>"});
    draw(el, traces, layout("PD of " + f + (E.ice ? " with ICE curves" : ""),
                            {xaxis: axis(f, cat ? {type: "category"} : {}),
                             yaxis: axis(outName())}));
    mark(el, {feature: f, "class": outName()},
         "Partial dependence of " + outName() + " on " + f + ": from " + fmt(Math.min.apply(null, E.pd.y[k])) +
         " to " + fmt(Math.max.apply(null, E.pd.y[k])) + (E.ice ? ", with " + E.ice[k].length +
         " ICE curves (hover one to see its row, click to choose it)" : "") + ".");
    table(el, [f, "PD"].concat(E.ale ? [] : []),
          E.pd.x.map(function (x, i) { return [x, E.pd.y[k][i]]; }));
  }

  function drawALE() {
    var el = chart("ale");
    if (!el) return;
    var f = state.feature, E = D.effects[f];
    if (!E || !E.ale) {
      empty(el, "ALE was not computed for " + f + " (see the effects section below).");
      mark(el, {feature: f, "class": outName()}, "No ALE for " + f + ".");
      return;
    }
    var A = E.ale, k = state.output, cat = E.kind === "categorical", traces = [];
    if (A.lo[k]) {
      traces.push({x: A.x, y: A.hi[k], type: "scatter", mode: "lines", line: {width: 0},
                   hoverinfo: "skip"});
      traces.push({x: A.x, y: A.lo[k], type: "scatter", mode: "lines", line: {width: 0},
                   fill: "tonexty", fillcolor: "rgba(43,93,168,0.2)", hoverinfo: "skip",
                   name: A.band});
    }
    traces.push({x: A.x, y: A.y[k], type: "scatter", mode: cat ? "markers+lines" : "lines",
                 line: {color: BLUE, width: 2.5}, name: "ALE",
                 hovertemplate: "ALE: %{y}<extra></extra>"});
    draw(el, traces, layout("ALE of " + f + (A.band ? " and its band" : ""),
                            {xaxis: axis(f, cat ? {type: "category"} : {}),
                             yaxis: axis("ALE of " + outName())}));
    mark(el, {feature: f, "class": outName()},
         "Accumulated local effect of " + f + " on " + outName() + (A.band ? ", with its " + A.band : "") + ".");
    table(el, [f, "ALE", "lower", "upper"], A.x.map(function (x, i) {
      return [x, A.y[k][i], A.lo[k] ? A.lo[k][i] : null, A.hi[k] ? A.hi[k][i] : null];
    }));
  }

  // ------------------------------------------------------------- attributions
  // the Shapley values of the chosen class where the report computed every class, else
  // those of the one explained output
  function S() {
    var B = R.by_output;
    if (B) return {shap: B.shap[state.output], base: B.base[state.output],
                   prediction: B.prediction[state.output], output: D.outputs[state.output],
                   follows: true};
    return {shap: R.shap, base: R.base, prediction: R.prediction, output: R.output,
            follows: false};
  }
  function shapNote() { return R.by_output ? "" : oneOutputNote(); }
  function shapOf(i, j) { return S().shap[i][j]; }

  // the rows beyond the explained ones that TreeSHAP explained for the scatter charts:
  // feature j's values (labels of a categorical one) and the chosen class's Shapley values
  var M = R ? R.scatter : null;
  function more(j) {
    if (!M) return {x: [], numbers: [], shap: [], rows: []};
    var labels = M.labels[String(j)];
    return {x: labels || M.numbers[j], numbers: M.numbers[j],
            shap: pick(M.shap, M.by_output)[j], rows: M.positions};
  }
  function drawDependence() {
    var el = chart("dependence");
    if (!el || !R) return;
    var f = state.feature, j = R.features.indexOf(f);
    if (j < 0) { empty(el, "No Shapley values for " + f + "."); return; }
    var cat = R.kinds[j] === "categorical";
    var xs = R.positions.map(function (_, i) { return cat ? R.values[i][j] : R.numbers[i][j]; });
    var ys = R.positions.map(function (_, i) { return shapOf(i, j); });
    var sel = state.row, extra = more(j), traces = [];
    if (extra.rows.length) {
      // underneath, and deaf to the mouse: a click always finds an explained row
      traces.push({x: extra.x, y: extra.shap, type: "scatter", mode: "markers",
                   name: "sampled rows", customdata: extra.rows, hoverinfo: "skip",
                   marker: {color: "rgba(43,93,168,0.35)", size: 5}});
    }
    traces.push({x: xs, y: ys, type: "scatter", mode: "markers", customdata: R.positions,
                 name: "explained rows",
                 marker: {color: R.positions.map(function (_, i) { return i === sel ? RED : BLUE; }),
                          size: R.positions.map(function (_, i) { return i === sel ? 12 : 7; }),
                          line: {color: "white", width: 0.5}},
                 hovertemplate: "row %{customdata}: %{y}<extra></extra>"});
    draw(el, traces, layout("Shapley values of " + f,
                            {xaxis: axis(f, cat ? {type: "category"} : {}),
                             yaxis: axis("Shapley value of " + f + " (" + S().output + ")")}));
    var n = R.positions.length + extra.rows.length;
    mark(el, {feature: f, row: R.positions[sel], "class": S().output},
         "Shapley values of " + f + " (" + S().output + ") of " + n + " rows against its value" +
         (extra.rows.length ? " (the " + R.positions.length + " explained rows in dark blue, " +
          "click one to choose its row)" : "; click a point to choose its row") + ".");
    note(el, shapNote());
    table(el, ["row", f, "Shapley value"], R.positions.map(function (p, i) {
      return [p, R.values[i][j], ys[i]]; }).concat(extra.rows.map(function (p, i) {
      return [p, extra.x[i], extra.shap[i]]; })));
  }

  // most features and points the beeswarm draws: SVG slows past a few thousand points
  var BEESWARM = 20, BEESWARM_POINTS = 5000;
  function drawBeeswarm() {
    var V = R ? S() : null;
    var el = chart("beeswarm");
    if (!el || !R) return;
    var n = R.positions.length, m = M ? M.positions.length : 0;
    var imp = R.features.map(function (_, j) {
      var s = 0, i, extra = m ? more(j).shap : [];
      for (i = 0; i < n; i++) s += Math.abs(V.shap[i][j] || 0);
      for (i = 0; i < m; i++) s += Math.abs(extra[i] || 0);
      return s / (n + m);
    });
    var order = R.features.map(function (_, j) { return j; })
      .sort(function (a, b) { return imp[b] - imp[a]; }).slice(0, BEESWARM).reverse();
    // the scatter rows are in a random order: the first ones are a random sample
    var take = Math.max(0, Math.min(m, Math.floor(BEESWARM_POINTS / order.length) - n));
    // two traces: the sampled rows underneath, deaf to the mouse; the explained rows on top
    var xs = [], ys = [], color = [], rows = [], sizes = [];
    var cx = [], cy = [], ccolor = [];
    order.forEach(function (j, level) {
      var extra = more(j);
      var vals = R.numbers.map(function (r) { return r[j]; }).concat(extra.numbers.slice(0, take))
        .filter(function (v) { return v !== null; });
      var lo = Math.min.apply(null, vals), hi = Math.max.apply(null, vals);
      function shade(v) { return v === null || hi === lo ? 0.5 : (v - lo) / (hi - lo); }
      // a fixed jitter per row (no random numbers: the same page draws the same picture)
      function jitter(i) { return level + 0.6 * (((i * 0.618034) % 1) - 0.5); }
      for (var q = 0; q < take; q++) {
        cx.push(extra.shap[q]); cy.push(jitter(n + q)); ccolor.push(shade(extra.numbers[q]));
      }
      for (var i = 0; i < n; i++) {
        xs.push(V.shap[i][j]); ys.push(jitter(i)); color.push(shade(R.numbers[i][j]));
        rows.push(R.positions[i]); sizes.push(i === state.row ? 11 : 6);
      }
    });
    var traces = [];
    if (take) {
      traces.push({x: cx, y: cy, type: "scatter", mode: "markers", name: "sampled rows",
                   hoverinfo: "skip", marker: {color: ccolor, colorscale: "Bluered", size: 4,
                                               cmin: 0, cmax: 1, opacity: 0.5, line: {width: 0}}});
    }
    traces.push({x: xs, y: ys, type: "scatter", mode: "markers", customdata: rows,
                 name: "explained rows",
                 marker: {color: color, colorscale: "Bluered", size: sizes, cmin: 0, cmax: 1,
                          line: {width: take ? 0.5 : 0, color: "white"}},
                 hovertemplate: "row %{customdata}: %{x}<extra></extra>"});
    draw(el, traces,
         layout("Shapley values of " + (take ? "the explained and sampled rows" : "the explained rows"),
                {height: Math.max(260, 22 * order.length + 80),
                 xaxis: axis("Shapley value (" + V.output + ")"),
                 yaxis: {tickmode: "array", tickvals: order.map(function (_, l) { return l; }),
                         ticktext: order.map(function (j) { return R.features[j]; }),
                         automargin: true, zeroline: false}}));
    mark(el, {row: R.positions[state.row], "class": V.output},
         "Beeswarm: Shapley values for " + V.output + " of " + (n + take) + " rows (the " + n +
         " explained ones" +
         (take ? " and " + take + " more" : "") + ") for the " + order.length +
         " most important features; colour from low (blue) to high (red) feature value. Click " +
         (take ? "an explained row's point (outlined, on top)" : "a point") + " to choose its row.");
    note(el, shapNote());
    table(el, ["feature", "mean |Shapley value|"], order.slice().reverse().map(function (j) {
      return [R.features[j], imp[j]]; }));
  }

  var WATERFALL = 12;
  function drawWaterfall() {
    var V = R ? S() : null;
    var el = chart("waterfall");
    if (!el || !R) return;
    var i = state.row, vals = V.shap[i];
    var order = vals.map(function (_, j) { return j; })
      .sort(function (a, b) { return Math.abs(vals[b] || 0) - Math.abs(vals[a] || 0); });
    var top = order.slice(0, WATERFALL), rest = order.slice(WATERFALL);
    var names = top.map(function (j) { return R.features[j] + " = " + R.values[i][j]; });
    var xs = top.map(function (j) { return vals[j]; });
    if (rest.length) {
      names.push(rest.length + " other features");
      xs.push(rest.reduce(function (s, j) { return s + (vals[j] || 0); }, 0));
    }
    names.reverse(); xs.reverse();
    draw(el, [{type: "waterfall", orientation: "h", base: V.base[i], y: names, x: xs,
               measure: xs.map(function () { return "relative"; }),
               increasing: {marker: {color: RED}}, decreasing: {marker: {color: BLUE}},
               connector: {line: {color: GREY}},
               hovertemplate: "%{y}: %{x}<extra></extra>"}],
         layout("row " + R.positions[i] + ": prediction " + fmt(V.prediction[i]),
                {height: Math.max(260, 24 * names.length + 90), margin: {l: 10, r: 10, t: 36, b: 45},
                 xaxis: axis(V.output), yaxis: {automargin: true, type: "category"}}));
    mark(el, {row: R.positions[i], "class": V.output},
         "Waterfall of " + rowLabel(i) + " for " + V.output + ": the base value " + fmt(V.base[i]) +
         " plus each feature's Shapley value gives the prediction " + fmt(V.prediction[i]) + ".");
    note(el, shapNote());
    table(el, ["feature", "value", "Shapley value"], order.map(function (j) {
      return [R.features[j], R.values[i][j], vals[j]]; }));
  }

  function drawLime() {
    var el = chart("lime");
    if (!el || !R) return;
    var L = R.lime, pos = R.positions[state.row], LB = L ? L.by_output : null;
    var k = L ? L.positions.indexOf(pos) : -1;
    if (k < 0) {
      empty(el, L ? "LIME was run for rows " + L.positions.join(", ") + " (the report's drawn " +
                    "rows); choose one of them to see its weights." : "No LIME in this report.");
      mark(el, {row: pos}, "No LIME explanation for row " + pos + ".");
      table(el, [], []);
      note(el, "");
      return;
    }
    // the chosen class's surrogate where the report fit every class's, else its one class's
    var W = LB ? {weights: LB.weights[state.output], score: LB.score[state.output],
                  output: outName()} : {weights: L.weights, score: L.score, output: L.output};
    var w = W.weights[k], order = w.map(function (_, j) { return j; })
      .sort(function (a, b) { return Math.abs(w[a] || 0) - Math.abs(w[b] || 0); })
      .filter(function (j) { return w[j] !== 0 && w[j] !== null; }).slice(-WATERFALL);
    draw(el, [{type: "bar", orientation: "h", x: order.map(function (j) { return w[j]; }),
               y: order.map(function (j) { return L.names[k][j]; }),
               marker: {color: order.map(function (j) { return w[j] > 0 ? RED : BLUE; })},
               hovertemplate: "%{y}: %{x}<extra></extra>"}],
         layout("LIME weights of row " + pos + " (local R\u00b2 " + fmt(W.score[k]) + ")",
                {height: Math.max(240, 24 * order.length + 90), margin: {l: 10, r: 10, t: 36, b: 45},
                 xaxis: axis("weight (" + W.output + ")"),
                 yaxis: {automargin: true, type: "category"}}));
    mark(el, {row: pos, "class": W.output}, "LIME weights of row " + pos + " for " + W.output +
         ", local R\u00b2 " + fmt(W.score[k]) + ".");
    note(el, LB ? "" : oneOutputNote());
    table(el, ["condition", "weight"], order.slice().reverse().map(function (j) {
      return [L.names[k][j], w[j]]; }));
  }

  function drawRowValues() {
    var V = R ? S() : null;
    var el = $('[data-ml-chart="row-values"]');
    if (!el || !R) return;
    var i = state.row, t = document.createElement("table");
    var cap = t.createCaption(); cap.textContent = rowLabel(i) + ": prediction " + fmt(V.prediction[i]);
    var head = t.createTHead().insertRow();
    ["feature", "value", "Shapley value"].forEach(function (c) {
      var th = document.createElement("th"); th.scope = "col"; th.textContent = c; head.appendChild(th);
    });
    var body = t.createTBody();
    R.features.forEach(function (f, j) {
      var tr = body.insertRow();
      tr.insertCell().textContent = f;
      tr.insertCell().textContent = R.values[i][j];
      var c = tr.insertCell(); c.textContent = fmt(V.shap[i][j]); c.className = "num";
    });
    el.replaceChildren(t);
    el.setAttribute("data-ml-row", String(R.positions[i]));
  }

  // a hovered ICE curve: its row's values and Shapley explanation, beside the chart
  function showBrushed(pos) {
    var V = R ? S() : null;
    var box = $("#ml-brushed");
    if (!box || !R) return;
    var i = R.positions.indexOf(pos);
    if (i < 0) { box.textContent = ""; return; }
    var j = R.features.indexOf(state.feature);
    var order = V.shap[i].map(function (_, q) { return q; })
      .sort(function (a, b) { return Math.abs(V.shap[i][b] || 0) - Math.abs(V.shap[i][a] || 0); })
      .slice(0, 4);
    box.textContent = "row " + pos + ": " + (j >= 0 ? state.feature + " = " + R.values[i][j] +
      ", its Shapley value " + fmt(V.shap[i][j]) + "; " : "") + "prediction " +
      fmt(V.prediction[i]) + "; largest Shapley values: " + order.map(function (q) {
        return R.features[q] + " " + fmt(V.shap[i][q]); }).join(", ") + ". Click to choose the row.";
    box.setAttribute("data-ml-row", String(pos));
  }

  // ------------------------------------------------------------ interactions
  var P = D.pairs;
  function pairKey(a, b) { return a + "\u0000" + b; }
  function drawPairs() {
    var el = chart("pair-screen"), heat = chart("interaction");
    if (!P || !el) return;
    var names = [], ranked = pick(P.ranked, P.by_output), cls = shownOut(P.by_output);
    ranked.forEach(function (r) {
      if (names.indexOf(r[0]) < 0) names.push(r[0]);
      if (names.indexOf(r[1]) < 0) names.push(r[1]);
    });
    var z = names.map(function () { return names.map(function () { return null; }); });
    ranked.forEach(function (r) {
      var a = names.indexOf(r[0]), b = names.indexOf(r[1]);
      z[a][b] = r[3]; z[b][a] = r[3];
    });
    // (the names escaped by draw only: escaped here too, a "<" was shown as "&lt;")
    draw(el, [{type: "heatmap", x: names, y: names, z: z, colorscale: "Blues",
               hovertemplate: "%{x} x %{y}: H\u00b2 %{z}<extra></extra>", hoverongaps: false,
               colorbar: {thickness: 10, title: {text: "H\u00b2"}}}],
         layout("Friedman's H\u00b2 of each pair (" + cls + ")",
                {height: Math.max(280, 22 * names.length + 120),
                 xaxis: {automargin: true, type: "category"},
                 yaxis: {automargin: true, type: "category", autorange: "reversed"}}));
    el.__names = names;
    mark(el, {pair: state.pair.split("\u0000").join(" x "), "class": cls},
         "Friedman's H\u00b2 of " + cls + " of the " + ranked.length + " screened pairs; click a cell to draw that pair.");
    note(el, P.by_output ? "" : oneOutputNote());
    table(el, ["feature 1", "feature 2", "H unnormalised", "H\u00b2"], ranked);
    var E = P.effects[state.pair];
    var ab = state.pair.split("\u0000");
    if (!E) {
      empty(heat, "The second-order ALE of " + ab[0] + " x " + ab[1] + " was not computed: " +
            "the report computes it for the pairs of the pair selector.");
      mark(heat, {pair: ab[0] + " x " + ab[1], "class": cls}, "No heatmap for " + ab[0] + " x " + ab[1] + ".");
      return;
    }
    var Z = pick(E.z, P.by_output);
    draw(heat, [{type: "heatmap", x: E.x, y: E.y, z: Z, colorscale: "RdBu", zmid: 0,
                 colorbar: {thickness: 10}, meta: [ab[0], ab[1]],
                 hovertemplate: "%{meta[0]} %{x}, %{meta[1]} %{y}: %{z}<extra></extra>"}],
         layout("Second-order ALE of " + ab[0] + " x " + ab[1] + " (" + cls + ")",
                {height: 340, xaxis: axis(ab[0]), yaxis: axis(ab[1])}));
    mark(heat, {pair: ab[0] + " x " + ab[1], "class": cls},
         "Heatmap of the second-order ALE of " + ab[0] + " and " + ab[1] + " on " + cls +
         " (the joint effect beyond their own effects).");
    note(heat, P.by_output ? "" : oneOutputNote());
    var rows = [];
    E.y.forEach(function (y, r) { E.x.forEach(function (x, c) { rows.push([x, y, Z[r][c]]); }); });
    table(heat, [ab[0], ab[1], "second-order ALE"], rows);
  }

  // ------------------------------------------------------------------ regions
  var G = D.regions ? D.regions.trees : null, GB = D.regions ? D.regions.by_output : false;
  function regionFeature() {
    if (!G) return null;
    return G[state.feature] ? state.feature : Object.keys(G)[0];
  }
  function drawRegions() {
    var el = chart("regions"), tree = $('[data-ml-chart="region-tree"]');
    if (!G || !el) return;
    var f = regionFeature(), T = G[f];
    if (!T) return;
    if (state.node >= T.nodes.length) state.node = 0;
    // the tree: one button per node, nested as the splits are
    function item(q) {
      var n = T.nodes[q], li = document.createElement("li"), b = document.createElement("button");
      b.type = "button"; b.setAttribute("data-ml-control", "region");
      b.setAttribute("data-node", String(q));
      b.setAttribute("aria-pressed", q === state.node ? "true" : "false");
      b.textContent = n.region + " (" + n.rows + " rows)" + (n.split ? ": " + n.split : "");
      b.addEventListener("click", function () {
        state.node = q; drawRegions();
        // the tree is drawn anew: keep the keyboard on the chosen node
        var again = tree.querySelector('[data-node="' + q + '"]');
        if (again) again.focus();
      });
      li.appendChild(b);
      if (n.children.length) {
        var ul = document.createElement("ul");
        n.children.forEach(function (c) { ul.appendChild(item(c)); });
        li.appendChild(ul);
      }
      return li;
    }
    var top = document.createElement("ul"); top.appendChild(item(0));
    var head = document.createElement("p"); head.className = "note";
    head.textContent = f === state.feature ? "Regions of " + f + ":" :
      "No regions for " + state.feature + "; regions of " + f + ":";
    tree.replaceChildren(head, top);
    var chosen = T.nodes[state.node].region, traces = [], keys = Object.keys(T.curves);
    // a leaf lies inside the chosen node when its conditions start with the node's
    function inside(region) {
      return chosen === "all" || region === chosen || region.indexOf(chosen + " & ") === 0;
    }
    var cls = shownOut(GB);
    keys.forEach(function (region, i) {
      var C = T.curves[region], on = inside(region);
      traces.push({x: C.x, y: pick(C.y, GB), type: "scatter", mode: "lines", name: region,
                   meta: [region],
                   line: {width: on ? 3 : 1, color: on ? ["#2b5da8", "#c0392b", "#1e8449", "#8e44ad",
                          "#d35400", "#16a085"][i % 6] : GREY},
                   hovertemplate: "%{meta[0]}: %{y}<extra></extra>"});
    });
    if (!keys.length) { empty(el, f + ": no significant split; its global effect holds."); }
    else {
      draw(el, traces, layout("Regional ALE of " + f + " (" + cls + ")",
                              {showlegend: true, legend: {orientation: "h", y: -0.25},
                               height: 340, xaxis: axis(f), yaxis: axis("ALE of " + cls)}));
    }
    mark(el, {feature: f, region: chosen, "class": cls},
         "Regional ALE curves of " + f + " on " + cls + ", one per region; " + chosen +
         " is highlighted." + (GB ? " The regions are those of every class together." : ""));
    note(el, GB ? "" : oneOutputNote());
    var rows = [];
    keys.forEach(function (region) {
      var y = pick(T.curves[region].y, GB);
      T.curves[region].x.forEach(function (x, i) { rows.push([region, x, y[i]]); });
    });
    table(el, ["region", f, "ALE"], rows);
  }

  // ------------------------------------------------------------ what changed
  // the "What changed" section: each feature's contribution to the change of the mean
  // prediction (95% intervals), and the chosen feature's PD on the reference and current rows
  var C = D.changed || null;
  if (C) state.changed = C.features.length ? C.features[0] : null;
  function drawChanged() {
    var el = chart("drift"), ba = chart("before-after");
    if (!C || !el) return;
    var n = C.names.length, rev = function (a) { return a.slice().reverse(); };
    draw(el, [{type: "bar", orientation: "h", x: rev(C.contribution), y: rev(C.names),
               meta: rev(C.names), customdata: rev(C.p),
               marker: {color: rev(C.names.map(function (f, i) {
                 return f === state.changed ? RED : (C.contribution[i] >= 0 ? "#d6604d" : BLUE);
               }))},
               error_x: {type: "data", symmetric: false,
                         array: rev(C.hi.map(function (h, i) { return h - C.contribution[i]; })),
                         arrayminus: rev(C.lo.map(function (l, i) { return C.contribution[i] - l; }))},
               hovertemplate: "%{y}: %{x} (p = %{customdata}, Holm)<extra></extra>"}],
         layout("Change of the mean " + C.output + " (" + fmt(C.total) + "), by feature",
                {height: Math.max(220, 60 + 22 * n), xaxis: axis("contribution (95% interval)"),
                 yaxis: axis("", {type: "category", automargin: true})}));
    mark(el, {feature: state.changed === null ? undefined : state.changed},
         "Contributions of " + n + " features to the change of the mean " + C.output + ".");
    table(el, ["feature", "contribution", "lower", "upper", "p-value (Holm)"],
          C.names.map(function (f, i) { return [f, C.contribution[i], C.lo[i], C.hi[i], C.p[i]]; }));
    if (!ba) return;
    var f = state.changed, K = f === null ? null : C.curves[f];
    if (!K) { empty(ba, "No partial dependence before and after in this report."); return; }
    var mode = K.kind === "categorical" ? "markers+lines" : "lines";
    draw(ba, [{x: K.x, y: K.before, type: "scatter", mode: mode, name: "reference rows",
               line: {color: BLUE, width: 2.5}, hovertemplate: "reference: %{y}<extra></extra>"},
              {x: K.x, y: K.after, type: "scatter", mode: mode, name: "current rows",
               line: {color: RED, width: 2.5}, hovertemplate: "current: %{y}<extra></extra>"}],
         layout("PD of " + f + ": reference and current rows",
                {showlegend: true, xaxis: axis(f, K.kind === "categorical" ? {type: "category"} : {}),
                 yaxis: axis(C.output)}));
    mark(ba, {feature: f}, "Partial dependence of " + C.output + " on " + f +
         " averaged over the reference rows and over the current rows.");
    table(ba, [f, "reference", "current"], K.x.map(function (x, i) {
      return [x, K.before[i], K.after[i]]; }));
  }

  // ---------------------------------------------------------------- controls
  function fill(select, items) {
    items.forEach(function (it) {
      var o = document.createElement("option"); o.value = it[0]; o.textContent = it[1];
      select.appendChild(o);
    });
  }
  function control(name) { return $('[data-ml-control="' + name + '"]'); }
  function drawAll() {
    drawPD(); drawALE(); drawDependence(); drawBeeswarm(); drawWaterfall(); drawLime();
    drawRowValues(); drawPairs(); drawRegions(); drawChanged();
  }
  function setRow(i) {
    if (!R || i < 0) return;
    state.row = i; control("row").value = String(i);
    drawPD(); drawDependence(); drawBeeswarm(); drawWaterfall(); drawLime(); drawRowValues();
  }
  function rowOfPoint(ev) {
    var p = ev.points && ev.points[0];
    if (!p || p.customdata === undefined) return -1;
    var pos = Array.isArray(p.customdata) ? p.customdata[0] : p.customdata;
    return R ? R.positions.indexOf(pos) : -1;
  }

  var fs = control("feature"), cs = control("class"), rs = control("row"), ps = control("pair");
  fill(fs, D.features.map(function (f) { return [f, f]; }));
  fs.addEventListener("change", function () {
    state.feature = fs.value; drawPD(); drawALE(); drawDependence(); drawRegions();
  });
  if (D.outputs.length > 1) {
    fill(cs, D.outputs.map(function (o, k) { return [String(k), o]; }));
    cs.value = String(state.output);
    cs.addEventListener("change", function () { state.output = Number(cs.value); drawAll(); });
  } else {
    cs.closest("label").hidden = true;
  }
  if (R) {
    fill(rs, R.positions.map(function (p, i) { return [String(i), rowLabel(i)]; }));
    rs.addEventListener("change", function () { setRow(Number(rs.value)); });
  } else {
    rs.closest("label").hidden = true;
  }
  if (P) {
    var keys = Object.keys(P.effects);
    var best = pick(P.chosen, P.by_output);  // the shown class's strongest pair
    state.pair = pairKey(best[0], best[1]);
    fill(ps, keys.map(function (k) { return [k, k.split("\u0000").join(" x ")]; }));
    ps.value = state.pair;
    ps.addEventListener("change", function () { state.pair = ps.value; drawPairs(); });
  } else if (ps) {
    ps.closest("label").hidden = true;
  }
  var chs = control("changed-feature");
  if (C && C.features.length) {
    fill(chs, C.features.map(function (f) { return [f, f]; }));
    chs.value = state.changed;
    chs.addEventListener("change", function () { state.changed = chs.value; drawChanged(); });
  } else if (chs) {
    chs.closest("label").hidden = true;
  }
  document.querySelectorAll("[data-ml-part]").forEach(function (part) {
    var need = {effects: D.features.length, rows: R, pairs: P, regions: G,
                changed: C}[part.getAttribute("data-ml-part")];
    if (!need) part.hidden = true;
  });

  drawAll();
  var pd = chart("pd");
  if (pd && R) {
    pd.on("plotly_hover", function (ev) {
      var i = rowOfPoint(ev); if (i >= 0) showBrushed(R.positions[i]);
    });
    pd.on("plotly_click", function (ev) { setRow(rowOfPoint(ev)); });
  }
  ["dependence", "beeswarm"].forEach(function (name) {
    var el = chart(name);
    if (el && R) el.on("plotly_click", function (ev) { setRow(rowOfPoint(ev)); });
  });
  var screen = chart("pair-screen");
  if (screen && P) {
    screen.on("plotly_click", function (ev) {
      var p = ev.points && ev.points[0], names = screen.__names;
      if (!p || !names) return;
      var a = names[p.pointNumber[1]], b = names[p.pointNumber[0]];
      var key = P.effects[pairKey(a, b)] ? pairKey(a, b) : pairKey(b, a);
      if (a === b) return;
      state.pair = key;
      ps.value = P.effects[key] ? key : "";  // a pair without a heatmap: none chosen
      drawPairs();
    });
  }
  window.modellensExplorer = {state: state, data: D, setRow: setRow,
                              ready: performance.now()};
  document.documentElement.setAttribute("data-ml-ready", "true");
})();
