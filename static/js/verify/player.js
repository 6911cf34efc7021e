// The players: one video, a day-night pair in sync, a set of views with one shown large, or a life
// log in virtual time; the timeline, loops, speed, sound, brightness and comparison modes.

import * as Clock from "../clock.js";
import * as Timeline from "../timeline.js";
import * as VirtualPlayer from "../virtual_player.js";
import { attachMedia } from "../media_source.js";
import { $, S, el, fmt, toast } from "./state.js";
import { drawRanges } from "./cards.js";

// The first player leads; the others follow its play, pause, seek and rate. A follower shows
// time (leader time - leader offset + its own offset): for a day-night pair, night = day + offset.
// Only the leader may play sound (M); followers stay muted, so a pair is never heard twice.
export const BRIGHT_ON = 2.2;    // L's brightness for the night player (was the one "Brighten" level)
export const leader = () => S.players[0].video;
export const swipeHandle = $("swipe-handle");  // moved into #players in swipe mode (so looked up once)
export const timeline = Timeline.create($("timeline"), {
  seek: (t) => seekTo(t),
  onZoom: (z) => { $("zoom-level").textContent = z > 1 ? "×" + Math.round(z * 10) / 10 : "whole unit"; },
  format: (s) => fmt(s),
});

// A released unit's players stop loading at once (issue 21): hls.js is destroyed and each
// element's source let go, so no segment is fetched for a unit that is no longer this person's
// (submitted, skipped, lease lost, or the queue empty after it).
export function releasePlayers() {
  for (const p of S.players) if (p.video.detachMedia) p.video.detachMedia();
  S.players = [];
  $("players").replaceChildren();
}

export function setupPlayers() {
  releasePlayers();  // the previous unit's, if any
  const box = $("players");
  const many = !S.unit.life_log && S.unit.videos.length > 1;
  S.players = (S.unit.life_log ? S.unit.videos.slice(0, 1) : S.unit.videos).map((v) => {
    const video = el("video", { preload: "auto", playsinline: true, muted: true, "data-role": v.role });
    video.muted = true;
    if (v.poster_url) video.poster = v.poster_url;
    if (S.unit.life_log) {  // a life log (X-LeBench): one player over its parts, in virtual seconds (virtual_player.js)
      const vp = VirtualPlayer.create(video, S.unit.life_log.parts);
      vp.addEventListener("gapjump", (e) => gapNotice(e.detail.from, e.detail.to));
      return { el: el("div", { class: "video-wrap", "data-role": "single" }, video), meta: { ...v, role: "single" }, bright: 1,
               video: vp };
    }
    video.detachMedia = attachMedia(video, v);  // HLS (long videos) or MP4: static/js/media_source.js
    const wrap = el("div", { class: "video-wrap", "data-role": v.role, onclick: () => showLarge(S.players.findIndex((p) => p.el === wrap)) },
      v.role === "single" ? null : el("span", { class: "player-label" }, (v.label || v.role) + (v.role === "night" && v.difficulty ? " · " + v.difficulty : "")), video);
    return { el: wrap, video, meta: v, bright: 1 };
  });
  box.replaceChildren(...S.players.map((p) => p.el));
  S.bigView = 0;
  // More than two views: each is a button that shows it large, reached by Tab and pressed with Enter
  // as well as clicked (issue 21: the small views could only be clicked). Space stays the page's
  // Play, whatever view was clicked or tabbed to last.
  if (!S.unit.life_log && S.players.length > 2) {
    S.players.forEach((p, i) => {
      p.el.tabIndex = 0;
      p.el.setAttribute("role", "button");
      p.el.setAttribute("aria-label", "Show " + nameOf(p) + " large (Enter)");
      p.el.addEventListener("keydown", (e) => {
        if (e.key !== "Enter" || e.ctrlKey || e.metaKey) return;
        e.preventDefault();
        showLarge(i);
      });
    });
  }
  $("workspace").classList.toggle("wide", many);
  $("compare-bar").hidden = S.players.length !== 2;
  if (S.players.length !== 2) S.compare = "side";
  $("compare").value = S.compare;
  setupBrightness();
  applyCompare();
  $("video-name").textContent = S.unit.videos.map((v) => v.label || "the video").join(" + ");
  const lead = leader();
  lead.playbackRate = parseFloat($("rate").value);
  lead.addEventListener("timeupdate", onLeaderTime);
  lead.addEventListener("loadedmetadata", () => {
    lead.currentTime = S.loop.start;
    timeline.setDuration(Number.isFinite(lead.duration) ? lead.duration : S.unit.video.duration_s);
  });
  // The followers start when the leader's picture does ("playing"), not when it is asked to ("play"):
  // a leader still decoding after a seek, or buffering, is "waiting", and a follower started at "play"
  // ran ahead of it by the wait (a fresh-clone run saw a night video 43 ms ahead a second later). While
  // the leader waits, the followers wait too. They were aligned when paused, so they start where they
  // are (a seek only past SEEK_WHILE_PLAYING_S): a seek at every start left them behind by its own
  // time (about 95 ms on the demo's ego-exo set, closed by the rate over a second; now about 7 ms).
  lead.addEventListener("play", () => { $("play").textContent = "Pause"; });
  lead.addEventListener("playing", () => { followers((f) => f.play().catch(() => {})); syncFollowers(false); });
  lead.addEventListener("waiting", () => followers((f) => f.pause()));
  lead.addEventListener("pause", () => { $("play").textContent = "Play"; followers((f) => f.pause()); syncFollowers(true); });
  lead.addEventListener("seeked", () => { syncFollowers(true); timeline.setTime(lead.currentTime); });
  // A clip that ends where the video does: the video ends, and pauses, before a "timeupdate" (about
  // every 250 ms) reaches the clip's end, so onLeaderTime only rewound it and the loop stopped there.
  // It plays on from the start, as any other clip's loop does.
  lead.addEventListener("ended", () => { lead.currentTime = playRange().start; lead.play().catch(() => {}); });
  lead.addEventListener("ratechange", () => followers((f) => { f.playbackRate = lead.playbackRate; }));
  for (const p of S.players.slice(1)) p.video.addEventListener("loadedmetadata", () => syncFollowers(true));
  if (lead.requestVideoFrameCallback) {
    const onFrame = () => {
      if (S.players[0] && S.players[0].video === lead) { syncFollowers(false); timeline.setTime(lead.currentTime); lead.requestVideoFrameCallback(onFrame); }
    };
    lead.requestVideoFrameCallback(onFrame);
  }
  applyAudio();
  timeline.setDuration(S.unit.video.duration_s || S.unit.end_s);
  timeline.setBounds(S.unit.start_s, S.unit.end_s);
  timeline.zoomReset();
  timeline.setTime(S.unit.start_s);
  timeline.loadThumbnails(S.unit.videos[0].thumbnails_vtt_url || null);
  setLoop(S.unit.start_s, S.unit.end_s);
}

