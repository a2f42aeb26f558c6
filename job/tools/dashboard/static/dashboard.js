/* foldstream dashboard: one EventSource on /events, charts drawn by uPlot (vendored).
 *
 * The server pushes two events: "overview" (every stream's headline and the sources, every
 * second) and "stream" (what this page lacks of the chosen stream and measure: per curve the
 * points from index `from`, and the stream's tables whole). The page keeps exactly the points
 * the server keeps (its bounded history), and redraws at most once per animation frame.
 */
"use strict";
(function () {
  const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  const P_FLOOR = 1e-12;  // a p-value of 0 is drawn here on the log axis
  const CHART_HEIGHT = 300;

  const params = new URLSearchParams(location.search);
  const page = {
    key: params.get("stream"),
    measure: params.get("measure"),
    band: params.get("band") === "std" ? "std" : "minmax",
    overview: null,
    meta: null,
    series: emptySeries(),
    charts: {},
    signatures: {},
    yRanges: {},  // per chart: the y range to draw, or null for uPlot's own
    measureShown: [],  // the learners of the measure chart, as indices into meta.learners
    received: 0,
    source: null,
    frame: 0,
  };
  window.foldstreamDashboard = page;  // for tests, and for the curious in the console

  const $ = (id) => document.getElementById(id);

  function emptySeries() {
    return {measure: {}, window: {}, pvalues: {}, sequential: {}};
  }

  function color(i, alpha) {
    const hex = PALETTE[((i % PALETTE.length) + PALETTE.length) % PALETTE.length];
    if (alpha === undefined) return hex;
    const n = parseInt(hex.slice(1), 16);
    return `rgba(${n >> 16},${(n >> 8) & 255},${n & 255},${alpha})`;
  }

  // ------------------------------------------------------------------ formatting
  function fmt(v, digits = 3) {
    return v === null || v === undefined || Number.isNaN(v) ? "—" : v.toFixed(digits);
  }
  function fmtP(v) {
    if (v === null || v === undefined) return "—";
    return v >= 1e-4 ? v.toFixed(4) : v.toExponential(1);
  }
  function fmtInt(v) {
    return v === null || v === undefined ? "—" : Math.round(v).toLocaleString("en-US");
  }
  function esc(text) {
    return String(text).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;",
                                                      '"': "&quot;", "'": "&#39;"}[c]));
  }

  // ------------------------------------------------------------------- the events
  function connect() {
    if (page.source) page.source.close();
    const query = new URLSearchParams();
    if (page.key) query.set("stream", page.key);
    if (page.measure) query.set("measure", page.measure);
    const source = new EventSource("events?" + query.toString());
    source.addEventListener("overview", (e) => { page.overview = JSON.parse(e.data); schedule(); });
    source.addEventListener("stream", (e) => onStream(JSON.parse(e.data)));
    source.onopen = () => setConnection("live", "live");
    source.onerror = () => setConnection("down", "reconnecting…");
    page.source = source;
  }

  function setConnection(cls, text) {
    const el = $("connection");
    el.className = "pill " + cls;
    el.textContent = text;
  }

  function onStream(message) {
    if (message.reset) page.series = emptySeries();
    page.key = message.key;
    page.measure = message.measure;
    page.meta = message.meta;
    for (const [group, members] of Object.entries(message.series)) {
      for (const [name, delta] of Object.entries(members)) apply(page.series[group], name, delta);
    }
    page.received += 1;
    remember();
    schedule();
  }

  function apply(group, name, delta) {
    const curve = group[name] || (group[name] = {x: [], c: {}});
    curve.x.length = Math.min(curve.x.length, delta.from);
    for (const x of delta.x) curve.x.push(x);
    for (const [column, values] of Object.entries(delta.c)) {
      const target = curve.c[column] || (curve.c[column] = []);
      target.length = Math.min(target.length, delta.from);
      for (const v of values) target.push(v);
    }
  }

  function remember() {  // the choices in the address, so that a link shows the same view
    const query = new URLSearchParams();
    if (page.key) query.set("stream", page.key);
    if (page.measure) query.set("measure", page.measure);
    if (page.band !== "minmax") query.set("band", page.band);
    history.replaceState(null, "", "?" + query.toString());
  }

  function schedule() {
    if (!page.frame) page.frame = requestAnimationFrame(() => { page.frame = 0; render(); });
  }

  // -------------------------------------------------------------------- rendering
  function render() {
    renderSelectors();
    renderHeadline();
    if (!page.meta) return;
    renderMeasureChart();
    renderWindowChart();
    renderPvalueChart();
    renderSequentialChart();
    renderTests();
    renderChanges();
    renderRanksAndAlarms();
  }

  function fillSelect(select, options, chosen) {
    const wanted = options.map((o) => o.value + "\u0000" + o.label).join("\u0001");
    if (select.dataset.options !== wanted) {
      select.innerHTML = options.map((o) =>
        `<option value="${esc(o.value)}">${esc(o.label)}</option>`).join("");
      select.dataset.options = wanted;
    }
    if (chosen !== null && chosen !== undefined && select.value !== chosen) select.value = chosen;
  }

  function renderSelectors() {
    const streams = page.overview ? page.overview.streams : [];
    fillSelect($("stream"), streams.map((s) => ({value: s.key, label: s.key})), page.key);
    const measures = page.meta ? page.meta.measures : [];
    fillSelect($("measure"), measures.map((m) => ({value: m, label: m})), page.measure);
    $("band").value = page.band;
  }

  function renderHeadline() {
    const overview = page.overview;
    const errors = overview ? overview.sources.filter((s) => s.error) : [];
    $("sources").innerHTML = errors.map((s) =>
      `<div>${esc(s.source)}: ${esc(s.error)} (retrying)</div>`).join("");
    const skipped = overview ? overview.sources.reduce((n, s) => n + s.skipped, 0) : 0;
    const notes = [];
    if (overview) {
      notes.push(`history: at most ${fmtInt(overview.history)} points per curve (thinned beyond)`);
      notes.push(`sources: ${overview.sources.map((s) => esc(s.source)).join(", ")}`);
    }
    if (skipped) {
      const last = overview.sources.flatMap((s) => s.skipped_messages).slice(-1)[0] || "";
      notes.push(`<span title="${esc(last)}">${fmtInt(skipped)} lines were not records ` +
                 `(latest: ${esc(last.slice(0, 160))})</span>`);
    }
    $("footer").innerHTML = notes.join(" · ");
    const headline = overview && overview.streams.find((s) => s.key === page.key);
    if (!headline) return;
    $("stream-name").textContent = `stream ${headline.name}` +
      (headline.source ? ` · ${headline.source}` : "");
    const position = $("position");
    const at = Math.max(headline.position, page.meta ? page.meta.position : 0);
    position.textContent = fmtInt(at);
    position.dataset.position = String(at);
    $("rate").textContent = headline.rate === null ? "—" : `${fmtInt(headline.rate)} examples/s`;
    $("age").textContent = headline.age === null ? "—" : `${headline.age.toFixed(1)} s ago`;
    const source = overview.sources.find((s) => s.source === headline.source) ||
      overview.sources[0];
    const behind = source ? source.behind : null;
    $("behind-box").hidden = behind === null || behind === undefined;
    $("behind").textContent = `${fmtInt(behind)} messages`;
    $("records").textContent = fmtInt(headline.records);
    $("alarm-count").textContent = fmtInt(headline.alarms);
    $("rejected").textContent = fmtInt(headline.rejected);
    const meta = page.meta;
    if (meta && meta.setup) {
      const s = meta.setup;
      $("setup").textContent = `${s.mode}, ${s.folds} ${s.folds === 1 ? "fold" : "folds"}, ` +
        `${s.prequential ? "prequential" : "holdout"}, window ${s.window}; ` +
        `learners: ${meta.learners.join(", ")}`;
    }
    const finished = $("finished");
    finished.hidden = !(meta && meta.summary);
    if (meta && meta.summary) {
      const s = meta.summary;
      finished.textContent = `finished: ${fmtInt(s.examples_read)} records read, ` +
        `${fmtInt(s.examples_rejected)} rejected, ${fmt(s.wall_time_s, 1)} s ` +
        `(${fmtInt(s.examples_per_second)} examples/s)`;
    }
  }

  // ------------------------------------------------------------------------ charts
  function chartWidth(el) {
    return Math.max(300, Math.floor(el.getBoundingClientRect().width));
  }

  /* Create the chart when its series changed, else give it the new data. */
  function draw(name, signature, makeOptions, data) {
    const el = $("chart-" + name);
    let chart = page.charts[name];
    if (!chart || page.signatures[name] !== signature) {
      if (chart) chart.destroy();
      el.innerHTML = "";
      chart = new uPlot(makeOptions(chartWidth(el)), data, el);
      page.charts[name] = chart;
      page.signatures[name] = signature;
    } else {
      chart.setData(data);
    }
    return chart;
  }

  function clearChart(name, text) {
    if (page.charts[name]) { page.charts[name].destroy(); delete page.charts[name]; }
    delete page.signatures[name];
    $("chart-" + name).innerHTML = `<div class="empty">${esc(text)}</div>`;
    $("legend-" + name).innerHTML = "";
  }

  function percentile(values, q) {
    if (!values.length) return NaN;
    const sorted = values.slice().sort((a, b) => a - b);
    const at = (sorted.length - 1) * q / 100;
    const lo = Math.floor(at), hi = Math.ceil(at);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
  }

  /* The y range of mean curves and bands, as plot.py's _robust_ylim: the means and the 5th to
   * 95th percentiles of the band edges, so that one fold just reset by ADWIN (a kappa of -6
   * over a handful of examples) does not flatten every curve. */
  function robustRange(means, lows, highs) {
    const defined = (a) => a.filter((v) => v !== null && v !== undefined && !Number.isNaN(v));
    const m = defined(means), lo = defined(lows), hi = defined(highs);
    if (!m.length) return null;
    let bottom = Math.min(Math.min(...m), lo.length ? percentile(lo, 5) : Infinity);
    let top = Math.max(Math.max(...m), hi.length ? percentile(hi, 95) : -Infinity);
    const pad = 0.05 * (top - bottom) || 0.05;
    return [bottom - pad, top + pad];
  }

  function bandOptions(name, width, learners, yLabel, extraHooks) {
    const series = [{label: "position"}];
    const bands = [];
    learners.forEach((learner) => {
      const at = series.length, i = page.meta.learners.indexOf(learner);  // its colour
      series.push({label: learner, stroke: color(i), width: 2, spanGaps: false});
      const edge = {stroke: color(i, 0.35), width: 1, points: {show: false}};
      series.push(Object.assign({label: `${learner} low`}, edge));
      series.push(Object.assign({label: `${learner} high`}, edge));
      bands.push({series: [at + 2, at + 1], fill: color(i, 0.15)});
    });
    return {
      width, height: CHART_HEIGHT, series, bands,
      legend: {show: false},
      scales: {x: {time: false}, y: {range: (u, min, max) =>
        page.yRanges[name] || uPlot.rangeNum(min, max, 0.1, true)}},
      axes: [{label: "position (examples)"}, {label: yLabel, size: 60}],
      cursor: {drag: {x: true, y: false}},
      hooks: Object.assign({setCursor: [(u) => u.onCursor && u.onCursor(u)]}, extraHooks || {}),
    };
  }

  /* The joined data [x, mean1, low1, high1, mean2, ...] of per-learner curves. */
  function bandData(group, learners, pick) {
    const tables = learners.map((name) => {
      const curve = group[name] || {x: [], c: {}};
      const [mean, low, high] = pick(curve);
      return [curve.x, mean, low, high];
    });
    return tables.length ? uPlot.join(tables) : [[]];
  }

  function minmax(curve) {
    return [curve.c.mean || [], curve.c.min || [], curve.c.max || []];
  }

  function meanStd(curve) {
    const mean = curve.c.mean || [], std = curve.c.std || [];
    const off = (sign) => mean.map((m, i) => (m === null || std[i] === null || std[i] === undefined
      ? null : m + sign * std[i]));
    return [mean, off(-1), off(1)];
  }

  function legend(name, items) {
    const box = $("legend-" + name);
    box.innerHTML = items.map((it) =>
      `<span class="item"><span class="swatch${it.dashed ? " dashed" : ""}"></span>` +
      esc(it.label) +
      (it.value ? ` <span class="value">${esc(it.value)}</span>` : "") + `</span>`).join("");
    // Colours set through the DOM, not in a style attribute: the Content-Security-Policy
    // allows no inline style.
    box.querySelectorAll(".swatch").forEach((swatch, i) => {
      swatch.style.background = items[i].color;
      swatch.style.borderColor = items[i].color;
    });
  }

  function lastDefined(values, upTo) {
    for (let i = Math.min(upTo, values.length - 1); i >= 0; i--) {
      if (values[i] !== null && values[i] !== undefined) return i;
    }
    return -1;
  }

  function renderMeasureChart() {
    const meta = page.meta, measure = page.measure, learners = meta.learners;
    const bandName = page.band === "std" ? "mean ± std" : "min–max of folds";
    const folds = meta.setup ? meta.setup.folds : "the";
    $("measure-title").textContent = `${measure}: mean over ${folds} folds per learner, ` +
      `band ${bandName}`;
    const shown = learners.filter((n) => page.series.measure[n]);
    if (!measure || !shown.length) {
      clearChart("measure", "no values of this measure yet");
      return;
    }
    const data = bandData(page.series.measure, shown, page.band === "std" ? meanStd : minmax);
    page.measureShown = shown.map((n) => learners.indexOf(n));
    const means = [], lows = [], highs = [];
    shown.forEach((_, i) => {
      for (const v of data[1 + 3 * i]) means.push(v);
      for (const v of data[2 + 3 * i]) lows.push(v);
      for (const v of data[3 + 3 * i]) highs.push(v);
    });
    page.yRanges.measure = robustRange(means, lows, highs);
    const chart = draw("measure", `${measure}|${page.band}|${shown.join("|")}`,
      (width) => bandOptions("measure", width, shown, measure, {draw: [drawAlarms]}), data);
    chart.onCursor = (u) => measureLegend(u, shown);
    measureLegend(chart, shown);
  }

  function measureLegend(u, shown) {
    const idx = u.cursor.idx;
    legend("measure", shown.map((name, i) => {
      const mean = u.data[1 + 3 * i], low = u.data[2 + 3 * i], high = u.data[3 + 3 * i];
      const at = idx === null || idx === undefined ? lastDefined(mean, mean.length - 1) : idx;
      const value = at < 0 ? "" :
        `${fmt(mean[at])} [${fmt(low[at])}, ${fmt(high[at])}] at ${fmtInt(u.data[0][at])}`;
      const alarms = page.meta.alarms.filter((a) => a[1] === page.measureShown[i]).length;
      return {label: name, color: color(page.meta.learners.indexOf(name)),
              value: value + (alarms ? ` · ${alarms} alarms` : "")};
    }));
  }

  /* Drifts (else alarms) as ticks at the bottom of the plot, one row per learner. */
  function drawAlarms(u) {
    // drifts lead; a file without them (older, or consensus off) shows each fold's alarms
    const alarms = !page.meta ? [] : page.meta.drifts.length ? page.meta.drifts : page.meta.alarms;
    if (!alarms.length) return;
    const ctx = u.ctx, ratio = uPlot.pxRatio, tick = 7 * ratio;
    const [xMin, xMax] = [u.scales.x.min, u.scales.x.max];
    const rows = Math.max(1, page.measureShown.length);
    ctx.save();
    ctx.lineWidth = 1.5 * ratio;
    for (const [position, learner] of alarms) {
      const row = page.measureShown.indexOf(learner);
      if (row < 0 || position < xMin || position > xMax) continue;
      const x = Math.round(u.valToPos(position, "x", true));
      const bottom = u.bbox.top + u.bbox.height - (rows - 1 - row) * (tick + 2 * ratio);
      ctx.strokeStyle = color(learner);
      ctx.beginPath();
      ctx.moveTo(x, bottom);
      ctx.lineTo(x, bottom - tick);
      ctx.stroke();
    }
    ctx.restore();
  }

  function renderWindowChart() {
    const learners = page.meta.learners.filter((n) => page.series.window[n]);
    if (!learners.length) { clearChart("window", "no reports yet"); return; }
    const data = bandData(page.series.window, learners, minmax);
    const chart = draw("window", learners.join("|"),
      (width) => bandOptions("window", width, learners, "examples"), data);
    legend("window", learners.map((name, i) => {
      const mean = data[1 + 3 * i], at = lastDefined(mean, mean.length - 1);
      return {label: name, color: color(page.meta.learners.indexOf(name)),
              value: at < 0 ? "" : fmtInt(mean[at])};
    }));
  }

  function renderPvalueChart() {
    const meta = page.meta, pairs = meta.pairs, pmeasure = meta.pmeasure;
    const names = pairs.map(([a, b]) => `${a}|${b}`).filter((n) => page.series.pvalues[n]);
    if (!pmeasure || !names.length) {
      $("pvalues-title").textContent = "paired tests over folds: p-values";
      clearChart("pvalues", "no comparisons (one learner, or none reported yet)");
      return;
    }
    const note = pmeasure === page.measure ? "" : ` (${page.measure} is not compared)`;
    $("pvalues-title").textContent = `paired tests over folds on ${pmeasure}${note}: ` +
      `p-values (log), below α the pair differs`;
    const floor = (v) => (v === null || v === undefined ? null : Math.max(v, P_FLOOR));
    const tables = names.map((n) => {
      const c = page.series.pvalues[n];
      return [c.x, c.c.wilcoxon.map(floor), c.c.sign.map(floor)];
    });
    const data = uPlot.join(tables);
    const alpha = meta.alpha;
    data.push(data[0].map(() => alpha));
    const series = [{label: "position"}];
    names.forEach((n, i) => {
      const label = n.replace("|", " vs ");
      series.push({label: `${label}: Wilcoxon`, stroke: color(i), width: 2});
      series.push({label: `${label}: sign`, stroke: color(i), width: 1.5, dash: [6, 4]});
    });
    series.push({label: `α = ${alpha}`, stroke: "#d62728", width: 1, dash: [2, 3],
                 points: {show: false}});
    draw("pvalues", names.join(",") + "|" + pmeasure, (width) => ({
      width, height: CHART_HEIGHT, series, legend: {show: false},
      scales: {x: {time: false}, y: {distr: 3, range: (u, min, max) =>
        [Math.min(min > 0 ? min : 1, alpha > 0 ? alpha / 2 : 0.01, 0.01), 1]}},
      axes: [{label: "position (examples)"}, {label: "p-value", size: 60}],
      cursor: {drag: {x: true, y: false}},
    }), data);
    const items = [];
    names.forEach((n, i) => {
      const t = page.series.pvalues[n];
      const k = t.x.length - 1;
      items.push({label: `${n.replace("|", " vs ")}: Wilcoxon`, color: color(i),
                  value: k < 0 ? "" : fmtP(t.c.wilcoxon[k])});
      items.push({label: "sign", color: color(i), dashed: true,
                  value: k < 0 ? "" : fmtP(t.c.sign[k])});
    });
    items.push({label: `α = ${alpha}`, color: "#d62728", dashed: true});
    legend("pvalues", items);
  }

  function renderSequentialChart() {
    const names = Object.keys(page.series.sequential);
    $("card-sequential").hidden = !names.length;
    if (!names.length) return;
    const data = uPlot.join(names.map((n) => {
      const c = page.series.sequential[n];
      return [c.x, c.c.estimate, c.c.lower, c.c.upper];
    }));
    data.push(data[0].map(() => 0));
    const series = [{label: "position"}];
    const bands = [];
    names.forEach((n, i) => {
      const at = series.length;
      series.push({label: n.replace("|", " − "), stroke: color(i), width: 2});
      series.push({label: "lower", stroke: color(i, 0.4), width: 1, points: {show: false}});
      series.push({label: "upper", stroke: color(i, 0.4), width: 1, points: {show: false}});
      bands.push({series: [at + 2, at + 1], fill: color(i, 0.15)});
    });
    series.push({label: "0", stroke: "#444", width: 1, dash: [3, 3], points: {show: false}});
    draw("sequential", names.join(","), (width) => ({
      width, height: CHART_HEIGHT, series, bands, legend: {show: false},
      scales: {x: {time: false}},
      axes: [{label: "position (examples)"}, {label: "error(a) − error(b)", size: 60}],
      cursor: {drag: {x: true, y: false}},
    }), data);
    const live = Object.fromEntries(page.meta.live.filter((v) => v.scope === "stream")
      .map((v) => [`${v.a}|${v.b}`, v]));
    legend("sequential", names.map((n, i) => {
      const v = live[n];
      return {label: n.replace("|", " − "), color: color(i),
              value: v ? `${v.head}, [${fmt(v.lower, 4)}, ${fmt(v.upper, 4)}]` : ""};
    }));
  }

  // ------------------------------------------------------------------------ tables
  function numCell(text, cls) {
    return `<td class="num${cls ? " " + cls : ""}">${text}</td>`;
  }

  /* One row per pair and compared measure; a pair's live verdict (about accuracy, the 0/1
   * loss of docs/method.md §12) on its first row. */
  function renderTests() {
    const meta = page.meta;
    const scoped = (scope) => new Map(meta.live.filter((v) => v.scope === scope)
      .map((v) => [`${v.a}|${v.b}`, v]));
    const live = scoped("stream"), regime = scoped("regime");
    const alpha = meta.alpha;
    $("tests-title").textContent = "pairs: fold tests at the latest report" +
      (alpha === null ? "" : ` (α = ${alpha})`) + (live.size ? ", and live verdicts" : "");
    const heads = ["pair", "measure", "#Wilcoxon p", "#sign p", "#wins", "fold tests say"];
    if (live.size) heads.push("live verdict", "#interval", "#n", "#α per pair");
    if (regime.size) heads.push("since the last change");
    let html = "<thead><tr>" + heads.map((h) => h.startsWith("#")
      ? `<th class=num>${esc(h.slice(1))}</th>` : `<th>${esc(h)}</th>`).join("") +
      "</tr></thead><tbody>";
    const pairs = meta.pairs.map(([a, b]) => `${a}|${b}`);
    for (const key of live.keys()) if (!pairs.includes(key)) pairs.push(key);  // verdicts only
    const rejects = (p) => p !== null && alpha !== null && p < alpha;
    for (const key of pairs) {
      const [a, b] = key.split("|");
      const tests = meta.tests.filter((t) => t.a === a && t.b === b);
      (tests.length ? tests : [null]).forEach((t, i) => {
        html += `<tr data-pair="${esc(key)}"><td>${esc(a)} vs ${esc(b)}</td>`;
        html += t ? `<td>${esc(t.measure)}</td>` +
          numCell(fmtP(t.wilcoxon), rejects(t.wilcoxon) ? "reject" : "") +
          numCell(fmtP(t.sign), rejects(t.sign) ? "reject" : "") +
          numCell(`${t.wins[0]}:${t.wins[1]}`) + `<td>${esc(t.verdict)}</td>`
          : "<td>—</td>" + numCell("—") + numCell("—") + numCell("—") + "<td>—</td>";
        const v = i === 0 ? live.get(key) : undefined;
        if (v) {
          const cls = v.decided ? "verdict-decided" : "verdict-undecided";
          html += `<td class="${cls}" title="${esc(v.text)}">${esc(v.label)}</td>` +
            numCell(`[${fmt(v.lower, 4)}, ${fmt(v.upper, 4)}]`) + numCell(fmtInt(v.n)) +
            numCell(v.alpha === null ? "—" : v.alpha.toPrecision(3));
        } else if (live.size) {
          html += "<td></td>" + numCell("") + numCell("") + numCell("");
        }
        const r = i === 0 ? regime.get(key) : undefined;
        if (r) {
          const cls = r.decided ? "verdict-decided" : "verdict-undecided";
          html += `<td class="${cls}" title="${esc(r.text)}">${esc(r.label)}</td>`;
        } else if (regime.size) {
          html += "<td></td>";
        }
        html += "</tr>";
      });
    }
    $("tests").innerHTML = html + "</tbody>";
    $("disagreements").innerHTML = meta.disagreements.map((text) =>
      `<p class="note">${esc(text)}</p>`).join("");
  }

  function renderChanges() {
    const changes = page.meta.changes;
    if (!changes.length) {
      $("changes").innerHTML = "<tbody><tr><td class=dim>no live verdict has changed " +
        "(the records carry none, or every pair is still undecided)</td></tr></tbody>";
      return;
    }
    $("changes").innerHTML = "<thead><tr><th class=num>position</th><th>pair</th><th>from</th>" +
      "<th>to</th><th class=num>interval</th></tr></thead><tbody>" +
      changes.map((v) => "<tr>" + numCell(fmtInt(v.position)) +
        `<td>${esc(v.a)} vs ${esc(v.b)}</td><td>${esc(v.previous_head || "")}</td>` +
        `<td class=verdict-decided title="${esc(v.text)}">${esc(v.label)}</td>` +
        numCell(`[${fmt(v.lower, 4)}, ${fmt(v.upper, 4)}]`) + "</tr>").join("") + "</tbody>";
  }

  function renderRanksAndAlarms() {
    const meta = page.meta;
    $("rankings").innerHTML = meta.rankings.length ? meta.rankings.map((r) =>
      `<div class="rank-row"><b>${esc(r.measure)}</b> at ${fmtInt(r.position)}: ` +
      r.ranks.map(([n, rank]) => `${esc(n)} ${fmt(rank, 2)}`).join(", ") +
      `; Friedman p ${fmtP(r.friedman)}; Nemenyi CD ${fmt(r.cd, 2)}</div>`).join("")
      : "<div class=dim>ranks need three or more learners</div>";
    const drifts = meta.drifts.slice(-8).reverse();
    $("drifts").innerHTML = drifts.length
      ? "<thead><tr><th class=num>position</th><th>learner</th><th>detector</th>" +
        "<th>folds</th><th class=num>first alarm</th></tr></thead><tbody>" +
        drifts.map(([p, li, det, folds, first]) => "<tr>" + numCell(fmtInt(p)) +
          `<td>${esc(meta.learners[li] || "?")}</td><td>${esc(det)}</td>` +
          `<td>${esc(folds.join(", "))}</td>` + numCell(fmtInt(first)) + "</tr>").join("") +
        "</tbody>"
      : "<tbody><tr><td class=dim>no drifts (the records carry none, or the folds have not " +
        "agreed on one)</td></tr></tbody>";
    const alarms = meta.alarms.slice(-8).reverse();
    $("alarms").innerHTML = alarms.length
      ? "<thead><tr><th class=num>position</th><th>learner</th><th class=num>fold</th>" +
        "<th>detector</th></tr></thead><tbody>" +
        alarms.map(([p, li, fold, det]) => "<tr>" + numCell(fmtInt(p)) +
          `<td>${esc(meta.learners[li] || "?")}</td>` + numCell(fold) +
          `<td>${esc(det)}</td></tr>`).join("") + "</tbody>"
      : "<tbody><tr><td class=dim>no alarms yet</td></tr></tbody>";
  }

  // ---------------------------------------------------------------------- controls
  $("stream").addEventListener("change", (e) => {
    page.key = e.target.value; page.meta = null; page.series = emptySeries();
    remember(); connect();
  });
  $("measure").addEventListener("change", (e) => {
    page.measure = e.target.value; remember(); connect();
  });
  $("band").addEventListener("change", (e) => {
    page.band = e.target.value; remember(); schedule();
  });
  new ResizeObserver(() => {
    for (const [name, chart] of Object.entries(page.charts)) {
      const width = chartWidth($("chart-" + name));
      if (Math.abs(width - chart.width) > 2) chart.setSize({width, height: CHART_HEIGHT});
    }
  }).observe(document.querySelector("main"));

  connect();
})();
