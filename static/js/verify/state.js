// What the verify page's modules share: its configuration, the page's state (one object, `S`), and
// small helpers (the clock, elements, the status line, the toast).

import * as Clock from "../clock.js";
import { send } from "../http.js";

// Server configuration arrives as JSON in a non-executable <script type="application/json">
// (Django's json_script): the CSP allows no inline script.
export const config = JSON.parse(document.getElementById("verify-config").textContent);
export const $ = (id) => document.getElementById(id);
export const cardsEl = $("cards");

// The page's state, one object the modules share (issue 23: no window globals).
export const S = {
  unit: null,  // the unit payload from the API
  items: [],  // [{kind: "draft"|"added", qa?, decision, ms, conflict?}]
  selected: 0,
  idempotencyKey: null,
  loadedAt: 0,
  priorMs: 0,  // time spent on this unit before this page load (restored from a save)
  lost: false,  // the server said the unit is no longer ours: stop saving to it
  selectedSince: 0,
  submitting: false,
  heartbeatTimer: null,
  autosaveTimer: null,
  players: [],  // [{el, video}] leader first
  qaTypes: config.qaTypes || [],  // the project's QA types: [{slug, name, answer_kind, set_kind}]
  reviewComments: {},  // a rework unit's reviewer comments by QA pair id: [{text, tags}] (issue 20)
  toastTimer: null,
  loop: { start: 0, end: 0 },
  looping: true,  // false once the person seeks outside the selected clip: the unit plays on
  audioOn: false,  // the person's choice, kept across units
  compare: "side",  // day-night comparison: side (by side), flicker (A/B) or swipe (A/B)
  flickerShows: 0,  // in flicker mode, the index of the player shown
  swipeAt: 50,  // in swipe mode, where the divider is (% of the width)
  bigView: 0,  // with more than two views, the index of the one shown large
};

export const KIND_LABEL = { first_pass: "First pass", overlap: "Overlap (blind)", double_check: "Double-check",
                     rework: "Rework", qualification: "Qualification" };
// What each pass is for, in a line under the heading (issue 20: an overlap pass explains itself).
export const KIND_NOTE = {
  overlap: "An independent pass: you see the machine's drafts as drafted, not what the first annotator made of " +
    "them. Your decisions are compared with theirs to measure agreement and do not change the QA pairs; where " +
    "you disagree, the pair goes to a consensus round, whose outcome is exported with it.",
  double_check: "A second look at QA pairs another annotator verified: your decisions change them.",
  rework: "Back with you for rework (a reviewer sent it back, an admin reopened it, or you did): change what " +
    "needs changing (the reviewer's comments are beside the QA pairs), then submit again.",
  qualification: "A qualification unit: your decisions are compared with known ones. The real queue opens when enough of them match.",
};

export const api = send;

export function unitUrl(template) { return template.replace("{id}", S.unit.id); }
// One clock on the page (issue 21): "h:mm:ss.f" (static/js/clock.js); a life log's times read as
// its own wall clock, the time of day the wearer lived, never as virtual seconds.
export function fmt(s) { return S.unit && S.unit.life_log ? Clock.wall(s, S.unit.life_log.start) : Clock.hms(s); }

export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c);
  return node;
}

export function setStatus(text) { $("status").textContent = text; }

// A confirmation in view wherever the page is scrolled (issue 21: "Saved unit" was off screen):
// it names what was saved and fades after a while; the status line under Submit keeps it too.
// "unit 7qk3… (day + night)": the unit's handle and its videos' labels, when they have any.
export function unitName() {
  const labels = S.unit.videos.map((v) => v.label).filter(Boolean);
  return "unit " + S.unit.id + (labels.length ? " (" + labels.join(" + ") + ")" : "");
}

export function toast(text) {
  const box = $("toast");
  box.textContent = text;
  box.hidden = false;
  clearTimeout(S.toastTimer);
  S.toastTimer = setTimeout(() => { box.hidden = true; }, 8000);
}

export function focusEnd(input) {
  if (!input) return;
  input.focus();
  if (typeof input.setSelectionRange === "function" && input.type !== "radio") {
    const n = input.value.length;
    input.setSelectionRange(n, n);
  }
}