// A life log's player went over a gap (a seek into one, or playing past a part's end): say so,
// with the gap's wall-clock times, rather than jump silently (issue 21).
export function gapNotice(from, to) {
  const g = (S.unit.life_log.gaps || []).find((x) => from >= x.start_s - 0.05 && from <= x.end_s + 0.05);
  const a = g ? g.start_s : from;
  const b = g ? g.end_s : to;
  toast("Not recorded from " + fmt(a) + " to " + fmt(b) + " (" + Clock.hms(b - a) + "): playing from the next part, at " + fmt(to) + ".");
}

export function followers(fn) { for (const p of S.players.slice(1)) fn(p.video, p.meta); }

// While playing, a follower is sought only when it is this far off (seconds); nearer, its rate closes
// the gap, and a follower still seeking is left to finish. On a busy machine a seek takes longer than
// the 3 frames that used to trigger one: the follower came back behind by the seek's own time and
// could be sought again and again (issue 21: the ego-exo test saw 0.18 s of drift under load).
export const SEEK_WHILE_PLAYING_S = 0.25;

export function syncFollowers(force) {
  if (S.players.length < 2) return;
  const lead = leader();
  const base = lead.currentTime - S.players[0].meta.offset_s;
  const frame = 1 / ((S.unit && S.unit.video.fps) || 30);
  const playing = !lead.paused;
  followers((f, meta) => {
    const target = base + meta.offset_s;
    const drift = f.currentTime - target;
    if (!force && f.seeking) return;  // a seek in flight: a new one would only start it over
    if (force || Math.abs(drift) > (playing ? SEEK_WHILE_PLAYING_S : frame / 2)) {
      f.currentTime = Math.max(0, target);
      f.playbackRate = lead.playbackRate;
    } else if (playing) {
      // A small drift while playing is closed by nudging the follower's rate (up to 25% for a
      // while): a seek would stall it for longer than a frame and leave it behind again, the more
      // so with several followers decoding at once (ego-exo sets).
      f.playbackRate = lead.playbackRate * (1 - Math.max(-0.25, Math.min(0.25, drift * 4)));
    }
    if (playing && f.paused) f.play().catch(() => {});
  });
}

