// The QA cards: one per QA pair of the unit (and per pair added), keep / modify / delete and their
// fields, clips and interval answers, conflicts.

import * as Clock from "../clock.js";
import { $, S, cardsEl, el, fmt, focusEnd, setStatus } from "./state.js";
import { saveLocal } from "./store.js";
import { leader, setLoop, timeline } from "./player.js";

// The clip an item loops: a draft's own; an added item's In..Out once both are set, else the unit.
export function clipOf(it) {
  if (it.kind === "draft") return it.qa.clip;
  const d = it.decision;
  if (Number.isFinite(d.clip_start_s) && Number.isFinite(d.clip_end_s) && d.clip_end_s > d.clip_start_s) {
    return { start_s: d.clip_start_s, end_s: d.clip_end_s };
  }
  return { start_s: S.unit.start_s, end_s: S.unit.end_s };
}

export const typeOf = (slug) => S.qaTypes.find((t) => t.slug === slug) || null;
export const isInterval = (slug) => { const t = typeOf(slug); return !!t && t.answer_kind === "interval"; };

// The answer interval of an item, if its QA type's answer is one: the decision's (an added item,
// or a draft being modified) or the draft's own. Seconds, or null.
export function answerOf(it) {
  const d = it.decision;
  if (it.kind === "added") return isInterval(d.qa_type) ? { start: d.answer_start_s, end: d.answer_end_s } : null;
  if (it.qa.answer_kind !== "interval") return null;
  if (d && d.action === "modify") return { start: d.answer_start_s, end: d.answer_end_s };
  return { start: it.qa.answer_start_s, end: it.qa.answer_end_s };
}

// The timeline's marks: the unit, the selected item's clip (or In / Out), its answer interval.
export function drawRanges() {
  if (!S.unit) return;
  const list = [{ start: S.unit.start_s, end: S.unit.end_s, kind: "unit", label: "Unit" }];
  if (S.unit.life_log) {  // its parts and the gaps between them, as the life-log page draws them
    S.unit.life_log.parts.forEach((p, n) => list.push({ start: p.offset_s, end: p.offset_s + (p.duration_s || 0), kind: "part",
                                                      label: "Part " + (n + 1) }));
    for (const g of S.unit.life_log.gaps || []) list.push({ start: g.start_s, end: g.end_s, kind: "gap", label: "Not recorded" });
  }
  const it = S.items[S.selected];
  if (it) {
    const c = clipOf(it);
    list.push({ start: c.start_s, end: c.end_s, kind: "clip", label: "Clip of item " + (S.selected + 1) });
    if (it.kind === "added") {
      const d = it.decision;
      if (Number.isFinite(d.clip_start_s)) list.push({ start: d.clip_start_s, end: d.clip_start_s + 1e-3, kind: "in", label: "In" });
      if (Number.isFinite(d.clip_end_s)) list.push({ start: d.clip_end_s - 1e-3, end: d.clip_end_s, kind: "out", label: "Out" });
    }
    const a = answerOf(it);
    if (a && Number.isFinite(a.start) && Number.isFinite(a.end)) list.push({ start: a.start, end: a.end, kind: "answer", label: "Answer" });
  }
  timeline.setRanges(list);
}

// The leader's time, rounded to hundredths of a second (the fields' precision).
export const now100 = () => Math.round(leader().currentTime * 100) / 100;

// I / O: the selected added item's clip starts / ends at the playhead. Shift+I / Shift+O: the
// answer interval of an interval QA type (an added item, or a draft being modified).
export function markClip(which) {
  const it = S.items[S.selected];
  if (!it || it.kind !== "added") {
    setStatus("In / Out set the clip of an added QA pair: add one with N first.");
    return;
  }
  it.decision[which === "in" ? "clip_start_s" : "clip_end_s"] = now100();
  render();
  saveLocal();
  drawRanges();
}
export function markAnswer(which) {
  const it = S.items[S.selected];
  const d = it && it.decision;
  const can = it && ((it.kind === "added" && isInterval(d.qa_type)) || (it.kind === "draft" && it.qa.answer_kind === "interval" && d && d.action === "modify"));
  if (!can) {
    setStatus("Shift+I / Shift+O set the answer of a QA type whose answer is a time interval (added, or being modified).");
    return;
  }
  d[which === "in" ? "answer_start_s" : "answer_end_s"] = now100();
  render();
  saveLocal();
  drawRanges();
}

