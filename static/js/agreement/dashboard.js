// The agreement dashboard: per scope and subset, each metric as a bar with its 95% interval (first
// round and after the consensus round side by side), the rater-by-rater agreement and the confusion
// of answers as heatmaps, and per scope a trend of every metric over the stored computations.
// Drawn with Chart.js, its error-bar plugin and its matrix plugin (vendored, pinned:
// static/vendor/chartjs-4.6.1, chartjs-chart-error-bars-4.4.5, chartjs-chart-matrix-3.1.0), none of
// which needs eval, from data the server built ready to plot (annotator/agreement/dashboard.py)
// and put in the page's json_script block (the CSP forbids inline script). Subsets other than the
// first of a scope sit in closed <details>; their charts are drawn when first opened.
const { BarWithErrorBarsController, BarWithErrorBar, ScatterWithErrorBarsController, PointWithErrorBar } = window.ChartErrorBars;
Chart.register(BarWithErrorBarsController, BarWithErrorBar, ScatterWithErrorBarsController, PointWithErrorBar);

const data = JSON.parse(document.getElementById("agreement-data").textContent);
const ROUND_COLOURS = { first: "#1f6feb", consensus: "#1a7f37" };
const LINES = ["#1f6feb", "#bf3989", "#9a6700", "#8250df", "#cf222e", "#0a7b83", "#57606a", "#1a7f37", "#bc4c00"];
const MISSING = "#eef0f3";

function fixed(x, digits) {
  return x === null || x === undefined ? "–" : Number(x).toFixed(digits);
}

function pad(n) {
  return String(n).padStart(2, "0");
}

