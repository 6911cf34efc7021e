// The study results dashboard: bars of the kind's metrics per condition (and subtask), humans beside
// models, with 95% confidence intervals as whiskers; Likert mean ratings per group and criterion; and
// histograms of the client response time per condition. Drawn with Chart.js and its error-bar plugin
// (vendored, pinned: static/vendor/chartjs-4.6.1, chartjs-chart-error-bars-4.4.5), which need no
// eval, from data the server built ready to plot (annotator/studies/dashboard.py) and put in the
// page's json_script block (the CSP forbids inline script). The "include excluded participants"
// box swaps every chart and the score table between the two views the server sent.
const { BarWithErrorBarsController, BarWithErrorBar } = window.ChartErrorBars;
Chart.register(BarWithErrorBarsController, BarWithErrorBar);

const data = JSON.parse(document.getElementById("results-data").textContent);
const HUMAN = "#1a7f37";
const MODELS = ["#1f6feb", "#bf3989", "#9a6700", "#8250df", "#cf222e", "#0a7b83", "#57606a"];
const GROUPS = { real: "#1a7f37", random_matched: "#bc4c00", filtered: "#6e7781", "": "#1a7f37" };
const charts = [];

function fixed(x, digits) {
  return x === null || x === undefined ? "–" : Number(x).toFixed(digits);
}

// One colour per series: humans green, each model its own; for Likert the group's colour, models paler.
function colour(series, index, models) {
  if (series.group !== undefined) {
    const base = GROUPS[series.group] || MODELS[index % MODELS.length];
    return series.respondent === "human" ? base : base + "80";
  }
  return series.respondent === "human" ? HUMAN : MODELS[models.indexOf(series.respondent) % MODELS.length];
}

function barData(spec) {
  const models = spec.series.map((s) => s.respondent).filter((r) => r !== "human");
  return {
    labels: spec.categories,
    datasets: spec.series.map((s, i) => {
      const c = colour(s, i, models);
      return { label: s.label, data: s.points, backgroundColor: c, borderColor: c, borderWidth: 1 };
    }),
  };
}

function barChart(canvas, spec) {
  return new Chart(canvas, {
    type: BarWithErrorBarsController.id,
    data: barData(spec),
    options: {
      responsive: true,
      aspectRatio: 2.4,
      scales: {
        x: { title: { display: true, text: spec.categoryAxis } },
        y: { min: spec.low, max: spec.high, title: { display: true, text: spec.axis } },
      },
      plugins: {
        title: { display: true, text: spec.title + ": mean and 95% confidence interval" },
        legend: { display: true, position: "top" },
        tooltip: {
          callbacks: {
            label(ctx) {
              const p = ctx.raw || {};
              if (p.y === null || p.y === undefined) return ctx.dataset.label + ": no scores";
              return `${ctx.dataset.label}: ${fixed(p.y, 3)} [${fixed(p.yMin, 3)}, ${fixed(p.yMax, 3)}], n = ${p.n}`;
            },
          },
        },
      },
    },
  });
}

function rtData(rt) {
  return {
    labels: rt.labels,
    datasets: rt.series.map((s, i) => ({
      label: `${s.label} (n = ${s.n}${s.timed_out ? `, ${s.timed_out} timed out` : ""})`,
      data: s.counts,
      backgroundColor: MODELS[i % MODELS.length] + "b0",
      borderColor: MODELS[i % MODELS.length],
      borderWidth: 1,
    })),
  };
}

function rtChart(canvas, rt) {
  return new Chart(canvas, {
    type: "bar",
    data: rtData(rt),
    options: {
      responsive: true,
      aspectRatio: 2.8,
      scales: {
        x: { title: { display: true, text: "Client response time (s)" } },
        y: { beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: "Trials (count)" } },
      },
      plugins: {
        title: { display: true, text: "Response-time distribution per condition" },
        legend: { display: true, position: "top" },
      },
    },
  });
}

// Each chart: its canvas, how to draw it, and how to get its data out of a view.
function draw(view) {
  for (const spec of view.bars) {
    charts.push({ chart: barChart(document.getElementById(spec.id), spec), data: (v) => barData(v.bars.find((b) => b.id === spec.id)) });
  }
  if (view.likert) {
    charts.push({ chart: barChart(document.getElementById(view.likert.id), view.likert), data: (v) => barData(v.likert) });
  }
  charts.push({ chart: rtChart(document.getElementById("rt-hist"), view.rt), data: (v) => rtData(v.rt) });
}

function show(name) {
  const view = data.views[name];
  for (const { chart, data: of } of charts) {
    const next = of(view);
    chart.data.labels = next.labels;
    chart.data.datasets = next.datasets;
    chart.update();
  }
  for (const table of document.querySelectorAll("table[data-view]")) table.hidden = table.dataset.view !== name;
  document.getElementById("showing").textContent = name === "all"
    ? "Showing results with every participant, excluded ones included."
    : "Showing results without excluded participants.";
}

draw(data.views.kept);
const toggle = document.getElementById("include-excluded");
toggle.checked = false;
toggle.addEventListener("change", () => show(toggle.checked ? "all" : "kept"));