// A time field (In, Out, answer start / end): seconds or the page's clock, h:mm:ss.f (a life log's
// wall clock), issue 21; kept as a number of seconds, empty is null, anything else is marked
// invalid (and null) with a line saying what it takes.
export function parseTime(text) { return S.unit && S.unit.life_log ? Clock.parseWall(text, S.unit.life_log.start) : Clock.parse(text); }

export function secondsField(label, d, key, hint) {
  const value = Number.isFinite(d[key]) ? String(d[key]) : "";
  const order = () => key.endsWith("end_s") && Number.isFinite(d[key]) && Number.isFinite(d[key.replace("end", "start")]) &&
    d[key] <= d[key.replace("end", "start")];
  // Read back on the page's one clock beside it ("= 0:00:03.5", a life log's wall clock).
  const reads = () => (Number.isFinite(d[key]) ? " = " + fmt(d[key]) : "");
  const echo = el("span", { class: "muted clock-echo" }, reads());
  const wrap = el("label", { class: "seconds-field" + (order() ? " invalid" : "") }, label + " ");
  const input = el("input", { type: "text", inputmode: "decimal", size: "10", maxlength: "16", value, "data-field": key,
    "aria-label": label + " (seconds, or h:mm:ss.f)", "aria-invalid": order() ? "true" : null,
    oninput: (e) => {
      const text = e.target.value.trim();
      const v = text === "" ? null : parseTime(text);
      const unreadable = v !== null && !Number.isFinite(v);
      d[key] = unreadable ? null : v;
      echo.textContent = unreadable ? " not a time: type seconds (12.5) or h:mm:ss.f (0:00:12.5)" : reads();
      const bad = unreadable || order();
      input.setAttribute("aria-invalid", bad ? "true" : "false");
      wrap.classList.toggle("invalid", bad);
      saveLocal();
      drawRanges();
    } });
  wrap.append(input, el("span", { class: "muted" }, " s"), echo, el("span", { class: "muted" }, hint ? " " + hint : ""));
  return wrap;
}

// Loop the item's clip. On a life log, whose clips can span the whole day, an item with an answer
// interval loops (and the timeline zooms to) its answer with context on each side: the answer's
// length, at least 5 s, within the clip (issue 21).
export function loopItem(it) {
  const clip = clipOf(it);
  const a = S.unit.life_log ? answerOf(it) : null;
  if (a && Number.isFinite(a.start) && Number.isFinite(a.end) && a.end > a.start) {
    const ctx = Math.max(5, a.end - a.start);
    const start = Math.max(clip.start_s, a.start - ctx);
    const end = Math.min(clip.end_s, a.end + ctx);
    setLoop(start, end);
    timeline.zoomTo(start, end);
    return;
  }
  setLoop(clip.start_s, clip.end_s);
  if (S.unit.life_log) timeline.zoomReset();
}

export function select(i) {
  if (!S.items.length) return;
  const now = performance.now();
  if (S.items[S.selected]) S.items[S.selected].ms += Math.round(now - S.selectedSince);
  S.selectedSince = now;
  S.selected = Math.max(0, Math.min(S.items.length - 1, i));
  loopItem(S.items[S.selected]);
  render();
  drawRanges();
  focusCard();
  saveLocal();
}

export function focusCard() {
  const card = cardsEl.children[S.selected];
  if (card && !card.contains(document.activeElement)) card.focus({ preventScroll: false });
}

