// A timeline (scrubber) for one video: ranges marked on a track (the unit, the selected QA pair's
// clip, an added pair's in/out, an interval answer), a playhead, time labels, click or drag to seek,
// a thumbnail on hover or drag from the video's WebVTT thumbnails, and zoom for hour-long videos
// (the visible window follows the playhead).
//
// Times are seconds of the video the timeline shows (the leading player's). The thumbnails are a
// WebVTT file whose cues name a region of a sprite image, `sprite.jpg#xywh=x,y,w,h` (pixels), the
// sprite's URL relative to the VTT's. A missing or unreadable VTT means no thumbnail, nothing else.
//
// Usage (an ES module: import * as Timeline from "./timeline.js"):
//   const tl = Timeline.create(container, { seek: (t) => ..., onZoom: (z) => ..., format: (s, tenths) => "..." });
//   (format: how times read on the track; default "m:ss.f", the verify page passes its one clock)
//   tl.setDuration(seconds); tl.setBounds(start_s, end_s); tl.setRanges([{start, end, kind, label}]);
//   tl.setTime(t);  // on timeupdate / each frame
//   tl.loadThumbnails(vttUrl);  // or null
//   tl.zoomBy(2) / tl.zoomBy(0.5) / tl.zoomReset() / tl.zoomTo(start_s, end_s)
const MAX_ZOOM = 4096;
const DRAG_SEEK_MS = 80;

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

// "1:02:03.4" for an hour or more, "2:03.4" under an hour, with tenths when `tenths`.
function formatTime(s, tenths) {
  if (!Number.isFinite(s) || s < 0) s = 0;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const secText = tenths ? sec.toFixed(1).padStart(4, "0") : String(Math.floor(sec)).padStart(2, "0");
  return (h ? h + ":" + String(m).padStart(2, "0") : String(m)) + ":" + secText;
}

// WebVTT timestamp ("hh:mm:ss.ttt" or "mm:ss.ttt") to seconds; NaN if malformed.
function vttTime(text) {
  const m = /^(?:(\d+):)?(\d{1,2}):(\d{1,2}(?:\.\d+)?)$/.exec(text.trim());
  if (!m) return NaN;
  return (m[1] ? parseInt(m[1], 10) * 3600 : 0) + parseInt(m[2], 10) * 60 + parseFloat(m[3]);
}

// The cues of a thumbnails VTT: [{start, end, url, x, y, w, h}] (seconds, absolute URL, pixels),
// sorted by start. Cues without a `#xywh=` region are skipped; a file that is not WebVTT gives [].
function parseThumbnailsVtt(text, baseUrl) {
  if (!/^\uFEFF?WEBVTT/.test(text)) return [];
  const cues = [];
  for (const block of text.replace(/\r\n?/g, "\n").split(/\n{2,}/)) {
    const lines = block.split("\n").filter((l) => l.trim() !== "");
    const at = lines.findIndex((l) => l.includes("-->"));
    if (at < 0 || at + 1 >= lines.length) continue;
    const [a, b] = lines[at].split("-->");
    const start = vttTime(a);
    const end = vttTime(b.trim().split(/\s+/)[0]);
    const ref = lines[at + 1].trim();
    const hash = ref.indexOf("#xywh=");
    if (!Number.isFinite(start) || !Number.isFinite(end) || hash < 0) continue;
    const box = ref.slice(hash + 6).split(",").map((n) => parseInt(n, 10));
    if (box.length !== 4 || box.some((n) => !Number.isFinite(n) || n < 0)) continue;
    let url;
    try { url = new URL(ref.slice(0, hash), baseUrl).href; } catch (e) { continue; }
    cues.push({ start, end, url, x: box[0], y: box[1], w: box[2], h: box[3] });
  }
  return cues.sort((p, q) => p.start - q.start);
}

function cueAt(cues, t) {
  let lo = 0, hi = cues.length - 1, hit = null;
  while (lo <= hi) {  // the last cue starting at or before t
    const mid = (lo + hi) >> 1;
    if (cues[mid].start <= t) { hit = cues[mid]; lo = mid + 1; } else hi = mid - 1;
  }
  return hit && t < hit.end + 1e-6 ? hit : (hit || cues[0] || null);
}

// A "nice" tick step (seconds) so that about `n` labels fit in `span` seconds.
function tickStep(span, n) {
  const steps = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800];
  return steps.find((s) => span / s <= n) || 21600;
}