// A time on the trend's axis, in the reader's time zone: 2025-03-04 14:05 (with seconds when asked).
function when(ms, seconds = false) {
  const d = new Date(ms);
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}` + (seconds ? `:${pad(d.getSeconds())}` : "");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}

// Blue shades from white (0) to dark blue (1); text white on the dark half.
function heat(share) {
  const t = Math.max(0, Math.min(1, share));
  const from = [247, 251, 255];
  const to = [8, 81, 156];
  const c = from.map((f, i) => Math.round(f + (to[i] - f) * t));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

function barChart(canvas, sub) {
  const bars = sub.bars;
  return new Chart(canvas, {
    type: BarWithErrorBarsController.id,
    data: {
      labels: bars.categories,
      datasets: bars.series.map((s) => ({
        label: s.label, data: s.points, round: s.round,
        backgroundColor: ROUND_COLOURS[s.round] + "b0", borderColor: ROUND_COLOURS[s.round], borderWidth: 1,
      })),
    },
    options: {
      responsive: true,
      aspectRatio: 1.25,
      scales: {
        x: { title: { display: true, text: "Metric" }, ticks: { autoSkip: false, maxRotation: 40 } },
        y: { min: bars.low, max: bars.high, title: { display: true, text: "Agreement (1 = perfect)" } },
      },
      plugins: {
        title: { display: true, text: "Each metric with its 95% interval" },
        legend: { display: true, position: "top" },
        tooltip: {
          callbacks: {
            label(ctx) {
              const p = ctx.raw || {};
              if (p.y === null || p.y === undefined) return `${ctx.dataset.label}: not measured`;
              return `${ctx.dataset.label}: ${fixed(p.y, 3)} [${fixed(p.yMin, 3)}, ${fixed(p.yMax, 3)}], ` +
                `${p.n_items} items, ${p.n_raters} raters`;
            },
          },
        },
      },
    },
  });
}

// Draws each cell's text (its value) in the middle of the cell.
const cellLabels = {
  id: "cellLabels",
  afterDatasetsDraw(chart) {
    const { ctx } = chart;
    const meta = chart.getDatasetMeta(0);
    const dataset = chart.data.datasets[0];
    ctx.save();
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    ctx.font = `${Math.max(9, Math.min(14, Math.floor((meta.data[0] || {}).height / 3) || 12))}px system-ui, sans-serif`;
    meta.data.forEach((element, i) => {
      const cell = dataset.data[i];
      if (!cell || element.width < 22 || element.height < 12) return;
      const { x, y } = element.getCenterPoint();
      ctx.fillStyle = cell.dark ? "#fff" : "#1d232a";
      ctx.fillText(cell.text, x, y);
    });
    ctx.restore();
  },
};

function matrixChart(canvas, labels, cells, axes, title, tooltip) {
  const n = labels.length;
  const skip = n > 16; // many raters: not every name fits on the axes (the table has them all)
  return new Chart(canvas, {
    type: "matrix",
    data: {
      datasets: [{
        label: title,
        data: cells,
        backgroundColor: (ctx) => (ctx.raw ? ctx.raw.colour : MISSING),
        borderColor: "#ffffff",
        borderWidth: 1,
        width: ({ chart }) => Math.max(1, (chart.chartArea || { width: 0 }).width / n - 1),
        height: ({ chart }) => Math.max(1, (chart.chartArea || { height: 0 }).height / n - 1),
      }],
    },
    options: {
      responsive: true,
      aspectRatio: 1.25,
      animation: false,
      scales: {
        x: { type: "category", labels, offset: true, grid: { display: false }, title: { display: true, text: axes[0] },
             ticks: { autoSkip: skip, maxRotation: 60 } },
        // Not reversed (the matrix chart's default for y is): the first row at the top, as in the table, so the
        // diagonal runs from top left to bottom right.
        y: { type: "category", labels, offset: true, reverse: false, grid: { display: false },
             title: { display: true, text: axes[1] }, ticks: { autoSkip: skip } },
      },
      plugins: {
        title: { display: true, text: title },
        legend: { display: false },
        tooltip: { callbacks: { title: () => "", label: (ctx) => tooltip(ctx.raw) } },
      },
    },
    plugins: [cellLabels],
  });
}

function ratersChart(canvas, raters) {
  const cells = [];
  raters.raters.forEach((a, i) => raters.raters.forEach((b, j) => {
    const v = raters.agreement[i][j];
    cells.push({
      x: b, y: a, v, n: raters.shared[i][j], text: v === null ? "–" : fixed(v, 2),
      colour: v === null ? MISSING : heat(v), dark: v !== null && v > 0.6,
    });
  }));
  return matrixChart(canvas, raters.raters, cells, ["Rater", "Rater"], "Percent agreement of each pair of raters",
    (c) => (c.v === null ? `${c.y} and ${c.x}: no shared item`
      : `${c.y} and ${c.x}: ${fixed(c.v, 3)} agreement on ${c.n} shared item${c.n === 1 ? "" : "s"}`));
}

function confusionChart(canvas, confusion) {
  const labels = confusion.categories.map(String);
  const top = Math.max(1, ...confusion.counts.flat());
  const cells = [];
  labels.forEach((a, i) => labels.forEach((b, j) => {
    const count = confusion.counts[i][j];
    cells.push({ x: b, y: a, count, text: String(count), colour: heat(count / top), dark: count / top > 0.6 });
  }));
  return matrixChart(canvas, labels, cells, ["Another rater's answer", "One rater's answer"],
    "Confusion: how often two raters' answers met",
    (c) => `${c.y} against ${c.x}: ${c.count} time${c.count === 1 ? "" : "s"}`);
}

function trendDatasets(subset) {
  return subset.series.map((s, k) => ({
    label: s.label,
    data: s.points,
    showLine: true,
    borderColor: LINES[k % LINES.length],
    backgroundColor: LINES[k % LINES.length],
    errorBarColor: LINES[k % LINES.length],
    errorBarWhiskerColor: LINES[k % LINES.length],
    pointRadius: 3,
    borderDash: s.round === "consensus" ? [6, 4] : [],
  }));
}

// With a single computation, the axis spans an hour either side of it.
function timeRange(subset) {
  const xs = subset.series.flatMap((s) => s.points.map((p) => p.x));
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  const margin = hi > lo ? (hi - lo) * 0.05 : 3600 * 1000;
  return { min: lo - margin, max: hi + margin };
}

function trendChart(canvas, subset) {
  const range = timeRange(subset);
  return new Chart(canvas, {
    type: ScatterWithErrorBarsController.id,
    data: { datasets: trendDatasets(subset) },
    options: {
      responsive: true,
      aspectRatio: 3,
      scales: {
        x: { type: "linear", min: range.min, max: range.max, title: { display: true, text: "Computed at (your local time)" },
             // Seconds on the ticks when the computations are less than an hour apart.
             ticks: { maxTicksLimit: 6, callback: (v, i, ticks) => when(v, ticks.at(-1).value - ticks[0].value < 3600e3) } },
        y: { title: { display: true, text: "Agreement (1 = perfect)" } },
      },
      plugins: {
        title: { display: true, text: `Trend: ${subset.title}` },
        legend: { display: true, position: "top" },
        tooltip: {
          callbacks: {
            label(ctx) {
              const p = ctx.raw || {};
              return `${ctx.dataset.label}, ${when(p.x, true)}: ${fixed(p.y, 3)} [${fixed(p.yMin, 3)}, ${fixed(p.yMax, 3)}], ` +
                `${p.n_items} items`;
            },
          },
        },
      },
    },
  });
}

function drawSubset(i, j) {
  const sub = data.scopes[i].subsets[j];
  const bars = document.getElementById(`bars-${i}-${j}`);
  if (bars && !Chart.getChart(bars)) barChart(bars, sub);
  const raters = document.getElementById(`raters-${i}-${j}`);
  if (raters && sub.raters && !Chart.getChart(raters)) ratersChart(raters, sub.raters);
  const confusion = document.getElementById(`confusion-${i}-${j}`);
  if (confusion && sub.confusion && !Chart.getChart(confusion)) confusionChart(confusion, sub.confusion);
}

data.scopes.forEach((scope, i) => {
  scope.subsets.forEach((_, j) => {
    const holder = document.querySelector(`.subset[data-scope-index="${i}"][data-subset-index="${j}"]`);
    if (!holder) return;
    if (holder.tagName !== "DETAILS" || holder.open) {
      drawSubset(i, j);
    } else {
      holder.addEventListener("toggle", () => { if (holder.open) drawSubset(i, j); });
    }
  });
  const canvas = document.getElementById(`trend-${i}`);
  if (!canvas || !scope.trend.subsets.length) return;
  const chart = trendChart(canvas, scope.trend.subsets[0]);
  const select = document.getElementById(`trend-subset-${i}`);
  select.value = "0";
  select.addEventListener("change", () => {
    const subset = scope.trend.subsets[Number(select.value)];
    const range = timeRange(subset);
    chart.data.datasets = trendDatasets(subset);
    chart.options.scales.x.min = range.min;
    chart.options.scales.x.max = range.max;
    chart.options.plugins.title.text = `Trend: ${subset.title}`;
    chart.update();
  });
});