export function decide(action) {
  const it = S.items[S.selected];
  if (!it || it.kind !== "draft") return;
  if (action === "keep") it.decision = { action: "keep" };
  else if (action === "delete") it.decision = { action: "delete", reason: (it.decision && it.decision.reason) || "" };
  else if (action === "modify") {
    const prev = it.decision && it.decision.action === "modify" ? it.decision : null;
    it.decision = prev || {
      action: "modify", question: it.qa.question, answer: it.qa.answer,
      options: it.qa.options ? it.qa.options.slice() : null, answer_index: it.qa.answer_index,
      answer_start_s: it.qa.answer_start_s, answer_end_s: it.qa.answer_end_s,
    };
  }
  render();
  saveLocal();
  if (action === "modify") {
    focusEnd(cardsEl.children[S.selected].querySelector("textarea[data-field=question]"));
  } else {
    focusCard();
  }
}

export function setReason(n) {
  const it = S.items[S.selected];
  if (!it || !it.decision || it.decision.action !== "delete") return false;
  const reason = S.unit.delete_reasons[n - 1];
  if (!reason || !reason.available) return false;
  it.decision.reason = reason.value;
  render();
  saveLocal();
  focusCard();
  return true;
}

// A new QA pair: no QA type is preselected (the person chooses one: focus starts on the type),
// and its clip is set with I / O or typed (nothing is taken silently).
export function addItem() {
  S.items.push({ kind: "added", decision: { qa_type: "", question: "", answer: "", clip_start_s: null, clip_end_s: null,
                                          answer_start_s: null, answer_end_s: null }, ms: 0, errors: [] });
  select(S.items.length - 1);
  focusEnd(cardsEl.children[S.selected].querySelector("select[data-field=qa_type]"));
}

export function removeItem(i) {
  S.items.splice(i, 1);
  S.selected = Math.min(S.selected, S.items.length - 1);
  render();
  saveLocal();
  focusCard();
}

export function field(label, value, name, onInput, rows) {
  return el("label", { class: "field" }, label,
    el("textarea", { rows: rows || 2, "data-field": name, oninput: (e) => { onInput(e.target.value); saveLocal(); } }, value || ""));
}

export function optionsView(qa) {
  if (!qa.options) return null;
  return el("ol", { class: "options", type: "A" },
    qa.options.map((o, i) => el("li", { class: i === qa.answer_index ? "correct" : "" }, o, i === qa.answer_index ? " ✓" : "")));
}

export function optionsEditor(d) {
  if (!d.options) return null;
  return el("fieldset", { class: "options-edit" }, el("legend", {}, "Options (select the one correct answer; no two alike)"),
    d.options.map((o, i) => el("div", { class: "option-row" },
      el("input", { type: "radio", name: "correct-" + S.selected, checked: i === d.answer_index,
        "aria-label": "option " + (i + 1) + " is correct", onchange: () => { d.answer_index = i; saveLocal(); } }),
      el("input", { type: "text", value: o, "data-field": "option-" + i, "aria-label": "option " + (i + 1),
        oninput: (e) => { d.options[i] = e.target.value; saveLocal(); } }))));
}

// The server's refusal of this item, in plain words ("Answer: answer must not be empty").
export function errorBox(it) {
  if (!it.errors || !it.errors.length) return null;
  return el("div", { class: "card-errors field-error", role: "alert" },
    el("strong", {}, "Not saved: "), it.errors.map((m) => el("div", {}, m)));
}

export function conflictBox(it) {
  if (!it.conflict) return null;
  const cur = it.conflict.current;
  return el("div", { class: "conflict", role: "alert" },
    el("strong", {}, "Changed by someone else since you loaded it (now version " + it.conflict.version + "). "),
    el("div", {}, el("span", { class: "muted" }, "Now: "), cur.question, " → ", cur.answer, cur.status !== "verified" ? " (" + cur.status + ")" : ""),
    el("div", { class: "card-actions" },
      el("button", { type: "button", onclick: () => resolveConflict(it, "mine") }, "Keep my decision"),
      el("button", { type: "button", onclick: () => resolveConflict(it, "theirs") }, "Take theirs and decide again")));
}

