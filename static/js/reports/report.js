// The benchmark report page: one bar chart per table, a bar per column (people, then each model) and
// split cell, with the 95% interval as whiskers, the value axis titled with the metric in words and
// held to its range. Drawn with Chart.js and its error-bar plugin (vendored, pinned:
// static/vendor/chartjs-4.6.1, chartjs-chart-error-bars-4.4.5) from data the server built
// (annotator/reports/views.py chart_data), read from the page's json_script block.
const { BarWithErrorBarsController, BarWithErrorBar } = window.ChartErrorBars;
Chart.register(BarWithErrorBarsController, BarWithErrorBar);

const HUMAN = ["#1a7f37", "#4ac26b", "#116329"];
const MODELS = ["#1f6feb", "#bf3989", "#9a6700", "#8250df", "#cf222e", "#0a7b83", "#57606a"];

function fixed(x) {
  return x === null || x === undefined ? "–" : Number(x).toFixed(3);
}

function colours(series) {
  let h = 0;
  let m = 0;
  return series.map((s) => (s.label.startsWith("human") ? HUMAN[h++ % HUMAN.length] : MODELS[m++ % MODELS.length]));
}

function draw(spec) {
  const canvas = document.getElementById(spec.id);
  if (!canvas) return;
  const cs = colours(spec.series);
  const y = { title: { display: true, text: spec.axis } };
  if (spec.low !== null) y.min = spec.low;
  if (spec.high !== null) y.max = spec.high;
  new Chart(canvas, {
    type: BarWithErrorBarsController.id,
    data: {
      labels: spec.categories,
      datasets: spec.series.map((s, i) => ({ label: s.label, data: s.points, backgroundColor: cs[i], borderColor: cs[i], borderWidth: 1 })),
    },
    options: {
      responsive: true,
      aspectRatio: 2.6,
      scales: { x: { title: { display: true, text: spec.categoryAxis } }, y },
      plugins: {
        title: { display: true, text: spec.title + ": mean and 95% interval" },
        legend: { display: true, position: "top" },
        tooltip: {
          callbacks: {
            label(ctx) {
              const p = ctx.raw || {};
              if (p.y === null || p.y === undefined) return ctx.dataset.label + ": no answers";
              return `${ctx.dataset.label}: ${fixed(p.y)} [${fixed(p.yMin)}, ${fixed(p.yMax)}], n = ${p.n}`;
            },
          },
        },
      },
    },
  });
}

for (const spec of JSON.parse(document.getElementById("report-data").textContent)) draw(spec);