// Loop the selected item's clip (seconds of the leading video).
export function setLoop(start, end) {
  S.loop = { start, end };
  S.looping = true;
  $("loop-note").textContent = "Looping " + fmt(start) + " – " + fmt(end);
  const lead = S.players.length ? leader() : null;
  if (lead && lead.readyState >= 1 && (lead.currentTime < start || lead.currentTime > end)) lead.currentTime = start;
  drawRanges();
}

// Seek the leader (the followers follow) to ``t`` seconds, within the unit. Outside the looped
// clip the loop is released, so the person can look around the whole unit (e.g. to set In / Out).
export function seekTo(t) {
  if (!S.unit || !S.players.length) return;
  t = Math.min(S.unit.end_s, Math.max(S.unit.start_s, t));
  if (S.looping && (t < S.loop.start || t > S.loop.end)) {
    S.looping = false;
    $("loop-note").textContent = "Playing the whole unit " + fmt(S.unit.start_s) + " – " + fmt(S.unit.end_s) + " (select the item again to loop its clip)";
  }
  leader().currentTime = t;
  $("clock").textContent = fmt(t);
  timeline.setTime(t);
}

export function onLeaderTime() {
  if (!S.players.length) return;  // released
  const lead = leader();
  $("clock").textContent = fmt(lead.currentTime);
  timeline.setTime(lead.currentTime);
  const range = playRange();
  if (lead.currentTime >= range.end - 0.01 || lead.currentTime < range.start - 0.05) lead.currentTime = range.start;
}

// What plays (seconds of the leading video): the selected item's clip while it loops, else the unit.
function playRange() { return S.looping ? S.loop : { start: S.unit.start_s, end: S.unit.end_s }; }

export function togglePlay() { const lead = leader(); if (lead.paused) lead.play().catch(() => {}); else lead.pause(); }
export function stepFrame(dir) {
  const lead = leader();
  lead.pause();
  const dt = 1 / (S.unit && S.unit.video.fps ? S.unit.video.fps : 30);
  const range = playRange();
  lead.currentTime = Math.min(range.end, Math.max(range.start, lead.currentTime + dir * dt));
  $("clock").textContent = fmt(lead.currentTime);
}
export function changeRate(dir) {
  const sel = $("rate");
  sel.selectedIndex = Math.min(sel.options.length - 1, Math.max(0, sel.selectedIndex + dir));
  leader().playbackRate = parseFloat(sel.value);
}

// Sound: the leader only (M). Browsers allow unmuting after a key press or click, which this is.
export function applyAudio() {
  S.players.forEach((p, i) => { p.video.muted = i > 0 || !S.audioOn; });
  const b = $("audio");
  b.textContent = S.audioOn ? "Sound on (M)" : "Sound off (M)";
  b.setAttribute("aria-pressed", S.audioOn ? "true" : "false");
  b.classList.toggle("on", S.audioOn);
}
export function toggleAudio() { S.audioOn = !S.audioOn; applyAudio(); }

export const nameOf = (p) => p.meta.label || p.meta.role;  // "day", "night", "ego", "exo 1"

// Brightness per player: a slider each (1 = as recorded). L toggles the night player's (the
// only player's for a single video) between as recorded and bright.
export function setupBrightness() {
  const box = $("brightness");
  box.replaceChildren(el("span", { class: "muted" }, "Brightness"), ...S.players.map((p, i) => {
    const input = el("input", { type: "range", min: "0.5", max: "3", step: "0.1", value: String(p.bright),
      "data-role": p.meta.role, "aria-label": "brightness of the " + (p.meta.role === "single" ? "video" : nameOf(p) + " video"),
      oninput: (e) => { p.bright = parseFloat(e.target.value); applyBright(p); } });
    p.slider = input;
    return el("label", { class: "bright-control" }, S.players.length > 1 ? nameOf(p) + " " : "", input);
  }));
  S.players.forEach(applyBright);
}
export function applyBright(p) {
  p.video.style.filter = p.bright === 1 ? "" : "brightness(" + p.bright + ")";  // CSSOM: allowed by the CSP
  p.video.dataset.brightness = String(p.bright);
  if (p.slider) p.slider.value = String(p.bright);
}
export function toggleBright() {
  const p = S.players.find((x) => x.meta.role === "night") || S.players[S.players.length - 1];
  if (!p) return;
  p.bright = p.bright > 1 ? 1 : BRIGHT_ON;
  applyBright(p);
}