export function resolveConflict(it, choice) {
  const cur = it.conflict.current;
  it.qa = Object.assign({}, it.qa, { version: it.conflict.version });
  if (choice === "theirs") {
    Object.assign(it.qa, { question: cur.question, answer: cur.answer, options: cur.options, answer_index: cur.answer_index });
    it.decision = null;
  }
  it.conflict = null;
  render();
  saveLocal();
  focusCard();
}

// Items whose options are videos (EgoExoBench seed 001 Fig. 2): each labelled video plays its
// range (a media fragment #t=start,end) under exactly the label the options name ("Video 2").
export function labelledVideos(qa) {
  return el("div", { class: "labelled-videos" }, qa.videos.map((v) => el("figure", { class: "labelled-video", "data-label": v.label },
    el("video", { src: v.url ? v.url + "#t=" + v.start_s + "," + v.end_s : null, controls: true, muted: true,
      preload: "metadata", playsinline: true }),
    el("figcaption", {}, el("strong", { class: "video-label" }, v.label),
      " " + v.role + " · " + fmt(v.start_s) + " – " + fmt(v.end_s)))));
}

export function draftCard(it, i) {
  const qa = it.qa;
  const d = it.decision;
  const state = d ? d.action : "undecided";
  const body = [conflictBox(it), errorBox(it)];
  for (const c of S.reviewComments[qa.id] || []) {
    body.push(el("div", { class: "flag review-comment" }, el("strong", {}, "Reviewer: "), c.text || "",
      c.tags && c.tags.length ? el("span", { class: "muted" }, " [" + c.tags.join(", ") + "]") : null));
  }
  if (qa.status === "deleted") {
    body.push(el("div", { class: "muted" }, "You deleted this pair (" + (qa.delete_reason || "no reason") +
      "). Keep (V) restores it; Delete leaves it deleted."));
  }
  if (qa.flag) body.push(el("div", { class: "flag" }, "⚑ Flagged by " + qa.flag.source + ": " + qa.flag.reason));
  if (qa.videos && qa.videos.length) body.push(labelledVideos(qa));
  const interval = qa.answer_kind === "interval";
  if (d && d.action === "modify") {
    body.push(field("Question", d.question, "question", (v) => { d.question = v; }));
    if (!d.options) body.push(field("Answer", d.answer, "answer", (v) => { d.answer = v; }));
    body.push(optionsEditor(d));
    if (interval) {
      body.push(el("div", { class: "interval-fields" }, secondsField("Answer start", d, "answer_start_s", "(Shift+I)"),
        secondsField("Answer end", d, "answer_end_s", "(Shift+O)")));
    }
  } else {
    body.push(el("p", { class: "question" }, qa.question));
    if (qa.options) body.push(optionsView(qa));
    else body.push(el("p", { class: "answer" }, el("span", { class: "muted" }, "Answer: "), qa.answer));
    if (interval && Number.isFinite(qa.answer_start_s)) {
      body.push(el("p", { class: "answer" }, el("span", { class: "muted" }, "Answer interval: "), fmt(qa.answer_start_s) + " – " + fmt(qa.answer_end_s)));
    }
  }
  if (d && d.action === "delete") {
    body.push(el("fieldset", { class: "reasons" }, el("legend", {}, "Why delete? (1–5)"),
      S.unit.delete_reasons.map((r, n) => el("label", { class: r.available ? "" : "unavailable" },
        el("input", { type: "radio", name: "reason-" + qa.id, value: r.value, checked: d.reason === r.value, disabled: !r.available,
          onchange: () => { d.reason = r.value; saveLocal(); render(); } }),
        " " + (n + 1) + ". " + r.label + (r.available ? "" : " (day-night pairs only)")))));
  }
  return el("li", {
    class: "qa-card " + state + (i === S.selected ? " selected" : ""), tabindex: "-1",
    "data-qa-id": qa.id, "data-state": state, onclick: (e) => { if (i !== S.selected && e.target.tagName !== "INPUT") select(i); },
  },
    el("div", { class: "card-head" },
      el("span", { class: "idx" }, String(i + 1)),
      el("span", { class: "qa-type" }, qa.qa_type_name),
      el("span", { class: "clip muted" }, fmt(qa.clip.start_s) + " – " + fmt(qa.clip.end_s)),
      el("span", { class: "badge " + state }, state)),
    body,
    el("div", { class: "card-actions" },
      el("button", { type: "button", class: state === "keep" ? "on" : "", onclick: () => { select(i); decide("keep"); } }, "Keep (V)"),
      el("button", { type: "button", class: state === "modify" ? "on" : "", onclick: () => { select(i); decide("modify"); } }, "Modify (E)"),
      el("button", { type: "button", class: state === "delete" ? "on" : "", onclick: () => { select(i); decide("delete"); } }, "Delete (X)")));
}

