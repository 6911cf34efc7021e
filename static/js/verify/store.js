// Saving the work: the browser's copy at once (static/js/unsent.js, the study pages' store too), the
// server's after a short pause, and which of them comes back after a reload.

import { unsent } from "../unsent.js";
import { $, S, api, config, el, unitUrl } from "./state.js";
import { leaseLost } from "./queue.js";

// The browser's copy of the unit's unsent work (static/js/unsent.js, the study pages' store too).
export function local() { return unsent("verify:" + config.project + ":item:" + S.unit.queue.item_id); }

// Time on the unit so far (ms): before this page load, plus since.
export function elapsedMs() { return S.priorMs + Math.round(performance.now() - S.loadedAt); }

// Time on each item (ms), including the running interval of the selected one.
export function itemMs() {
  const now = performance.now();
  return S.items.map((it, i) => it.ms + (i === S.selected && !document.hidden ? Math.round(now - S.selectedSince) : 0));
}

export function snapshot() {
  const ms = itemMs();
  return {
    key: S.idempotencyKey,
    timeMs: elapsedMs(),
    items: S.items.map((it, i) => ({ kind: it.kind, qaId: it.qa ? it.qa.id : null, version: it.qa ? it.qa.version : null,
                                   decision: it.decision, ms: ms[i] })),
  };
}

// Called after every change: the browser's copy at once, the server after a short pause.
export function saveLocal() {
  if (!S.unit) return;
  const state = { savedAt: Date.now(), state: snapshot() };
  local().keep(state);  // storage full or disabled: the server copy still comes
  clearTimeout(S.autosaveTimer);
  if (S.lost) return;
  $("save-status").textContent = "Saving…";
  S.autosaveTimer = setTimeout(() => saveServer(state), 700);
}

export async function saveServer(saved) {
  if (!S.unit) return;
  try {
    const res = await api(unitUrl(config.autosaveUrl),
      { state: saved.state, client_saved_at_ms: saved.savedAt, time_spent_ms: saved.state.timeMs || 0 }, "PUT");
    if (res.ok) $("save-status").textContent = "All changes saved";
    else if (res.status === 409) leaseLost((await res.json()).detail);
    else $("save-status").textContent = "Saved in this browser (server said " + res.status + ")";
  } catch (e) {
    $("save-status").textContent = "Offline: saved in this browser, will sync";
    S.autosaveTimer = setTimeout(() => saveServer(saved), 5000);
  }
}

// The person's own work comes back first: the newer of the browser's copy and the server's copy
// (whose time the server bounded). Failing that, the work of an earlier holder whose lease lapsed
// (``carried``): their decisions, but neither their idempotency key nor their time, which stays
// theirs. Returns "own", "carried" or null.
export function restore() {
  const browser = local().input();
  const a = S.unit.autosave;
  const server = a ? { savedAt: a.client_saved_at_ms, state: a.state, timeMs: a.time_spent_ms } : null;
  const best = [browser, server].filter((x) => x && x.state).sort((x, y) => y.savedAt - x.savedAt)[0];
  const carried = S.unit.carried && S.unit.carried.state;
  if (!best && !carried) return null;
  const state = best ? best.state : carried;
  if (best) {
    S.idempotencyKey = best.state.key || S.idempotencyKey;
    S.priorMs = Math.max(0, best === server ? best.timeMs || 0 : best.state.timeMs || 0);
  }
  for (const saved of (state && state.items) || []) {
    if (!saved || !saved.decision) continue;
    const ms = best ? saved.ms || 0 : 0;
    if (saved.kind === "draft") {
      const it = S.items.find((x) => x.kind === "draft" && x.qa.id === saved.qaId);
      if (it) { it.decision = saved.decision; it.ms = ms; }
    } else {
      S.items.push({ kind: "added", decision: saved.decision, ms, errors: [] });
    }
  }
  return best ? "own" : "carried";
}

export function showCarried(restored) {
  const box = $("carried");
  const c = S.unit.carried;
  box.hidden = !c;
  if (!c) return;
  const when = new Date(c.saved_at).toLocaleString();
  box.replaceChildren(el("strong", {}, "Continued from " + c.username + "'s work. "),
    c.username + " held this unit before you; their lease lapsed after they saved at " + when + ". " +
    (restored === "carried" ? "Their decisions are restored below: check them before you submit. "
                            : "Their decisions were restored when you took the unit. ") +
    "Their time stays credited to them; yours starts now.");
}
