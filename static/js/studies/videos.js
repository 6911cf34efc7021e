// The media of a study item, as the kind's payload lists them (issue 18, "one stimulus builder":
// the page plays what a model gets, annotator/qa/stimulus.py), laid out by the payload's
// `video_layout`:
//
//   single    one clip in a player with its own controls (the layout before issue 18, unchanged);
//   labelled  separate videos the options name ("Video 1", "Video 2", or "query", "candidate 1"):
//             a player each, with its own controls, under exactly its label;
//   sync      views of one moment (every view of an ego-exo set, "ego", "exo 1", ..., or a day-night
//             pair, "day", "night"): one play/pause button, one seek bar and the Space key drive all
//             views together. Their clips are cut so that each starts at the same moment of the
//             activity, so the same time in every clip is the same moment: the first view leads and
//             the others follow its time, re-synced when they drift more than DRIFT_S;
//   life_log  a life log in virtual time (X-LeBench seed 002 Sec. 3): one player over its parts
//             (static/js/virtual_player.js, a classic script the page loads before this module),
//             jumping the gaps (time not recorded), with its wall clock (`clock_start` + virtual
//             time, "HH:MM:SS"), play/pause and a seek bar over `duration_s` that draws the parts.
//
// A video is `{label, url}`; a life log `{label, clock_start, duration_s, parts: [{url, offset_s,
// duration_s}]}` (seconds after the item's start). Nothing here names a source video or time.
//
// Replay is allowed: every player plays again as often as the person likes. Every clip loads at
// once (`preload="auto"`), and the first <video> under the box is the first view (the leader, or
// the life log's element playing its first part), so the trial clock (clock.js) starts when it is
// playable, whatever the layout.
import * as VirtualPlayer from "../virtual_player.js";

const DRIFT_S = 0.1;        // a follower further than this from the leader's time is re-seeked
const NUDGE = 0.1;          // within it, its rate is nudged by at most this share to close the gap

/** A `<div class="study-videos">` with the item's players laid out by `layout` (see the top of this
 * file; a missing layout means "single" for one video, "labelled" for more). Empty for no video. */
export function videoList(videos, layout) {
  if (!layout) layout = videos.length <= 1 ? "single" : "labelled";
  if (layout === "sync" && videos.length > 1) return syncedPlayers(videos);
  if (layout === "life_log" && videos.some((v) => Array.isArray(v.parts))) return lifeLogs(videos);
  if (layout === "single" || videos.length <= 1) return separatePlayers(videos, videos.length === 1 ? "single" : "");
  return separatePlayers(videos, "labelled");
}