export function addedCard(it, i) {
  const d = it.decision;
  const interval = isInterval(d.qa_type);
  return el("li", { class: "qa-card added" + (i === S.selected ? " selected" : ""), tabindex: "-1", "data-state": "added",
    onclick: (e) => { if (i !== S.selected && !/^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName)) select(i); } },
    el("div", { class: "card-head" }, el("span", { class: "idx" }, String(i + 1)),
      el("span", { class: "badge added" }, "new"),
      el("label", {}, "QA type ",
        el("select", { "data-field": "qa_type", required: true, "aria-invalid": d.qa_type ? null : "true",
          onchange: (e) => { d.qa_type = e.target.value; saveLocal(); render(); drawRanges(); } },
          el("option", { value: "", selected: !d.qa_type, disabled: true }, "Choose a QA type…"),
          S.qaTypes.map((t) => el("option", { value: t.slug, selected: t.slug === d.qa_type }, t.name))))),
    errorBox(it),
    el("div", { class: "clip-fields" }, el("span", { class: "muted" }, "Clip "),
      secondsField("In", d, "clip_start_s", "(I)"), secondsField("Out", d, "clip_end_s", "(O)"),
      el("button", { type: "button", class: "link", onclick: () => { d.clip_start_s = S.unit.start_s; d.clip_end_s = S.unit.end_s; render(); saveLocal(); select(i); } }, "whole unit")),
    field("Question", d.question, "question", (v) => { d.question = v; }),
    interval ? el("div", { class: "interval-fields" }, secondsField("Answer start", d, "answer_start_s", "(Shift+I)"),
      secondsField("Answer end", d, "answer_end_s", "(Shift+O)")) : null,
    field(interval ? "Answer (optional: the interval is the answer)" : "Answer", d.answer, "answer", (v) => { d.answer = v; }),
    el("div", { class: "card-actions" },
      el("button", { type: "button", onclick: () => removeItem(i) }, "Remove")));
}

export function render() {
  const active = document.activeElement;
  const activeField = active && active.dataset ? active.dataset.field : null;
  cardsEl.replaceChildren(...S.items.map((it, i) => (it.kind === "draft" ? draftCard(it, i) : addedCard(it, i))));
  const drafts = S.items.filter((x) => x.kind === "draft");
  const decided = drafts.filter((x) => x.decision).length;
  $("progress").textContent = decided + "/" + drafts.length + " decided, " + (S.items.length - drafts.length) + " added";
  if (activeField) {
    const again = cardsEl.children[S.selected] && cardsEl.children[S.selected].querySelector("[data-field='" + activeField + "']");
    if (again) focusEnd(again);
  }
}
