// Submitting the unit with its idempotency key (retried with the same key), and a refusal shown
// field by field on the cards it concerns.

import { $, S, api, config, el, toast, unitName, unitUrl } from "./state.js";
import { elapsedMs, itemMs, local, saveLocal } from "./store.js";
import { leaseLost, loadNext } from "./queue.js";
import { isInterval, render, select } from "./cards.js";

export function payload() {
  const ms = itemMs();
  return {
    idempotency_key: S.idempotencyKey,
    time_spent_ms: elapsedMs(),
    decisions: S.items.map((it, i) => [it, i]).filter(([it]) => it.kind === "draft" && !leftDeleted(it)).map(([it, i]) => {
      const d = Object.assign({ qa_id: it.qa.id, version: it.qa.version, time_spent_ms: ms[i] }, it.decision);
      if (d.action !== "modify") { delete d.question; delete d.answer; delete d.options; delete d.answer_index; }
      if (d.options === null) { delete d.options; delete d.answer_index; }
      if (d.options) delete d.answer;  // a multiple-choice answer is its correct option
      if (d.action !== "modify" || it.qa.answer_kind !== "interval") { delete d.answer_start_s; delete d.answer_end_s; }
      return d;
    }),
    added: S.items.map((it, i) => [it, i]).filter(([it]) => it.kind === "added").map(([it, i]) => {
      const d = it.decision;
      const out = { qa_type: d.qa_type, question: d.question, answer: d.answer, time_spent_ms: ms[i],
                    clip_start_s: d.clip_start_s, clip_end_s: d.clip_end_s };
      if (isInterval(d.qa_type)) Object.assign(out, { answer_start_s: d.answer_start_s, answer_end_s: d.answer_end_s });
      return out;
    }),
  };
}

// A rework's deleted pair left as it was: no decision is sent (it stays deleted, unchanged).
export function leftDeleted(it) {
  return it.qa.status === "deleted" && it.decision && it.decision.action === "delete" && it.decision.reason === it.qa.delete_reason;
}

export function showErrors(messages) {
  const box = $("errors");
  box.replaceChildren(...messages.map((m) => el("div", {}, m)));
  box.hidden = messages.length === 0;
}

export async function submit() {
  if (!S.unit || S.submitting) return;
  const undecided = S.items.map((it, i) => [it, i]).filter(([it]) => it.kind === "draft" && !it.decision);
  const noReason = S.items.map((it, i) => [it, i]).filter(([it]) => it.kind === "draft" && it.decision && it.decision.action === "delete" && !it.decision.reason);
  const noClip = S.items.map((it, i) => [it, i]).filter(([it]) => it.kind === "added" &&
    !(Number.isFinite(it.decision.clip_start_s) && Number.isFinite(it.decision.clip_end_s)));
  const problems = undecided.map(([, i]) => "Item " + (i + 1) + ": choose keep, modify or delete.")
    .concat(noReason.map(([, i]) => "Item " + (i + 1) + ": choose a reason for deleting (1–5)."))
    .concat(noClip.map(([, i]) => "Item " + (i + 1) + ": set the clip's In and Out (I / O at the playhead, or type them)."));
  if (problems.length) {
    showErrors(problems);
    select((undecided[0] || noReason[0] || noClip[0])[1]);
    return;
  }
  showErrors([]);
  for (const it of S.items) it.errors = [];
  render();
  S.submitting = true;
  $("submit").disabled = true;
  const body = payload();
  for (let attempt = 1; ; attempt++) {
    $("submit-status").textContent = attempt === 1 ? "Submitting…" : "Network problem; retrying (attempt " + attempt + ")…";
    let res;
    try {
      res = await api(unitUrl(config.submitUrl), body);
    } catch (e) {
      // Same idempotency key on every retry: the server applies the submit at most once.
      await new Promise((r) => setTimeout(r, Math.min(30000, 1000 * 2 ** Math.min(attempt, 5))));
      continue;
    }
    S.submitting = false;
    $("submit").disabled = false;
    if (res.ok) {
      const out = await res.json();
      clearTimeout(S.autosaveTimer);
      local().clear();
      const c = out.counts;
      const what = "Saved " + unitName() + ": " + c.kept + " kept, " + c.modified +
        " modified, " + c.deleted + " deleted, " + c.added + " added.";
      $("submit-status").textContent = what + (out.kind === "overlap"
          ? " This overlap pass is kept for agreement (the QA pairs are unchanged); pairs where it differs from the first pass go to a consensus round."
          : "");
      toast(what);
      loadNext();
      return;
    }
    let detail = {};
    try { detail = await res.json(); } catch (e) { detail = {}; }
    $("submit-status").textContent = "";
    for (const c of detail.conflicts || []) {
      const it = S.items.find((x) => x.kind === "draft" && x.qa.id === c.qa_id);
      if (it) it.conflict = c;
    }
    if ((detail.conflicts || []).length) { render(); saveLocal(); return showErrors([detail.detail]); }
    if (res.status === 409) return leaseLost(detail.detail);  // not yours any more, or already submitted
    showRefusal(detail, res.status);
    return;
  }
}

