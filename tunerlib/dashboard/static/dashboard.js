// The tunerlib dashboard page: polls the JSON API (/api/runs, /api/runs/<id>, .../results?since=,
// .../importance) and draws with Plotly. Every value from the databases is user data: it reaches the
// page as text nodes (textContent) only, and Plotly's labels (which read a little HTML) get it escaped,
// except parallel coordinates', which Plotly writes as plain text.
"use strict";
(function () {
  const query = new URLSearchParams(window.location.search);
  const INTERVAL = Math.max(250, Number(query.get("interval")) || 2000);
  const IMPORTANCE_EVERY = 10000;
  const PLOT_CONFIG = {displaylogo: false, responsive: true};
  const state = {selected: null, results: [], lastId: 0, generation: 0, importanceCount: -1,
                 importanceAt: 0, importanceBusy: false, detail: null};

  // ------------------------------------------------------------------------------------ helpers
  function esc(text) {  // for Plotly's labels, which interpret a few HTML tags
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function byId(id) { return document.getElementById(id); }
  function fmt(value) {
    if (value === null || value === undefined) return "–";
    if (typeof value !== "number") return String(value);
    if (Number.isInteger(value)) return String(value);
    const size = Math.abs(value);
    return size !== 0 && (size >= 1e6 || size < 1e-3) ? value.toExponential(4) : String(+value.toPrecision(6));
  }
  function withUnit(value, run) { return value === null || value === undefined ? "–" : fmt(value) + (run.unit ? " " + run.unit : ""); }
  function seconds(s) {
    if (s < 120) return fmt(Math.round(s * 10) / 10) + " s";
    if (s < 7200) return fmt(Math.round(s / 6) / 10) + " min";
    return fmt(Math.round(s / 360) / 10) + " h";
  }
  function objectiveTitle(run) {  // the objective of "value": the first one of a multi-objective run
    if (run.objectives.length > 1) {
      const first = run.objectives[0];
      return first.direction + " " + first.metric + (first.unit ? " (in " + first.unit + ")" : " (unitless)");
    }
    return run.objective + " (" + run.unit_text + ")";
  }
  async function getJSON(url) {
    const response = await fetch(url, {cache: "no-store"});
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  }
  function fillTable(table, rows) {  // rows: arrays of cell texts or nodes
    const body = table.tBodies[0];
    body.replaceChildren(...rows.map(function (cells) {
      const tr = el("tr");
      cells.forEach(function (cell) {
        const td = el("td");
        if (cell instanceof Node) td.appendChild(cell); else td.textContent = cell === null || cell === undefined ? "–" : String(cell);
        tr.appendChild(td);
      });
      return tr;
    }));
    return body;
  }
  function layout(title, xTitle, yTitle, extra) {
    return Object.assign({title: {text: esc(title), font: {size: 14}}, margin: {l: 70, r: 20, t: 40, b: 50},
                          height: 320, xaxis: {title: {text: esc(xTitle)}}, yaxis: {title: {text: esc(yTitle)}},
                          legend: {orientation: "h", y: -0.25}, uirevision: state.selected}, extra || {});
  }
  function draw(id, traces, lay) {
    const node = byId(id);
    Plotly.react(node, traces, lay, PLOT_CONFIG);
    return node;
  }

  // ------------------------------------------------------------------------------------ runs list
  function selectRun(id) {
    if (id === state.selected) return;
    state.selected = id;
    state.results = [];
    state.lastId = 0;
    state.generation += 1;
    state.importanceCount = -1;
    state.importanceOrder = null;
    state.detail = null;
    if (window.location.hash !== "#run=" + id) window.location.hash = "run=" + id;
  }
  function progressCell(run) {
    const p = run.progress, wrap = el("span");
    if (p.fraction !== null) {
      const bar = el("span", null, "bar"), fill = el("span");
      fill.style.width = Math.round(100 * p.fraction) + "%";
      bar.appendChild(fill);
      wrap.appendChild(bar);
    }
    const parts = [p.results + (p.test_limit ? "/" + p.test_limit : "") + " results", seconds(p.seconds) + (p.stop_after ? "/" + seconds(p.stop_after) : "")];
    wrap.appendChild(document.createTextNode(parts.join(", ")));
    return wrap;
  }
  function renderRuns(list) {
    const dbs = byId("databases");
    dbs.replaceChildren(...list.databases.filter(function (d) { return d.error; }).map(function (d) {
      return el("p", d.url + ": " + d.error, "dberror");
    }));
    const body = fillTable(byId("runs"), list.runs.map(function (run) {
      const stateCell = el("span", run.state, "state-" + run.state.replace(/[^A-Z]/g, ""));
      return [run.id.slice(0, 8), run.label, run.program + " " + run.version, stateCell, progressCell(run),
              run.results, run.best ? withUnit(run.best.value, run) : "–", run.best ? run.best.technique : "–",
              run.database];
    }));
    Array.from(body.rows).forEach(function (tr, i) {
      const id = list.runs[i].id;
      tr.dataset.run = id;
      if (id === state.selected) tr.classList.add("selected");
      tr.addEventListener("click", function () { selectRun(id); poll(); });
    });
  }
  function chooseRun(runs) {
    const wanted = window.location.hash.replace(/^#run=/, "");
    const byHash = runs.find(function (r) { return wanted && r.id === wanted; });
    if (byHash) { selectRun(byHash.id); return; }
    if (state.selected && runs.some(function (r) { return r.id === state.selected; })) return;
    const running = runs.filter(function (r) { return r.stored_state === "RUNNING"; });
    const pick = running.length ? running[running.length - 1] : runs[runs.length - 1];
    if (pick) selectRun(pick.id);
  }

  // ------------------------------------------------------------------------------------ one run
  function renderFacts(run) {
    byId("run-title").textContent = "Run " + run.id + (run.label !== null ? " · " + run.label : "");
    const facts = [run.project + " / " + run.program + " " + run.version, "state " + run.state,
                   run.objectives.length > 1
                     ? "objectives " + run.objectives.map(function (o) { return o.direction + " " + o.metric + (o.unit ? " (in " + o.unit + ")" : ""); }).join(", ")
                     : "objective " + objectiveTitle(run), run.results + " results, " + run.requests + " requests",
                   "best " + (run.best ? withUnit(run.best.value, run) + " (evaluation " + run.best.n + ", " + run.best.technique + ")" : "none yet"),
                   "seed " + fmt(run.seed), run.database];
    if (run.best && run.best.retimed !== null) facts.push("re-timed best " + withUnit(run.best.retimed, run));
    if (run.workers.length) facts.push("measured by " + run.workers.map(function (w) { return w.worker + " (" + w.results + ")"; }).join(", "));
    if (run.objective_error) facts.push(run.objective_error);
    byId("run-facts").textContent = facts.join(" · ");
  }
  function bestLine(results, run, key) {
    const sign = run.objectives.length && run.objectives[0].direction === "maximize" ? -1 : 1;
    const ordered = results.slice().sort(function (a, b) { return a[key] - b[key] || a.n - b.n; });
    const xs = [], ys = [];
    let best = null;
    ordered.forEach(function (r) {
      if (r.value !== null && (best === null || sign * r.value < sign * best)) best = r.value;
      if (best !== null) { xs.push(r[key]); ys.push(best); }
    });
    return {x: xs, y: ys, mode: "lines", line: {shape: "hv", width: 2, color: "#1f4fa8"}, name: "best so far"};
  }
  function historyTraces(run, key) {
    const ok = state.results.filter(function (r) { return r.value !== null; });
    const failed = state.results.filter(function (r) { return r.state !== "OK"; });
    const low = ok.length ? Math.min.apply(null, ok.map(function (r) { return r.value; })) : 0;
    const hover = function (r) { return esc("#" + r.n + " " + r.technique + " " + JSON.stringify(r.config).slice(0, 300)); };
    return [
      {x: ok.map(function (r) { return r[key]; }), y: ok.map(function (r) { return r.value; }), mode: "markers",
       type: "scatter", name: "result", marker: {size: 5, color: "rgba(120,120,120,0.55)"},
       text: ok.map(hover), hoverinfo: "x+y+text"},
      bestLine(state.results, run, key),
      {x: failed.map(function (r) { return r[key]; }), y: failed.map(function () { return low; }), mode: "markers",
       type: "scatter", name: "failed (ERROR, TIMEOUT, INFEASIBLE)", marker: {symbol: "x", size: 7, color: "#c33"},
       text: failed.map(function (r) { return esc(r.state + " #" + r.n + " " + r.technique); }), hoverinfo: "x+text"}];
  }
  function renderHistory(run) {
    const y = objectiveTitle(run);
    const positive = state.results.every(function (r) { return r.value === null || r.value > 0; });
    const logBox = byId("log-values");
    logBox.disabled = !positive;
    const yType = logBox.checked && positive ? "log" : "linear";
    [["chart-evals", "n", "evaluation", "best so far against evaluations"],
     ["chart-seconds", "seconds", "seconds since the run started", "best so far against time"]].forEach(function (c) {
      const node = draw(c[0], historyTraces(run, c[1]), layout(c[3], c[2], y, {yaxis: {type: yType, title: {text: esc(y)}}}));
      node.dataset.results = String(state.results.length);
    });
  }
  function renderTechniques(run) {
    const shares = run.allocation.shares;
    draw("chart-allocation", Object.keys(shares).map(function (name) {
      return {x: run.allocation.x, y: shares[name], name: esc(name), stackgroup: "one", mode: "lines"};
    }), layout("share of requests by technique", "request", "share of the requests", {yaxis: {range: [0, 1], title: {text: "share of the requests"}}}));
    draw("chart-newbests", [{type: "bar", x: run.techniques.map(function (t) { return esc(t.technique); }),
                             y: run.techniques.map(function (t) { return t.new_bests; }), marker: {color: "#4a7bd0"}}],
         layout("new bests by technique", "technique", "new bests"));
    fillTable(byId("techniques"), run.techniques.map(function (t) {
      return [t.technique, t.requests, t.results, t.ok, t.new_bests, withUnit(t.best, run)];
    }));
  }
  function renderDecisions(run) {
    byId("decisions-note").textContent = run.decisions.length
      ? "Recorded by the run's technique; saved with its state every few results and at the end."
      : "No decisions recorded: the run's technique keeps none (auto does), or has not saved its state yet.";
    fillTable(byId("decisions"), run.decisions.map(function (d) { return [d.evaluation, d.technique, d.reason]; }));
  }
  function renderErrors(run) {
    const errors = run.errors;
    byId("errors-note").textContent = errors.count
      ? errors.count + " failed results" + (errors.count > errors.shown.length ? ", the newest " + errors.shown.length + " shown" : "") + "."
      : "No failed results.";
    const open = new Set(Array.from(byId("errors").querySelectorAll("details[open]")).map(function (d) { return d.dataset.result; }));
    byId("errors").replaceChildren(...errors.shown.slice().reverse().map(function (e, i) {
      const box = el("details", null, "error");
      box.dataset.result = String(e.result_id);
      box.open = open.size ? open.has(box.dataset.result) : i === 0;
      box.appendChild(el("summary", "evaluation " + e.n + " · " + e.state + " · " + e.technique + " · " + JSON.stringify(e.config)));
      box.appendChild(el("pre", e.text || "(no error text)"));
      return box;
    }));
  }

  // ------------------------------------------------------------------------------ parameter views
  function parameterColumns(run) {
    const ok = state.results.filter(function (r) { return r.value !== null && r.config && typeof r.config === "object"; });
    const declared = run.parameters.map(function (p) { return p.name; });
    const extra = new Set();
    ok.forEach(function (r) { Object.keys(r.config).forEach(function (k) { if (!declared.includes(k)) extra.add(k); }); });
    const columns = [];
    run.parameters.concat(Array.from(extra).sort().map(function (name) { return {name: name, options: null, log: false}; })).forEach(function (p) {
      const values = ok.map(function (r) { return r.config[p.name]; });
      if (!values.length || values.some(function (v) { return v === null || v === undefined || typeof v === "object"; })) return;
      const numeric = values.every(function (v) { return typeof v === "number"; });
      if (numeric) { columns.push({name: p.name, values: values, log: p.log}); return; }
      const seen = Array.from(new Set(values.map(String)));
      const order = (p.options || []).map(String).filter(function (o) { return seen.includes(o); });
      seen.sort().forEach(function (v) { if (!order.includes(v)) order.push(v); });
      columns.push({name: p.name, values: values.map(String), categories: order});
    });
    return {ok: ok, columns: columns};
  }
  function mostImportant(cols, count, noteId) {  // the columns to draw: by importance once it is known
    const order = state.importanceOrder || [];
    const rank = function (c) { const i = order.indexOf(c.name); return i < 0 ? order.length : i; };
    const ranked = cols.columns.map(function (c, i) { return [rank(c), i, c]; })
      .sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; }).map(function (x) { return x[2]; });
    const shown = ranked.slice(0, count), hidden = ranked.slice(count);
    byId(noteId).textContent = hidden.length
      ? "The " + count + " " + (order.length ? "most important" : "first") + " of " + ranked.length + " parameters; not drawn: " +
        hidden.map(function (c) { return c.name; }).join(", ") + "."
      : "";
    return {ok: cols.ok, columns: shown};
  }
  function renderSlices(run, all) {
    const cols = mostImportant(all, 12, "slices-note");
    const grid = byId("slices");
    const wanted = cols.columns.map(function (c) { return "slice-" + encodeURIComponent(c.name).replace(/%/g, "_"); });
    if (Array.from(grid.children).map(function (n) { return n.id; }).join() !== wanted.join()) {
      grid.replaceChildren(...wanted.map(function (id) { const d = el("div"); d.id = id; return d; }));
    }
    cols.columns.forEach(function (c, i) {
      const axis = c.categories ? {type: "category", categoryorder: "array", categoryarray: c.categories.map(esc), title: {text: esc(c.name)}}
                                : {type: c.log ? "log" : "linear", title: {text: esc(c.name)}};
      draw(wanted[i], [{x: c.categories ? c.values.map(esc) : c.values, y: cols.ok.map(function (r) { return r.value; }),
                        mode: "markers", type: "scatter", marker: {size: 5, color: cols.ok.map(function (r) { return r.n; }),
                        colorscale: "Viridis"}, text: cols.ok.map(function (r) { return "#" + r.n; })}],
           layout("", c.name, objectiveTitle(run), {height: 260, margin: {l: 60, r: 10, t: 10, b: 45}, xaxis: axis, showlegend: false}));
    });
  }
  function renderParcoords(run, all) {
    const cols = mostImportant(all, 10, "parcoords-note");
    if (!cols.ok.length || !cols.columns.length) { Plotly.purge(byId("chart-parcoords")); return; }
    // parcoords writes its labels as plain text (no markup is read), so they are passed unescaped
    const dims = cols.columns.map(function (c) {
      if (!c.categories) return {label: c.name, values: c.values};
      return {label: c.name, values: c.values.map(function (v) { return c.categories.indexOf(v); }),
              tickvals: c.categories.map(function (_, i) { return i; }), ticktext: c.categories};
    });
    const values = cols.ok.map(function (r) { return r.value; });
    dims.push({label: run.objective + (run.unit ? " (" + run.unit + ")" : ""), values: values});
    draw("chart-parcoords", [{type: "parcoords", dimensions: dims,
                              line: {color: values, colorscale: "Viridis", reversescale: run.objectives.length > 0 && run.objectives[0].direction === "minimize", showscale: true}}],
         {height: 380, margin: {l: 70, r: 70, t: 50, b: 30}});
  }
  function renderPareto(run) {
    const section = byId("pareto-section");
    section.hidden = !run.pareto_front;
    if (!run.pareto_front) return;
    const names = run.objectives.map(function (o) { return o.direction + " " + o.metric + (o.unit ? " (" + o.unit + ")" : ""); });
    byId("pareto-note").textContent = run.pareto_front.length + " results on the front of " + names.join(", ") + (names.length > 2 ? " (the first two drawn)" : "") + ".";
    const ok = state.results.filter(function (r) { return r.values; });
    const front = run.pareto_front.slice().sort(function (a, b) { return a.values[0] - b.values[0]; });
    draw("chart-pareto", [
      {x: ok.map(function (r) { return r.values[0]; }), y: ok.map(function (r) { return r.values[1]; }), mode: "markers", name: "result",
       marker: {size: 5, color: "rgba(120,120,120,0.5)"}},
      {x: front.map(function (p) { return p.values[0]; }), y: front.map(function (p) { return p.values[1]; }), mode: "lines+markers",
       name: "Pareto front", line: {shape: "hv"}, marker: {size: 8, color: "#c60"}}],
      layout("current Pareto front", names[0], names[1]));
  }
  function refreshImportance(run, generation) {  // not awaited: the forest can take seconds to fit
    const now = Date.now();
    if (state.importanceBusy || run.results === state.importanceCount ||
        now - state.importanceAt < IMPORTANCE_EVERY && state.importanceCount >= 0) return;
    state.importanceBusy = true;
    state.importanceAt = now;
    getJSON("/api/runs/" + encodeURIComponent(run.id) + "/importance").then(function (doc) {
      if (generation === state.generation) drawImportance(run, doc);
    }).catch(function (error) {
      byId("importance-note").textContent = "cannot compute the importance: " + error.message;
    }).finally(function () { state.importanceBusy = false; });
  }
  function drawImportance(run, doc) {
    state.importanceCount = run.results;
    if (doc.error) {
      byId("importance-note").textContent = doc.error;
      Plotly.purge(byId("chart-importance"));
      return;
    }
    byId("importance-note").textContent = "Share of the objective's variance each parameter explains alone (a random forest fitted to " +
      doc.fit_results + " OK results, out-of-bag R² " + fmt(doc.r2) + ")" + (doc.skipped.length ? "; not placed on an axis: " + doc.skipped.join(", ") : "") + ".";
    state.importanceOrder = doc.parameters.map(function (p) { return p.name; });
    const ps = doc.parameters.slice().reverse();
    draw("chart-importance", [{type: "bar", orientation: "h", x: ps.map(function (p) { return p.fraction; }),
                               y: ps.map(function (p) { return esc(p.name); }), marker: {color: "#4a7bd0"}}],
         layout("parameter importance", "share of variance", "", {height: Math.max(220, 40 + 28 * ps.length), margin: {l: 140, r: 20, t: 40, b: 50}}));
  }
  async function renderRun(generation) {
    const id = encodeURIComponent(state.selected);
    const both = await Promise.all([getJSON("/api/runs/" + id), getJSON("/api/runs/" + id + "/results?since=" + state.lastId)]);
    if (generation !== state.generation) return;
    const run = both[0], fresh = both[1];
    if (fresh.since === state.lastId) {
      state.results = state.results.concat(fresh.results);
      state.lastId = fresh.last_id;
    }
    state.detail = run;
    byId("run").hidden = false;
    renderFacts(run);
    renderHistory(run);
    renderPareto(run);
    renderTechniques(run);
    renderDecisions(run);
    const cols = parameterColumns(run);
    renderSlices(run, cols);
    renderParcoords(run, cols);
    renderErrors(run);
    refreshImportance(run, generation);
  }

  // ------------------------------------------------------------------------------------ polling
  let timer = null, busy = false, again = false;
  async function poll() {
    if (busy) { again = true; return; }
    busy = true;
    clearTimeout(timer);
    try {
      const list = await getJSON("/api/runs");
      chooseRun(list.runs);
      renderRuns(list);
      if (state.selected) await renderRun(state.generation);
      byId("status").textContent = list.runs.length + " runs · updated " + new Date().toLocaleTimeString();
      document.body.dataset.polls = String(Number(document.body.dataset.polls || 0) + 1);
    } catch (error) {
      byId("status").textContent = "cannot read the dashboard's API: " + error.message;
    }
    busy = false;
    if (again) { again = false; poll(); } else timer = setTimeout(poll, INTERVAL);
  }
  window.addEventListener("hashchange", poll);
  byId("log-values").addEventListener("change", function () { if (state.detail) renderHistory(state.detail); });
  poll();
})();
