// Skipping a unit, with a preset or a written reason.

import { $, api, config, toast, unitName, unitUrl } from "./state.js";
import { local } from "./store.js";
import { loadNext } from "./queue.js";
import { addItem } from "./cards.js";
import { showErrors, submit } from "./submit.js";

// Skip: a preset reason (1-4 in the dialog), with words of one's own besides; "Other" needs them.
// The reason sent is the preset's text, then ": " and the words; the detail field's length leaves
// room for the preset, so the whole stays within the server's 500 characters.
export const SKIP_MAX = 500;
export const skipPreset = () => { const r = document.querySelector("input[name=skip-preset]:checked"); return r ? r.value : ""; };
export function skipReason() {
  const preset = skipPreset();
  const words = $("skip-reason").value.trim();
  if (preset === "Other") return words;
  return preset && words ? preset + ": " + words : preset;
}
export function onSkipPreset() {
  const preset = skipPreset();
  const detail = $("skip-reason");
  detail.setAttribute("aria-required", preset === "Other" ? "true" : "false");  // checked by skipReason(), in words
  detail.maxLength = preset && preset !== "Other" ? SKIP_MAX - preset.length - 2 : SKIP_MAX;
}
export function openSkip() {
  if ($("skip").hidden) return;
  for (const r of document.querySelectorAll("input[name=skip-preset]")) r.checked = false;
  $("skip-reason").value = "";
  $("skip-error").hidden = true;
  onSkipPreset();
  $("skip-dialog").showModal();
  document.querySelector("input[name=skip-preset]").focus();
}
for (const r of document.querySelectorAll("input[name=skip-preset]")) r.addEventListener("change", onSkipPreset);
$("skip-dialog").addEventListener("keydown", (e) => {
  // 1-4 pick a preset (not while typing the words of one's own).
  if (e.target === $("skip-reason") || e.ctrlKey || e.metaKey || e.altKey || !/^[1-4]$/.test(e.key)) return;
  const r = document.querySelectorAll("input[name=skip-preset]")[parseInt(e.key, 10) - 1];
  e.preventDefault();
  r.checked = true;
  r.focus();
  onSkipPreset();
});
$("skip").addEventListener("click", openSkip);
$("skip-cancel").addEventListener("click", () => $("skip-dialog").close());
$("skip-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const reason = skipReason();
  $("skip-error").hidden = !!reason;
  if (!reason) { $("skip-error").textContent = skipPreset() ? "Say why in a few words." : "Choose a reason (1–4)."; return; }
  const res = await api(unitUrl(config.skipUrl), { reason });
  $("skip-dialog").close();
  if (res.ok) {
    local().clear();
    const what = "Skipped " + unitName() + ": " + reason;
    $("submit-status").textContent = what;
    toast(what);
    loadNext();
  } else {
    let detail = {};
    try { detail = await res.json(); } catch (err) { detail = {}; }
    showErrors([detail.detail || "Could not skip (" + res.status + ")."]);
  }
});

$("submit").addEventListener("click", submit);
$("add").addEventListener("click", addItem);
$("reload-queue").addEventListener("click", loadNext);
