// Playback of a life log in virtual time (X-LeBench, seed 002 Sec. 3): one <video> element plays the
// log's parts one after another, each at its virtual wall-clock place, jumping over the gaps (time
// not recorded) to the next part. Times are virtual seconds after the log's start.
//
// Usage (an ES module: import * as VirtualPlayer from "./virtual_player.js"):
//   const vp = VirtualPlayer.create(videoEl, parts);   // parts: [{offset_s, duration_s, url, hls_url?}]
//   vp.currentTime = 1865;   // or vp.seek(1865): into a gap goes to the next part's start
//   vp.play(); vp.pause(); vp.paused; vp.duration (end of the last part); vp.part (index or -1)
//   vp.localTime (seconds of the current part's video)
//   vp.addEventListener("timeupdate" | "partchange" | "gapjump" | "play" | "pause" | "ended" |
//                       "loadedmetadata" (once, the first part's) | "seeked" | "ratechange", fn)
//     partchange: detail {index, part}; gapjump: detail {from, to} (virtual seconds)
//   vp.muted, vp.volume, vp.playbackRate (kept across parts), vp.readyState, vp.style, vp.dataset:
//     the element's, so a page can use vp where it used the <video> (the verify page does for a
//     life-log unit); vp.play() returns a promise as the element's does.
//   vp.destroy() (also vp.detachMedia())
//   VirtualPlayer.locate(parts, t) -> {index, local} | null   (null in a gap, before or after)
//   VirtualPlayer.resumeAt(parts, t) -> {index, local} | null (a gap -> the next part at 0)
// Parts are sorted by offset and do not overlap; a part covers [offset_s, offset_s + duration_s).
// Media is attached with attachMedia(video, part) from media_source.js (HLS for long videos).

import { attachMedia } from "./media_source.js";

const EPS = 1e-3;

function locate(parts, t) {
  for (let i = 0; i < parts.length; i += 1) {
    const p = parts[i];
    if (t >= p.offset_s && t < p.offset_s + p.duration_s) return { index: i, local: t - p.offset_s };
  }
  return null;
}

function resumeAt(parts, t) {
  const found = locate(parts, t);
  if (found) return found;
  for (let i = 0; i < parts.length; i += 1) {
    if (parts[i].offset_s >= t) return { index: i, local: 0 };
  }
  return null;
}

class Player extends EventTarget {
  constructor(video, parts) {
    super();
    this.video = video;
    this.parts = parts.slice().sort((a, b) => a.offset_s - b.offset_s);
    this.part = -1;
    this.pending = null;      // local time to seek to once the part's media is loaded
    this.wantPlay = false;
    this.detach = null;
    this.ended = false;
    this.rate = 1;
    this.metaSent = false;
    this.onTime = () => this.tick();
    this.onEnded = () => this.next();
    this.onMeta = () => this.applyPending();
    this.onSeeked = () => { if (this.pending === null) this.emit("seeked"); };
    video.addEventListener("timeupdate", this.onTime);
    video.addEventListener("ended", this.onEnded);
    video.addEventListener("loadedmetadata", this.onMeta);
    video.addEventListener("seeked", this.onSeeked);
    if (this.parts.length) this.load(0, 0);  // the first part's media, as a <video> with a src would
  }

  emit(type, detail) { this.dispatchEvent(new CustomEvent(type, { detail: detail || {} })); }

  get duration() {
    const last = this.parts[this.parts.length - 1];
    return last ? last.offset_s + last.duration_s : 0;
  }

  get localTime() {
    return this.pending !== null ? this.pending : (this.video.currentTime || 0);
  }

  get currentTime() {
    if (this.part < 0) return 0;
    if (this.ended) return this.duration;
    return this.parts[this.part].offset_s + this.localTime;
  }

  set currentTime(t) { this.seek(t); }

  get paused() { return !this.wantPlay; }

