// Pipeline runs pages (templates/drafts/): while a run is queued or running, ask the API for its
// progress every few seconds and update the figures in place; stop once nothing on the page is in
// flight. The list page asks for its page of runs (GET /api/projects/<slug>/runs/?limit&offset),
// a run's page for that run (GET /api/runs/<id>/). On the start form, show only the stage
// selects of the chosen pipeline. Configuration comes from the page's json_script block
// (#runs-config), since the CSP forbids inline script. Text is set with textContent only.
const config = JSON.parse(document.getElementById("runs-config").textContent);
const ACTIVE = new Set(["queued", "running"]);

function setText(root, selector, text) {
  const el = root.querySelector(selector);
  if (el) el.textContent = text;
}

function finishedOf(v) {
  return v.done + v.failed + v.cancelled;
}

function setProgress(bar, v) {
  if (!bar) return;
  bar.max = Math.max(v.total, 1);
  bar.value = finishedOf(v);
  bar.textContent = `${finishedOf(v)} of ${v.total}`;
}

function cell(tag, text, className) {
  const el = document.createElement(tag);
  el.textContent = text;
  if (className) el.className = className;
  return el;
}

function row(cells) {
  const tr = document.createElement("tr");
  cells.forEach((c) => tr.appendChild(c));
  return tr;
}

function fillBody(table, rows, emptyText, columns) {
  const body = table.tBodies[0];
  body.replaceChildren();
  if (!rows.length) {
    const td = cell("td", emptyText, "muted");
    td.colSpan = columns;
    const tr = row([td]);
    tr.className = "empty";
    body.appendChild(tr);
    return;
  }
  rows.forEach((r) => body.appendChild(r));
}

const cost = (x) => Number(x || 0).toFixed(4);

// ------------------------------------------------------------------ the list page

function updateList(data) {
  let active = false;
  data.results.forEach((r) => {
    const tr = document.querySelector(`#runs tr[data-run="${r.run}"]`);
    if (!tr) return;
    tr.dataset.status = r.status;
    const v = r.videos;
    setText(tr, '[data-field="status"]', r.status);
    setText(tr, '[data-field="videos"]', `${v.done} done / ${v.failed} failed / ${v.total}`);
    const bar = tr.querySelector('[data-field="progress"]');
    setProgress(bar, v);
    if (bar) bar.setAttribute("aria-label", `Run ${r.run}: ${finishedOf(v)} of ${v.total} videos finished`);
    setText(tr, '[data-field="drafts"]', String(r.drafts));
    const calls = tr.querySelector('[data-field="calls"]');
    calls.replaceChildren(document.createTextNode(String(r.calls)));
    if (r.errors) {
      const span = cell("span", `(${r.errors} failed)`, "error");
      span.dataset.field = "errors";
      calls.append(" ", span);
    }
    setText(tr, '[data-field="cache_hits"]', String(r.cache_hits));
    setText(tr, '[data-field="cost"]', cost(r.cost_usd));
    if (ACTIVE.has(r.status)) active = true;
  });
  return active;
}

function listActive() {
  return Array.from(document.querySelectorAll("#runs tr[data-run]")).some((tr) => ACTIVE.has(tr.dataset.status));
}

// The start form: only the stage selects of the chosen pipeline are shown (and sent).
function stageSelects() {
  const pipeline = document.getElementById("pipeline");
  if (!pipeline) return;
  const show = () => {
    const stages = new Set(config.pipelines[pipeline.value] || []);
    document.querySelectorAll(".stage-server").forEach((box) => {
      const on = stages.has(box.dataset.stage);
      box.hidden = !on;
      box.querySelector("select").disabled = !on;
    });
    const box = document.getElementById("stage-servers");
    if (box) box.hidden = stages.size === 0;
  };
  pipeline.addEventListener("change", show);
  show();
}

// ------------------------------------------------------------------ a run's page

function updateDetail(r) {
  const v = r.videos;
  const status = document.getElementById("run-status");
  if (status.textContent !== r.status) status.textContent = r.status;
  setProgress(document.getElementById("run-progress"), v);
  setText(document, "#run-videos", `${finishedOf(v)} of ${v.total} videos finished: ${v.done} done, ${v.failed} failed, `
    + `${v.cancelled} cancelled, ${v.running} running, ${v.queued} queued`);
  setText(document, "#run-drafts", `${r.drafts} drafts`);
  setText(document, "#run-cost", `$${cost(r.cost_usd)}`);
  if (r.finished_at) setText(document, '[data-field="finished_at"]', r.finished_at.slice(0, 19).replace("T", " "));

  // Stages in pipeline order (the API lists them by name).
  const order = (stage) => {
    const i = config.stage_order.indexOf(stage);
    return i < 0 ? config.stage_order.length : i;
  };
  const stages = Object.entries(r.calls).sort(([a], [b]) => order(a) - order(b) || a.localeCompare(b));
  fillBody(document.getElementById("stage-calls"), stages.map(([stage, c]) => {
    const tr = row([cell("th", stage), cell("td", String(c.calls), "num"), cell("td", String(c.errors), "num"),
      cell("td", String(c.cache_hits), "num"), cell("td", String(c.prompt_tokens), "num"),
      cell("td", String(c.completion_tokens), "num"), cell("td", cost(c.cost_usd), "num"),
      cell("td", c.latency_ms_mean === null ? "–" : String(c.latency_ms_mean), "num")]);
    tr.firstChild.scope = "row";
    tr.dataset.stage = stage;
    return tr;
  }), "No call yet.", 8);
  fillBody(document.getElementById("failures"), r.failures.map((f) =>
    row([cell("td", f.video), cell("td", f.stage || "–"), cell("td", f.error, "error")])), "No video failed.", 3);
  fillBody(document.getElementById("failed-calls"), r.failed_calls.map((c) =>
    row([cell("td", c.at.slice(0, 19)), cell("td", c.video), cell("td", c.stage || "–"),
      cell("td", String(c.attempt), "num"), cell("td", c.error, "error")])), "No call failed.", 5);

  // The actions the status allows (the server checks again).
  const cancelBox = document.getElementById("cancel-box");
  const resumeBox = document.getElementById("resume-box");
  if (cancelBox) cancelBox.hidden = !ACTIVE.has(r.status);
  if (resumeBox) resumeBox.hidden = !(r.status === "failed" || r.status === "cancelled");
  return ACTIVE.has(r.status);
}

// ------------------------------------------------------------------ polling

async function poll(update) {
  try {
    const res = await fetch(config.api, { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!res.ok) return true; // a hiccup (or a deploy): try again next time
    return update(await res.json());
  } catch (err) {
    return true;
  }
}

function every(update) {
  const tick = async () => {
    if (await poll(update)) setTimeout(tick, config.poll_ms);
  };
  setTimeout(tick, config.poll_ms);
}

if (config.kind === "list") {
  stageSelects();
  if (listActive()) every(updateList);
} else if (config.kind === "detail") {
  const status = document.getElementById("run-status").textContent.trim();
  if (ACTIVE.has(status)) every(updateDetail);
}
