// The queue: claiming the next unit, the lease's heartbeat, and what the page says when the lease is
// lost.

import { newKey } from "../http.js";
import { $, KIND_LABEL, KIND_NOTE, S, api, config, el, setStatus, unitUrl } from "./state.js";
import { restore, showCarried } from "./store.js";
import { releasePlayers, setupPlayers } from "./player.js";
import { focusCard, loopItem, render } from "./cards.js";
import { showErrors } from "./submit.js";

export async function loadTypes() {
  try {
    const res = await fetch(config.typesUrl, { credentials: "same-origin" });
    if (res.ok) S.qaTypes = await res.json();
  } catch (e) { /* the add menu stays empty until the next load */ }
}

export async function loadNext() {
  releasePlayers();
  S.unit = null;  // keys do nothing until the next unit is shown
  stopHeartbeat();
  clearTimeout(S.autosaveTimer);
  $("save-status").textContent = "";
  if (!S.qaTypes.length) await loadTypes();
  $("empty").hidden = true;
  $("workspace").hidden = true;
  $("lease-lost").hidden = true;
  $("carried").hidden = true;
  $("submit").disabled = false;
  S.lost = false;
  showErrors([]);
  setStatus("Loading the next unit…");
  let res;
  try {
    res = await api(config.nextUrl);
  } catch (e) {
    setStatus("Cannot reach the server. Retrying in 3 s…");
    setTimeout(loadNext, 3000);
    return;
  }
  if (res.status === 204) {
    S.unit = null;
    setStatus("");
    $("empty").hidden = false;
    return;
  }
  if (!res.ok) {
    // A refusal in words (paused, out of qualification tries: why and whom to ask) is shown as it is.
    let detail = "";
    try { detail = (await res.json()).detail || ""; } catch (e) { detail = ""; }
    setStatus(res.status === 403 && detail ? detail : "Could not load a unit (" + res.status + "). Reload the page to try again.");
    return;
  }
  S.unit = await res.json();
  S.idempotencyKey = newKey();
  S.priorMs = 0;
  S.items = S.unit.qa_pairs.map((qa) => ({ kind: "draft", qa, decision: null, ms: 0, errors: [] }));
  // A rework (issue 20) also shows the pairs this person's pass deleted, still deleted until they
  // keep (restore) or modify one, and the reviewer's comments beside each pair.
  const review = S.unit.queue.kind === "rework" ? S.unit.review || null : null;
  S.reviewComments = {};
  for (const c of (review && review.comments) || []) (S.reviewComments[c.qa_id] = S.reviewComments[c.qa_id] || []).push(c);
  for (const qa of (review && review.deleted_pairs) || []) {
    S.items.push({ kind: "draft", qa, decision: { action: "delete", reason: qa.delete_reason }, ms: 0, errors: [] });
  }
  const restored = restore();
  showCarried(restored);
  S.selected = 0;
  S.loadedAt = performance.now();
  S.selectedSince = S.loadedAt;
  setupPlayers();
  if (S.items[S.selected]) loopItem(S.items[S.selected]);  // the first item's clip
  render();
  $("workspace").hidden = false;
  $("kind").textContent = KIND_LABEL[S.unit.queue.kind] || S.unit.queue.kind;
  $("kind-note").textContent = KIND_NOTE[S.unit.queue.kind] || "";
  $("kind-note").hidden = !KIND_NOTE[S.unit.queue.kind];
  // Assigned to this person: a rework or qualification unit would come straight back.
  $("skip").hidden = S.unit.queue.kind === "rework" || S.unit.queue.kind === "qualification";
  setStatus("This unit: " + S.unit.qa_pairs.length + " QA pair" + (S.unit.qa_pairs.length === 1 ? "" : "s") + (S.unit.paired ? ", day-night pair" : "") +
    (review ? (review.reopened ? " (reopened, with no reviewer comments: change what you need and submit)"
               : " (sent back by a reviewer with " + review.comments.length + " comment" + (review.comments.length === 1 ? "" : "s") +
                 ", shown beside the QA pairs)") : "") +
    (restored === "own" ? " (your unsaved work was restored)" : restored === "carried" ? " (" + S.unit.carried.username + "'s work was restored)" : ""));
  startHeartbeat();
  focusCard();
}

export function startHeartbeat() {
  stopHeartbeat();
  S.heartbeatTimer = setInterval(async () => {
    if (!S.unit) return;
    try {
      const res = await api(unitUrl(config.heartbeatUrl));
      if (res.status === 409) leaseLost((await res.json()).detail);
    } catch (e) { /* offline: the next beat tries again */ }
  }, (S.unit.queue.heartbeat_s || 30) * 1000);
}
export function stopHeartbeat() { clearInterval(S.heartbeatTimer); S.heartbeatTimer = null; }

// The server's words say what became of the work (passed on to the next holder, or kept for the
// admins) and that the time stays credited; the page offers the next unit.
export function leaseLost(detail) {
  S.lost = true;
  releasePlayers();
  stopHeartbeat();
  clearTimeout(S.autosaveTimer);
  const box = $("lease-lost");
  const next = el("button", { type: "button", id: "take-next", onclick: loadNext }, "Take the next unit");
  box.replaceChildren(el("strong", {}, "This unit is no longer yours. "),
    detail || "Someone else holds it now.", " ", next);
  box.hidden = false;
  $("submit").disabled = true;
  next.focus();
}