/** A paragraph of `text` with `className` (nothing added for empty text). */
export function paragraph(text, className) {
  const p = document.createElement("p");
  p.className = className;
  p.textContent = text;
  return p;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// A <video> for a clip: muted (the clips carry no audio), inline, loading at once.
function clipVideo(label, url, controls) {
  const video = document.createElement("video");
  video.controls = controls;
  video.preload = "auto";
  video.muted = true;
  video.playsInline = true;
  if (url) video.src = url;
  video.setAttribute("aria-label", label);
  return video;
}

function figure(label, video) {
  const fig = el("figure", "study-video");
  fig.append(el("figcaption", "", label), video);
  return fig;
}

// How many columns and rows N views take so that they fit a 1366x768 screen with the question and
// the options: up to 6 side by side (landscape footage is wider than high, so one row of narrower
// views is taller than two rows of wide ones), 7 to 12 in two rows (an ego-exo set has at most 9
// views). The CSS sizes the videos by columns and rows.
function grid(box, n) {
  const rows = n <= 6 ? 1 : 2;
  box.dataset.cols = String(Math.ceil(n / rows));
  box.dataset.rows = String(rows);
}

function separatePlayers(videos, kind) {
  const box = el("div", "study-videos" + (kind ? " " + kind : ""));
  if (kind) box.dataset.layout = kind;
  if (kind === "labelled") grid(box, videos.length);
  for (const v of videos) box.append(figure(v.label, clipVideo(v.label, v.url, true)));
  return box;
}

// The text of `s` seconds as m:ss.
function minutes(s) {
  s = Math.max(0, Math.floor(s + 1e-6));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

// Space plays or pauses when the key is not meant for what has focus: not while writing (a text
// field, a text area, a select, something editable), and not on a button, a link or a radio or
// check box, where Space activates or picks (the options are radios; "Answer" is a button). The
// other keys of the page (take.js: Enter; mcq.js: 1-9 and A-Z; likert.js: 1-5) are not used here.
// The listener removes itself once its box has left the page (the next trial replaced it).
function spaceToggles(box, toggle) {
  const onKey = (e) => {
    if (!box.isConnected) { document.removeEventListener("keydown", onKey); return; }
    if (e.key !== " " || e.ctrlKey || e.metaKey || e.altKey || e.repeat) return;
    const t = e.target;
    if (t && t.closest && t.closest("textarea, select, button, a[href], [contenteditable]:not([contenteditable=false])")) return;
    if (t && t.tagName === "INPUT" && t.type !== "range") return;
    if (box.closest("[hidden]")) return;
    e.preventDefault();
    toggle();
  };
  document.addEventListener("keydown", onKey);
}

// The controls under a player: play/pause, a seek bar in `track` (a range input over seconds), the
// time. Returns the parts the caller drives.
function controlBar(label) {
  const bar = el("div", "study-player-bar");
  const play = el("button", "study-play", "Play");
  play.type = "button";
  play.setAttribute("aria-label", "Play " + label);
  const track = el("div", "study-seek-track");
  const seek = document.createElement("input");
  seek.type = "range";
  seek.className = "study-seek";
  seek.min = "0";
  seek.max = "0";
  seek.step = "0.01";
  seek.value = "0";
  seek.setAttribute("aria-label", "Position of " + label);
  track.append(seek);
  const time = el("span", "study-time", "");
  time.setAttribute("aria-live", "off");
  const hint = el("span", "muted study-keys");
  hint.append(el("kbd", "", "Space"), document.createTextNode(" plays or pauses"));
  bar.append(play, track, time, hint);
  let dragging = false;
  seek.addEventListener("pointerdown", () => { dragging = true; });
  const release = () => { dragging = false; };
  seek.addEventListener("pointerup", release);
  seek.addEventListener("pointercancel", release);
  seek.addEventListener("change", release);
  return { bar, play, track, seek, time, dragging: () => dragging };
}

function showPlaying(controls, playing, label) {
  controls.play.textContent = playing ? "Pause" : "Play";
  controls.play.setAttribute("aria-label", (playing ? "Pause " : "Play ") + label);
}

/** Views of one moment played together (see the top of this file). The box's `data-layout` is
 * "sync"; `box.views` lists the <video> elements, the leader first. */
function syncedPlayers(videos) {
  const box = el("div", "study-videos sync");
  box.dataset.layout = "sync";
  const views = el("div", "study-views");
  grid(views, videos.length);
  const players = videos.map((v) => clipVideo(v.label, v.url, false));
  videos.forEach((v, i) => {
    const fig = figure(v.label, players[i]);
    fig.dataset.view = String(i);
    views.append(fig);
  });
  const what = "all views";
  const controls = controlBar(what);
  box.append(views, controls.bar);
  const [lead, ...followers] = players;
  box.views = players;

  const duration = () => (Number.isFinite(lead.duration) ? lead.duration : 0);
  const playing = () => !lead.paused && !lead.ended;

  function showTime() {
    if (!controls.dragging()) controls.seek.value = String(lead.currentTime);
    controls.time.textContent = `${minutes(lead.currentTime)} / ${minutes(duration())}`;
  }

  // Bring every follower to the leader's time: a seek when it is off by more than DRIFT_S (or
  // `force`), else (while playing) a small change of its rate, which closes the gap without the
  // stall of a seek. A follower whose clip is shorter waits at its end.
  function sync(force) {
    const t = lead.currentTime;
    const on = playing();
    for (const f of followers) {
      if (f.readyState < HTMLMediaElement.HAVE_METADATA) continue;
      const target = Math.min(t, Number.isFinite(f.duration) ? f.duration : t);
      const drift = f.currentTime - target;
      if (force || Math.abs(drift) > DRIFT_S) {
        if (!f.seeking || force) f.currentTime = target;
        f.playbackRate = lead.playbackRate;
      } else if (on) {
        f.playbackRate = lead.playbackRate * (1 - Math.max(-NUDGE, Math.min(NUDGE, drift * 2)));
      }
      if (on && f.paused && target < f.duration) f.play().catch(() => {});
      if (!on && !f.paused) f.pause();
    }
  }

  let frame = 0;
  function loop() {
    frame = 0;
    if (!box.isConnected) { for (const p of players) p.pause(); return; }
    sync(false);
    showTime();
    if (playing()) frame = requestAnimationFrame(loop);
  }

  function toggle() {
    if (playing()) lead.pause();
    else lead.play().catch(() => {});
  }

  lead.addEventListener("loadedmetadata", () => { controls.seek.max = String(duration()); showTime(); });
  lead.addEventListener("play", () => {
    showPlaying(controls, true, what);
    sync(true);
    for (const f of followers) f.play().catch(() => {});
    if (!frame) frame = requestAnimationFrame(loop);
  });
  lead.addEventListener("pause", () => { showPlaying(controls, false, what); for (const f of followers) f.pause(); sync(true); showTime(); });
  lead.addEventListener("ended", () => { showPlaying(controls, false, what); for (const f of followers) f.pause(); showTime(); });
  lead.addEventListener("seeked", () => { sync(true); showTime(); });
  lead.addEventListener("timeupdate", showTime);
  for (const f of followers) f.addEventListener("loadedmetadata", () => sync(true));

  controls.play.addEventListener("click", toggle);
  controls.seek.addEventListener("input", () => {
    const t = Math.max(0, Math.min(duration(), parseFloat(controls.seek.value) || 0));
    lead.currentTime = t;
    sync(true);
    controls.time.textContent = `${minutes(t)} / ${minutes(duration())}`;
  });
  // A click on any view plays or pauses them all (as a click on a single player's picture would).
  for (const p of players) p.addEventListener("click", toggle);
  spaceToggles(box, toggle);
  showTime();
  return box;
}

// "HH:MM:SS" -> seconds after midnight (null for anything else).
function clockSeconds(text) {
  const m = /^(\d{1,2}):(\d{2}):(\d{2})$/.exec(text || "");
  return m ? (+m[1]) * 3600 + (+m[2]) * 60 + (+m[3]) : null;
}

function two(n) { return String(n).padStart(2, "0"); }

// The wall clock `t` virtual seconds after `start` (seconds after midnight), "HH:MM:SS", with the
// days passed when the log runs past midnight.
function wallClock(start, t) {
  const at = start + Math.floor(t + 1e-6);
  const days = Math.floor(at / 86400);
  const s = ((at % 86400) + 86400) % 86400;
  return `${two(Math.floor(s / 3600))}:${two(Math.floor((s % 3600) / 60))}:${two(s % 60)}` + (days ? ` +${days}d` : "");
}

function lifeLogs(videos) {
  const box = el("div", "study-videos life-log");
  box.dataset.layout = "life_log";
  for (const v of videos) box.append(Array.isArray(v.parts) ? lifeLog(v) : figure(v.label, clipVideo(v.label, v.url, true)));
  return box;
}

/** One life log in virtual time (see the top of this file). The player box's `player` is the
 * VirtualPlayer. */
function lifeLog(log) {
  const wrap = el("div", "study-life-log");
  const video = clipVideo(log.label, null, false);
  const span = Math.max(Number(log.duration_s) || 0, 0.01);
  const parts = log.parts.map((p) => ({ url: p.url, offset_s: Number(p.offset_s), duration_s: Number(p.duration_s) }));
  const controls = controlBar(log.label);
  const start = clockSeconds(log.clock_start);
  const clock = el("span", "study-clock");
  clock.setAttribute("role", "timer");
  clock.setAttribute("aria-label", "Wall clock");
  const note = el("span", "muted study-gap-note");
  note.setAttribute("aria-live", "polite");
  controls.seek.max = String(span);
  controls.seek.setAttribute("aria-label", "Position in the life log");
  // The recorded stretches on the seek bar; what lies between them is time not recorded.
  for (const p of parts) {
    const block = el("span", "study-seek-part");
    block.style.left = (p.offset_s / span) * 100 + "%";  // CSSOM, not a style attribute: the CSP allows it
    block.style.width = Math.max(0.4, (p.duration_s / span) * 100) + "%";
    controls.track.prepend(block);
  }
  controls.time.replaceWith(clock);
  const fig = figure(log.label, video);
  fig.querySelector("figcaption").append(note);  // in the caption's strip: the layout does not move when it changes
  wrap.append(fig, controls.bar);

  const player = VirtualPlayer.create(video, parts);
  wrap.player = player;
  const label = log.label;

  function showTime() {
    const t = player.currentTime;
    if (!controls.dragging()) controls.seek.value = String(t);
    clock.textContent = start === null ? minutes(t) : wallClock(start, t);
    clock.dataset.virtual = t.toFixed(2);
  }

  function toggle() {
    if (player.paused) player.play();
    else player.pause();
  }

  player.addEventListener("timeupdate", showTime);
  player.addEventListener("seeked", showTime);
  player.addEventListener("play", () => showPlaying(controls, true, label));
  player.addEventListener("pause", () => showPlaying(controls, false, label));
  player.addEventListener("ended", () => { showPlaying(controls, false, label); showTime(); });
  player.addEventListener("gapjump", (e) => {
    const { from, to } = e.detail;
    note.textContent = start === null ? `Skipped ${Math.round(to - from)} s not recorded.`
      : `Skipped ${Math.round(to - from)} s not recorded (${wallClock(start, from)} – ${wallClock(start, to)}).`;
  });
  player.addEventListener("partchange", () => { if (!wrap.isConnected) player.destroy(); });
  controls.play.addEventListener("click", toggle);
  controls.seek.addEventListener("input", () => {
    note.textContent = "";
    player.seek(Math.max(0, Math.min(span, parseFloat(controls.seek.value) || 0)));
    showTime();
  });
  video.addEventListener("click", toggle);
  spaceToggles(wrap, toggle);
  showTime();
  return wrap;
}