// Day-night comparison (two players): side by side, or A/B in one frame by flicker (B shows the
// other video) or swipe (a divider over the two aligned videos, the night one on the right).
export function applyCompare() {
  const box = $("players");
  const ab = S.players.length === 2 && S.compare !== "side";
  box.className = "players" + (S.players.length > 1 ? "" : " single") + (ab ? " ab " + S.compare : "") +
    (S.players.length > 2 ? " grid" : "");
  S.players.forEach((p, i) => {
    p.el.classList.toggle("big", S.players.length > 2 && i === S.bigView);
    if (S.players.length > 2) p.el.setAttribute("aria-pressed", i === S.bigView ? "true" : "false");
    p.el.classList.toggle("ab-hidden", ab && S.compare === "flicker" && i !== S.flickerShows);
    p.el.style.clipPath = ab && S.compare === "swipe" && i === 1 ? "inset(0 0 0 " + S.swipeAt + "%)" : "";
  });
  const handle = swipeHandle;
  if (ab && S.compare === "swipe") {
    if (handle.parentNode !== box) box.append(handle);  // moving it would end a drag's pointer capture
    handle.style.left = S.swipeAt + "%";
  }
  handle.hidden = !(ab && S.compare === "swipe");
  $("swipe").value = String(S.swipeAt);
  $("swipe-label").hidden = !(ab && S.compare === "swipe");
  $("flip").hidden = !(ab && S.compare === "flicker");
  if (S.players.length === 2) $("flip").textContent = "Showing " + nameOf(S.players[S.flickerShows]) + " (B)";
}
// More than two views (an ego-exo set): one large view above the others, small; a click on a small
// view (or W, cycling) makes it the large one. The leader stays the first player whatever is shown.
export function showLarge(i) {
  if (S.players.length < 3) return;
  S.bigView = ((i % S.players.length) + S.players.length) % S.players.length;
  applyCompare();
}

export function setCompare(mode) { S.compare = mode; $("compare").value = mode; applyCompare(); }
export function cycleCompare() { if (S.players.length === 2) setCompare({ side: "flicker", flicker: "swipe", swipe: "side" }[S.compare]); }
export function flip() {
  if (S.players.length !== 2) return;
  if (S.compare === "side") S.compare = "flicker";
  S.flickerShows = 1 - S.flickerShows;
  setCompare(S.compare);
}
export function setSwipe(pct) { S.swipeAt = Math.min(100, Math.max(0, pct)); applyCompare(); }

$("play").addEventListener("click", togglePlay);
$("step-back").addEventListener("click", () => stepFrame(-1));
$("step-fwd").addEventListener("click", () => stepFrame(1));
$("rate").addEventListener("change", () => { leader().playbackRate = parseFloat($("rate").value); });
$("audio").addEventListener("click", toggleAudio);
$("zoom-in").addEventListener("click", () => timeline.zoomBy(2));
$("zoom-out").addEventListener("click", () => timeline.zoomBy(0.5));
$("compare").addEventListener("change", (e) => setCompare(e.target.value));
$("flip").addEventListener("click", flip);
$("swipe").addEventListener("input", (e) => setSwipe(parseFloat(e.target.value)));
(function dragSwipe() {
  const handle = swipeHandle;
  const move = (e) => {
    const r = $("players").getBoundingClientRect();
    setSwipe(((e.clientX - r.left) / Math.max(1, r.width)) * 100);
  };
  handle.addEventListener("pointerdown", (e) => {
    try { handle.setPointerCapture(e.pointerId); } catch (err) { /* synthetic events */ }
    handle.dataset.dragging = "1";
    move(e);
    e.preventDefault();
  });
  handle.addEventListener("pointermove", (e) => { if (handle.dataset.dragging) move(e); });
  const stop = () => { delete handle.dataset.dragging; };
  handle.addEventListener("pointerup", stop);
  handle.addEventListener("pointercancel", stop);
})();