export const FIELD_LABEL = {
  question: "Question", answer: "Answer", reason: "Reason for deleting", options: "Options",
  answer_index: "Correct option", time_spent_ms: "Time spent", qa_type: "QA type", clip: "Clip",
  answer_start_s: "Answer interval", answer_end_s: "Answer end", clip_start_s: "In", clip_end_s: "Out",
  qa_id: "Item", action: "Decision", version: "Version",
};

// Field paths to messages, from our domain errors ({detail, errors: {"decisions[2].answer": "..."}})
// or from a serializer's nested shape ({decisions: [{}, {answer: ["..."]}]}).
export function fieldErrors(body) {
  if (body && body.errors && typeof body.errors === "object") return Object.entries(body.errors).map(([k, v]) => [k, String(v)]);
  const out = [];
  (function walk(value, path) {
    if (Array.isArray(value) && value.every((x) => typeof x === "string")) out.push([path, value.join(" ")]);
    else if (Array.isArray(value)) value.forEach((v, i) => walk(v, path + "[" + i + "]"));
    else if (value && typeof value === "object") Object.entries(value).forEach(([k, v]) => walk(v, path ? path + "." + k : k));
    else if (value !== undefined && value !== null) out.push([path, String(value)]);
  })(body && !body.detail ? body : {}, "");
  return out;
}

// The card a field path concerns (decisions[n]: the n-th draft, added[n]: the n-th added item,
// qa[ID]: the draft of QA pair ID) and the field within it; index -1 for the unit as a whole.
export function locate(path) {
  let m = path.match(/^(decisions|added)\[(\d+)\](?:\.(\w+))?/);
  if (m) {
    const kind = m[1] === "decisions" ? "draft" : "added";
    const hit = S.items.map((it, i) => [it, i]).filter(([it]) => it.kind === kind && !(kind === "draft" && leftDeleted(it)))[parseInt(m[2], 10)];
    return { index: hit ? hit[1] : -1, field: m[3] || null };
  }
  m = path.match(/^qa\[([a-z2-7]+)\]/);  // a QA pair's handle, as the payload named it
  if (m) return { index: S.items.findIndex((it) => it.kind === "draft" && it.qa.id === m[1]), field: null };
  return { index: -1, field: path };
}

export function plain(field, message) {
  const label = field ? FIELD_LABEL[field] || field.replace(/_/g, " ") : null;
  return label ? label + ": " + message : message.charAt(0).toUpperCase() + message.slice(1);
}

export function showRefusal(body, status) {
  for (const it of S.items) it.errors = [];
  const general = [];
  for (const [path, message] of fieldErrors(body)) {
    const where = locate(path);
    if (where.index >= 0) S.items[where.index].errors.push(plain(where.field, message));
    else general.push(plain(where.field, message));
  }
  const first = S.items.findIndex((it) => it.errors.length);
  const head = (body && body.detail) || "The server refused the submit (" + status + "); nothing was saved.";
  showErrors([head + (first >= 0 ? " The items concerned are marked." : "")].concat(general));
  if (first >= 0) select(first); else render();
}