function create(container, options) {
  const opts = Object.assign({ seek: () => {}, onZoom: () => {}, format: formatTime }, options || {});  // format(s, tenths)
  let duration = 0;           // seconds: the video's length
  let bounds = [0, 0];        // seconds: where seeking is allowed (the unit's range)
  let ranges = [];
  let time = 0;
  let zoom = 1;               // the visible window is (bounds span) / zoom seconds long
  let view = [0, 0];          // the visible window [start, end], seconds
  let cues = [];
  let dragging = false;
  let loading = null;         // the latest thumbnails request

  const root = el("div", "timeline");
  const track = el("div", "tl-track");
  track.tabIndex = -1;
  track.setAttribute("role", "slider");
  track.setAttribute("aria-label", "Timeline: click or drag to seek");
  const rangeLayer = el("div", "tl-ranges");
  const playhead = el("div", "tl-playhead");
  const hoverLine = el("div", "tl-hover");
  hoverLine.hidden = true;
  const tip = el("div", "tl-tip");
  tip.hidden = true;
  const thumb = el("div", "tl-thumb");
  thumb.hidden = true;
  const tipTime = el("div", "tl-tip-time");
  tip.append(thumb, tipTime);
  track.append(rangeLayer, hoverLine, playhead, tip);
  const ticks = el("div", "tl-ticks");
  const overview = el("div", "tl-overview");  // where the zoomed window lies in the whole unit
  const overviewWindow = el("div", "tl-overview-window");
  overview.append(overviewWindow);
  overview.hidden = true;
  root.append(track, ticks, overview);
  container.replaceChildren(root);

  const span = () => Math.max(1e-3, bounds[1] - bounds[0]);
  const x2t = (clientX) => {
    const r = track.getBoundingClientRect();
    const f = Math.min(1, Math.max(0, (clientX - r.left) / Math.max(1, r.width)));
    return view[0] + f * (view[1] - view[0]);
  };
  const pct = (t) => ((t - view[0]) / Math.max(1e-6, view[1] - view[0])) * 100;

  // Keep the view inside the bounds; with `follow`, page it so the playhead stays in sight.
  function placeView(follow) {
    const width = span() / zoom;
    let start = view[0];
    if (zoom <= 1) start = bounds[0];
    else if (follow && (time < view[0] || time > view[0] + width * 0.95)) start = time - width * 0.1;
    start = Math.min(Math.max(start, bounds[0]), bounds[1] - width);
    view = [start, start + width];
  }

  function draw() {
    rangeLayer.replaceChildren(...ranges.map((r) => {
      const a = Math.max(r.start, view[0]);
      const b = Math.min(r.end, view[1]);
      const mark = el("div", "tl-range " + (r.kind || ""));
      mark.dataset.kind = r.kind || "";
      if (r.label) mark.title = r.label + ": " + opts.format(r.start, true) + " – " + opts.format(r.end, true);
      if (b <= a) { mark.hidden = true; return mark; }
      mark.style.left = pct(a) + "%";  // CSSOM, not an inline style attribute: the CSP allows it
      mark.style.width = Math.max(0.2, pct(b) - pct(a)) + "%";
      return mark;
    }));
    const step = tickStep(view[1] - view[0], 8);
    const labels = [];
    for (let t = Math.ceil(view[0] / step) * step; t <= view[1] + 1e-9; t += step) {
      const tick = el("span", "tl-tick", opts.format(t, step < 1));
      tick.style.left = pct(t) + "%";
      labels.push(tick);
    }
    ticks.replaceChildren(...labels);
    overview.hidden = zoom <= 1;
    overviewWindow.style.left = ((view[0] - bounds[0]) / span()) * 100 + "%";
    overviewWindow.style.width = Math.max(0.5, ((view[1] - view[0]) / span()) * 100) + "%";
    drawPlayhead();
  }

  function drawPlayhead() {
    const inside = time >= view[0] && time <= view[1];
    playhead.hidden = !inside;
    if (inside) playhead.style.left = pct(time) + "%";
    track.setAttribute("aria-valuemin", String(bounds[0]));
    track.setAttribute("aria-valuemax", String(bounds[1]));
    track.setAttribute("aria-valuenow", String(Math.round(time * 100) / 100));
    track.setAttribute("aria-valuetext", opts.format(time, true));
  }

  function showTip(clientX, t) {
    const r = track.getBoundingClientRect();
    hoverLine.hidden = false;
    hoverLine.style.left = pct(t) + "%";
    tipTime.textContent = opts.format(t, true);
    const cue = cues.length ? cueAt(cues, t) : null;
    thumb.hidden = !cue;
    if (cue) {
      thumb.style.width = cue.w + "px";
      thumb.style.height = cue.h + "px";
      thumb.style.backgroundImage = "url(\"" + cue.url.replace(/"/g, "%22") + "\")";
      thumb.style.backgroundPosition = -cue.x + "px " + -cue.y + "px";
      thumb.dataset.src = cue.url + "#xywh=" + [cue.x, cue.y, cue.w, cue.h].join(",");
    }
    tip.hidden = false;
    const w = tip.offsetWidth || 0;
    tip.style.left = Math.min(Math.max(0, clientX - r.left - w / 2), Math.max(0, r.width - w)) + "px";
  }

  function hideTip() { tip.hidden = true; hoverLine.hidden = true; }

  track.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    dragging = true;
    try { track.setPointerCapture(e.pointerId); } catch (err) { /* synthetic events */ }
    const t = x2t(e.clientX);
    showTip(e.clientX, t);
    opts.seek(t);
    e.preventDefault();
  });
  // While dragging, seeks go out at most every DRAG_SEEK_MS (a seek of an hour-long HLS video
  // fetches a segment; one per pointer event would queue dozens), and the last one on release.
  let lastSeek = 0, pendingT = null, pendingTimer = null;
  function dragSeek(t) {
    const now = performance.now();
    clearTimeout(pendingTimer);
    if (now - lastSeek >= DRAG_SEEK_MS) { lastSeek = now; pendingT = null; opts.seek(t); return; }
    pendingT = t;
    pendingTimer = setTimeout(() => { if (pendingT !== null) { lastSeek = performance.now(); opts.seek(pendingT); pendingT = null; } },
      DRAG_SEEK_MS - (now - lastSeek));
  }
  track.addEventListener("pointermove", (e) => {
    const t = x2t(e.clientX);
    showTip(e.clientX, t);
    if (dragging) dragSeek(t);
  });
  const stop = (e) => {
    if (dragging && e && e.type === "pointerup") { clearTimeout(pendingTimer); pendingT = null; opts.seek(x2t(e.clientX)); }
    dragging = false;
  };
  track.addEventListener("pointerup", stop);
  track.addEventListener("pointercancel", stop);
  track.addEventListener("pointerleave", () => { if (!dragging) hideTip(); });
  // Ctrl + wheel zooms about the playhead (a plain wheel keeps scrolling the page).
  track.addEventListener("wheel", (e) => {
    if (!e.ctrlKey) return;
    e.preventDefault();
    api.zoomBy(e.deltaY < 0 ? 2 : 0.5);
  }, { passive: false });

  const api = {
    element: root,
    track,
    setDuration(d) { duration = Math.max(0, d || 0); if (bounds[1] <= bounds[0]) bounds = [0, duration]; placeView(false); draw(); },
    setBounds(start, end) { bounds = [start, Math.max(start + 1e-3, end)]; placeView(true); draw(); },
    setRanges(list) { ranges = list.filter((r) => Number.isFinite(r.start) && Number.isFinite(r.end)); draw(); },
    setTime(t) {
      time = t;
      const before = view[0];
      placeView(!dragging);
      if (view[0] !== before) draw(); else drawPlayhead();
    },
    zoomBy(factor) {
      const next = Math.min(MAX_ZOOM, Math.max(1, zoom * factor));
      if (next === zoom) return zoom;
      zoom = next;
      const width = span() / zoom;
      view = [time - width / 2, time + width / 2];  // zoom about the playhead
      placeView(false);
      draw();
      opts.onZoom(zoom);
      return zoom;
    },
    zoomReset() { zoom = 1; placeView(false); draw(); opts.onZoom(zoom); },
    // Show [start, end] seconds (at least 0.5 s; the whole bounds at most), e.g. an answer with context.
    zoomTo(start, end) {
      const width = Math.min(span(), Math.max(0.5, end - start));
      zoom = Math.min(MAX_ZOOM, Math.max(1, span() / width));
      view = [start, start + span() / zoom];
      placeView(false);
      draw();
      opts.onZoom(zoom);
      return zoom;
    },
    get zoom() { return zoom; },
    get view() { return view.slice(); },
    get thumbnails() { return cues.length; },
    // Fetch and parse the thumbnails VTT; resolves to the number of cues (0: no thumbnails).
    async loadThumbnails(url) {
      const token = (loading = {});  // a newer call (the next unit) wins over this one
      cues = [];
      root.dataset.thumbnails = "0";
      if (!url) return 0;
      let found = [];
      try {
        const abs = new URL(url, window.location.href).href;
        const res = await fetch(abs, { credentials: "same-origin" });
        if (res.ok) found = parseThumbnailsVtt(await res.text(), abs);
      } catch (e) {
        found = [];  // unreadable or offline: no thumbnails, the timeline works without
      }
      if (token !== loading) return 0;
      cues = found;
      root.dataset.thumbnails = String(cues.length);
      return cues.length;
    },
  };
  return api;
}

export { create, parseThumbnailsVtt, formatTime };
