// The verification page. Claims a unit through the API, shows its video (or a day-night pair, played
// in sync) and its QA pairs, records keep / modify / delete / add per item, and submits with an
// idempotency key (retried on network failure with the same key, so a submit is applied at most once).
//
// Nothing typed is lost: every change is saved in the browser at once (works offline) and on the
// server (debounced); after a reload the newer of the two comes back. The lease on the unit is
// renewed by a heartbeat while the page is open. A QA pair changed by someone else since it was
// loaded is shown as a conflict to resolve, never overwritten silently. Everything works by keyboard.
//
// The time spent is saved with the work (locally and on the server, which bounds it) and comes back
// after a reload. If the lease lapsed and someone else took the unit, the server says in plain words
// what became of the work; the next holder of a first pass or double-check gets it restored, labelled
// with whose it was. A refused submit shows each error on the card it concerns.
//
// Its parts, each an ES module sharing the page's state through state.js (no window globals):
// state (configuration, state, helpers), store (saving the work), queue (claim, heartbeat), player
// (players and timeline), cards (the QA cards), submit, skip and keys (the keyboard).

import { S } from "./state.js";
import { saveLocal } from "./store.js";
import { loadNext } from "./queue.js";
import "./player.js";
import "./cards.js";
import "./submit.js";
import "./skip.js";
import "./keys.js";

document.addEventListener("visibilitychange", () => {
  // Hidden time is not work time: close the running interval when hidden, restart when back.
  const now = performance.now();
  if (document.hidden && S.items[S.selected]) { S.items[S.selected].ms += Math.round(now - S.selectedSince); saveLocal(); }
  S.selectedSince = now;
});

window.addEventListener("online", () => { if (S.unit) saveLocal(); });

loadNext();
