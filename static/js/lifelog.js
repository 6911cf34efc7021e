// The day timeline of a life log (X-LeBench, seed 002 Sec. 3): its parts as blocks at their
// virtual wall-clock times, gaps (time not recorded) with their durations, hour ticks; a click on
// the track, or the keys, play from that virtual time across parts (virtual_player.js).
// Config (json_script "lifelog-config"): {name, start (ISO 8601), span_s, parts: [{position,
// filename, offset_s, duration_s, url, hls_url, clock, summary}], gaps: [{start_s, end_s, duration_s}]}.
// Keys on the track: arrows 1 min (Shift: 10 min), Home/End, PageUp/PageDown previous/next part,
// Space or Enter play/pause.
import * as VirtualPlayer from "./virtual_player.js";

const config = JSON.parse(document.getElementById("lifelog-config").textContent);
const parts = config.parts;
const span = Math.max(config.span_s, 1);
const $ = (id) => document.getElementById(id);
const video = $("lifelog-video");
const track = $("lifelog-track");
const player = VirtualPlayer.create(video, parts);

// Seconds after midnight of the start, read from the ISO text (not the browser's time zone).
const m = /T(\d{2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?/.exec(config.start || "");
const startSod = m ? (+m[1]) * 3600 + (+m[2]) * 60 + (+(m[3] || 0)) : 0;

function two(n) { return String(n).padStart(2, "0"); }

function clock(t) {
  const at = startSod + Math.round(t);
  const days = Math.floor(at / 86400);
  const s = ((at % 86400) + 86400) % 86400;
  return `${two(Math.floor(s / 3600))}:${two(Math.floor((s % 3600) / 60))}:${two(s % 60)}` + (days ? ` +${days}d` : "");
}

function length(s) {
  s = Math.round(s);
  const h = Math.floor(s / 3600), mi = Math.floor((s % 3600) / 60), se = s % 60;
  if (h) return `${h} h ${mi} min`;
  if (mi) return `${mi} min${se ? " " + se + " s" : ""}`;
  return `${se} s`;
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

const pct = (t) => (t / span) * 100;

// Hour ticks on the wall clock (every 6 h past two days of span).
const step = span > 2 * 86400 ? 6 * 3600 : 3600;
for (let t = Math.ceil(startSod / step) * step - startSod; t <= span; t += step) {
  const tick = el("span", "lifelog-tick", clock(t).slice(0, 5));
  tick.style.left = pct(t) + "%";  // CSSOM, not an inline style attribute: the CSP allows it
  $("lifelog-ticks").appendChild(tick);
}

const blocks = $("lifelog-blocks");
const list = $("lifelog-parts");
const items = [];
parts.forEach((p, i) => {
  const block = el("div", "lifelog-block", "");
  block.dataset.index = String(i);
  block.title = `${p.clock} – ${clock(p.offset_s + p.duration_s)} ${p.filename}` + (p.summary ? `: ${p.summary}` : "");
  block.style.left = pct(p.offset_s) + "%";
  block.style.width = Math.max(0.3, pct(p.duration_s)) + "%";
  blocks.appendChild(block);

  const li = el("li", "lifelog-part");
  li.value = i + 1;  // gap rows are list items too; parts keep their own numbers
  const button = el("button", "link", `${p.clock} – ${clock(p.offset_s + p.duration_s)}`);
  button.type = "button";
  button.addEventListener("click", () => { player.seek(p.offset_s); player.play(); });
  li.appendChild(button);
  li.appendChild(el("span", "", ` ${p.filename} (${length(p.duration_s)})`));
  if (p.summary) li.appendChild(el("div", "muted", p.summary));
  list.appendChild(li);
  items.push({ block, li });
  const gap = config.gaps.find((g) => Math.abs(g.start_s - (p.offset_s + p.duration_s)) < 1e-3);
  if (gap) {
    const g = el("div", "lifelog-gap", "");
    g.title = `not recorded: ${clock(gap.start_s)} – ${clock(gap.end_s)} (${length(gap.duration_s)})`;
    g.style.left = pct(gap.start_s) + "%";
    g.style.width = pct(gap.duration_s) + "%";
    if (pct(gap.duration_s) > 6) g.appendChild(el("span", "lifelog-gap-label", length(gap.duration_s)));
    blocks.appendChild(g);
    list.appendChild(el("li", "lifelog-gap-row muted", `gap ${clock(gap.start_s)} – ${clock(gap.end_s)}: ${length(gap.duration_s)} not recorded`));
  }
});

const recorded = parts.reduce((a, p) => a + p.duration_s, 0);
$("lifelog-summary").textContent =
  `${parts.length} parts from ${clock(0)} to ${clock(config.span_s)} (${length(config.span_s)}), ` +
  `${length(recorded)} recorded, ${config.gaps.length} gaps. Start ${config.start}.`;

function render() {
  const t = player.currentTime;
  $("lifelog-head").style.left = pct(t) + "%";
  $("lifelog-clock").textContent = clock(t);
  track.setAttribute("aria-valuemin", "0");
  track.setAttribute("aria-valuemax", String(Math.round(span)));
  track.setAttribute("aria-valuenow", String(Math.round(t)));
  track.setAttribute("aria-valuetext", clock(t));
  const i = player.part;
  if (i >= 0) {
    $("lifelog-where").textContent = `part ${i + 1} of ${parts.length}: ${parts[i].filename} at ${player.localTime.toFixed(1)} s`;
  }
  items.forEach((it, k) => it.block.classList.toggle("current", k === i));
  $("lifelog-play").textContent = player.paused ? "Play" : "Pause";
}

player.addEventListener("timeupdate", render);
player.addEventListener("partchange", render);
player.addEventListener("play", render);
player.addEventListener("pause", render);
player.addEventListener("ended", render);
player.addEventListener("gapjump", (e) => {
  $("lifelog-note").textContent =
    `Skipped ${length(e.detail.to - e.detail.from)} not recorded (${clock(e.detail.from)} – ${clock(e.detail.to)}).`;
});

function toggle() { if (player.paused) player.play(); else player.pause(); }

function partStep(d) {
  const i = player.part < 0 ? 0 : player.part;
  const j = Math.min(parts.length - 1, Math.max(0, i + d));
  player.seek(parts[j].offset_s);
}

track.addEventListener("click", (e) => {
  const r = track.getBoundingClientRect();
  const t = Math.min(span, Math.max(0, ((e.clientX - r.left) / r.width) * span));
  player.seek(t);
  player.play();
  track.focus();
});
track.addEventListener("keydown", (e) => {
  const big = e.shiftKey ? 600 : 60;
  let handled = true;
  if (e.key === "ArrowRight") player.seek(player.currentTime + big);
  else if (e.key === "ArrowLeft") player.seek(Math.max(0, player.currentTime - big));
  else if (e.key === "Home") player.seek(0);
  else if (e.key === "End") player.seek(parts.length ? parts[parts.length - 1].offset_s : 0);
  else if (e.key === "PageDown") partStep(1);
  else if (e.key === "PageUp") partStep(-1);
  else if (e.key === " " || e.key === "Enter") toggle();
  else handled = false;
  if (handled) e.preventDefault();
});
$("lifelog-play").addEventListener("click", toggle);
$("lifelog-prev").addEventListener("click", () => partStep(-1));
$("lifelog-next").addEventListener("click", () => partStep(1));

if (parts.length) player.seek(0);
render();
export { player, clock };  // for tests: import() this module to read the player