  get muted() { return this.video.muted; }
  set muted(v) { this.video.muted = v; }
  get volume() { return this.video.volume; }
  set volume(v) { this.video.volume = v; }
  get playbackRate() { return this.rate; }
  set playbackRate(r) {
    this.rate = Number(r) || 1;
    this.video.defaultPlaybackRate = this.rate;
    this.video.playbackRate = this.rate;
    this.emit("ratechange");
  }
  get readyState() { return this.pending !== null ? 0 : this.video.readyState; }
  get style() { return this.video.style; }
  get dataset() { return this.video.dataset; }
  detachMedia() { this.destroy(); }

  load(index, local) {
    const part = this.parts[index];
    if (this.detach) this.detach();
    this.part = index;
    this.pending = local;
    this.detach = attachMedia(this.video, part);
    this.emit("partchange", { index, part });
  }

  applyPending() {
    if (this.pending === null) return;
    const local = this.pending;
    this.pending = null;
    if (Math.abs((this.video.currentTime || 0) - local) > EPS) this.video.currentTime = local;
    this.video.playbackRate = this.rate;  // a new source starts at the default rate
    if (this.wantPlay) this.startVideo();
    if (!this.metaSent) { this.metaSent = true; this.emit("loadedmetadata"); }
    this.emit("seeked");
    this.emit("timeupdate");
  }

  startVideo() {
    const started = this.video.play();
    if (started && started.catch) started.catch(() => { /* a pause or a new source interrupted it */ });
  }

  seek(t) {
    const to = resumeAt(this.parts, Math.max(0, Number(t) || 0));
    if (!to) {  // past the end: stop at the end of the last part
      this.ended = true;
      this.wantPlay = false;
      this.video.pause();
      this.emit("timeupdate");
      this.emit("ended");
      return;
    }
    this.ended = false;
    const at = this.parts[to.index].offset_s + to.local;
    if (Number(t) < at - EPS && locate(this.parts, Number(t)) === null && Number(t) > 0) {
      this.emit("gapjump", { from: Number(t), to: at });
    }
    if (to.index !== this.part) {
      this.load(to.index, to.local);
    } else if (this.video.readyState >= 1) {
      this.video.currentTime = to.local;  // the element's "seeked" is passed on
      this.emit("timeupdate");
    } else {
      this.pending = to.local;
    }
  }

  play() {
    if (this.ended || this.part < 0) this.seek(this.ended ? 0 : this.currentTime);
    this.wantPlay = true;
    if (this.pending === null) this.startVideo();
    this.emit("play");
    return Promise.resolve();
  }

  pause() {
    this.wantPlay = false;
    this.video.pause();
    this.emit("pause");
  }

  tick() {
    if (this.pending !== null || this.part < 0) return;
    const part = this.parts[this.part];
    if (this.video.currentTime >= part.duration_s - EPS && !this.video.paused) { this.next(); return; }
    this.emit("timeupdate");
  }

  next() {
    if (this.part < 0 || this.pending !== null) return;
    const part = this.parts[this.part];
    const end = part.offset_s + part.duration_s;
    if (this.part + 1 >= this.parts.length) {
      this.ended = true;
      this.wantPlay = false;
      this.emit("timeupdate");
      this.emit("ended");
      return;
    }
    const following = this.parts[this.part + 1];
    if (following.offset_s - end > EPS) this.emit("gapjump", { from: end, to: following.offset_s });
    this.load(this.part + 1, 0);
  }

  destroy() {
    this.video.removeEventListener("timeupdate", this.onTime);
    this.video.removeEventListener("ended", this.onEnded);
    this.video.removeEventListener("loadedmetadata", this.onMeta);
    this.video.removeEventListener("seeked", this.onSeeked);
    if (this.detach) this.detach();
    this.detach = null;
  }
}

/** A player of `parts` on `video` (see the usage above). */
export function create(video, parts) {
  return new Player(video, parts);
}

export { locate, resumeAt };
