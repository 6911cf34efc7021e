// The export page (issue 21): a format, filters and media sent to POST /api/projects/<slug>/exports/,
// which queues the export as a job; the list below shows each export's progress (polled while one
// waits or runs) and, once done, its download link, or says that nothing matched.
import { send } from "./http.js";

const config = JSON.parse(document.getElementById("export-config").textContent);
const form = document.getElementById("export-form");
const media = document.getElementById("with-media");
const mediaNote = document.getElementById("media-note");
const status = document.getElementById("export-status");
const list = document.getElementById("exports");
const none = document.getElementById("exports-none");
let timer = null;

// A format whose items are videos (lmms-eval) always comes with its clips.
function formatChanged() {
  const chosen = form.querySelector("input[name=format]:checked");
  const needs = chosen && chosen.hasAttribute("data-needs-media");
  if (needs) media.checked = true;
  media.disabled = !!needs;
  mediaNote.hidden = !needs;
}

function size(bytes) {
  if (bytes >= 1 << 20) return (bytes / (1 << 20)).toFixed(1) + " MB";
  if (bytes >= 1 << 10) return Math.ceil(bytes / (1 << 10)) + " kB";
  return bytes + " bytes";
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function line(job) {
  const li = document.createElement("li");
  li.className = "export-item";
  li.dataset.status = job.status;
  li.dataset.id = job.id;
  const head = document.createElement("div");
  const what = document.createElement("strong");
  what.textContent = job.label;
  head.append(what);
  const filters = Object.entries(job.filters).map(([k, v]) => `${k.replace("_", " ")} ${v}`);
  const details = [job.with_media ? "with clips" : "no media", ...filters];
  head.append(" · " + details.join(" · "));
  li.append(head);
  const state = document.createElement("div");
  state.className = "export-state";
  if (job.status === "queued") {
    state.textContent = "Waiting for a worker…";
  } else if (job.status === "running") {
    const bar = document.createElement("progress");
    bar.max = job.total || 1;
    bar.value = job.done;
    bar.setAttribute("aria-label", `Export ${job.id} progress`);
    state.append(bar, job.total === null ? " counting the QA pairs…" : ` ${job.done} of ${plural(job.total, "QA pair")} written`);
  } else if (job.status === "failed") {
    state.className += " error";
    state.textContent = "Failed: " + (job.error || "the worker gave no reason");
  } else if (job.empty) {
    state.textContent = "No verified QA pair matches these filters: nothing to download.";
  } else {
    state.append(`${plural(job.rows, "QA pair")} · `);
    const link = document.createElement("a");
    link.href = job.download;
    link.className = "button";
    link.textContent = `Download ${job.label} (zip, ${size(job.size)})`;
    state.append(link);
    if (job.media_failures.length) {
      state.append(` · ${plural(job.media_failures.length, "clip")} could not be cut`);
    }
  }
  li.append(state);
  return li;
}

function render(jobs) {
  list.replaceChildren(...jobs.map(line));
  none.hidden = jobs.length > 0;
  const busy = jobs.some((j) => j.status === "queued" || j.status === "running");
  clearTimeout(timer);
  timer = busy ? setTimeout(refresh, 1000) : null;
}

async function refresh() {
  try {
    const response = await fetch(config.listUrl, { credentials: "same-origin" });
    if (response.ok) render(await response.json());
    else status.textContent = `Could not read the exports (${response.status}).`;
  } catch (err) {
    status.textContent = "Could not reach the server; retrying.";
    clearTimeout(timer);
    timer = setTimeout(refresh, 3000);
  }
}

form.addEventListener("change", (event) => {
  if (event.target.name === "format") formatChanged();
});

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const data = new FormData(form);
  const body = { format: data.get("format"), with_media: media.checked };
  for (const key of ["qa_type", "provenance", "source", "illumination"]) body[key] = data.get(key) || "";
  const button = document.getElementById("export-start");
  button.disabled = true;
  status.textContent = "Starting…";
  try {
    const response = await send(config.listUrl, body);
    const answer = await response.json().catch(() => ({}));
    if (response.status === 202) {
      status.textContent = `Export ${answer.label} started.`;
      await refresh();
    } else {
      const errors = Object.values(answer.errors || {}).join("; ");
      status.textContent = (answer.detail || `Could not start the export (${response.status}).`) + (errors ? ` (${errors})` : "");
    }
  } catch (err) {
    status.textContent = "Could not reach the server: nothing was started.";
  } finally {
    button.disabled = false;
  }
});

formatChanged();
refresh();
