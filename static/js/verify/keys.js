// The keyboard: every shortcut, whatever control last had the mouse (only text fields keep their
// keys), and the key legend.

import { $, S } from "./state.js";
import { changeRate, cycleCompare, flip, leader, seekTo, showLarge, stepFrame, timeline, toggleAudio, toggleBright, togglePlay } from "./player.js";
import { addItem, decide, focusCard, markAnswer, markClip, select, setReason } from "./cards.js";
import { submit } from "./submit.js";
import { openSkip } from "./skip.js";

// Only text fields keep their keys (issue 21). A slider, a select, a button or a radio that last
// had the mouse gives the page its shortcuts: a key the page handles is not also the control's
// (the speed select does not change on an arrow, a brightness slider does not move), and Esc
// leaves any control for the selected card.
export const TEXT_INPUT = /^(text|search|email|url|tel|password|number)$/;
export function typesText(t) {
  return !!t && (t.tagName === "TEXTAREA" || t.isContentEditable || (t.tagName === "INPUT" && TEXT_INPUT.test(t.type)));
}

export function toggleKeys(show) {
  const panel = $("keys");
  panel.hidden = show === undefined ? !panel.hidden : !show;
  $("keys-open").setAttribute("aria-expanded", panel.hidden ? "false" : "true");
}
$("keys-open").addEventListener("click", () => toggleKeys());
$("keys-close").addEventListener("click", () => { toggleKeys(false); focusCard(); });

document.addEventListener("keydown", (e) => {
  if (!S.unit || !S.players.length) return;
  const inField = typesText(e.target);
  const dialogOpen = $("guidelines").open || $("skip-dialog").open;
  if ((e.ctrlKey || e.metaKey) && e.key === "Enter" && !$("skip-dialog").open) { e.preventDefault(); submit(); return; }
  if (e.key === "Escape" && !dialogOpen) {
    if (!$("keys").hidden && !inField) { e.preventDefault(); toggleKeys(false); focusCard(); return; }
    if (e.target !== document.body && !e.target.classList.contains("qa-card")) { e.preventDefault(); e.target.blur(); focusCard(); return; }
  }
  if (inField || e.ctrlKey || e.metaKey || e.altKey) return;
  if (dialogOpen) return;
  if (e.key === "?") { e.preventDefault(); toggleKeys(); return; }
  const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  if (e.shiftKey && (key === "i" || key === "o")) { e.preventDefault(); markAnswer(key === "i" ? "in" : "out"); return; }
  const actions = {
    j: () => select(S.selected + 1), ArrowDown: () => select(S.selected + 1),
    k: () => select(S.selected - 1), ArrowUp: () => select(S.selected - 1),
    v: () => decide("keep"), e: () => decide("modify"), x: () => decide("delete"),
    n: addItem, s: openSkip, " ": togglePlay, ",": () => stepFrame(-1), ".": () => stepFrame(1),
    "[": () => changeRate(-1), "]": () => changeRate(1), l: toggleBright,
    i: () => markClip("in"), o: () => markClip("out"), m: toggleAudio,
    "+": () => timeline.zoomBy(2), "=": () => timeline.zoomBy(2), "-": () => timeline.zoomBy(0.5), "0": () => timeline.zoomReset(),
    ArrowLeft: () => seekTo(leader().currentTime - (e.shiftKey ? 10 : 1)),
    ArrowRight: () => seekTo(leader().currentTime + (e.shiftKey ? 10 : 1)),
    b: flip, c: cycleCompare, w: () => showLarge(S.bigView + 1),
    g: () => $("guidelines").showModal(),
  };
  if (/^[1-9]$/.test(key) && setReason(parseInt(key, 10))) { e.preventDefault(); return; }
  if (actions[key]) { e.preventDefault(); actions[key](); }
});
