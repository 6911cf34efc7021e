// Attaches a video's media to a <video> element: the HLS rendition of a long video through hls.js
// (vendored in static/vendor/hls.js-*/, loaded before this file as the global Hls), the browser's
// own HLS where hls.js cannot run (Safari on iOS has no MediaSource), else the MP4 rendition.
//
//   import { attachMedia } from "./media_source.js";
//   const detach = attachMedia(videoEl, meta);   // meta: a unit_payload video entry
//   ...
//   detach();   // stops loading, destroys the hls.js instance and releases the element's source
//
// meta.hls_url (master playlist) is set only for videos longer than MEDIA_HLS_MIN_DURATION_S;
// meta.url is the MP4 rendition. If hls.js hits an error it cannot recover from, the element falls
// back to the MP4 (same times, so the page's seek and sync logic is unaffected).
function releaseSource(video) {
  video.removeAttribute("src");
  try { video.load(); } catch (e) { /* an element already gone */ }
}

function playMp4(video, meta) {
  video.src = (meta && meta.url) || "";
  return () => releaseSource(video);
}

function attachMedia(video, meta) {
  const hlsUrl = meta && meta.hls_url;
  if (!hlsUrl) return playMp4(video, meta);
  const Hls = window.Hls;
  if (Hls && Hls.isSupported()) {
    const hls = new Hls({
      // fMP4 segments need no transmuxing, so no worker (the UMD worker would be a blob: script).
      enableWorker: false,
      capLevelToPlayerSize: true,   // a small player starts on (and stays at) the small level
      backBufferLength: 60,         // seconds kept behind the playhead: hour-long scrubbing stays bounded
      maxBufferLength: 30,
    });
    let detached = false;
    let mediaRecoveries = 0;
    let fallback = null;
    hls.on(Hls.Events.ERROR, (event, data) => {
      if (!data.fatal || detached) return;
      if (data.type === Hls.ErrorTypes.MEDIA_ERROR && mediaRecoveries < 2) {
        mediaRecoveries += 1;
        hls.recoverMediaError();
        return;
      }
      // Network or unrecoverable error: play the MP4 rendition from where we were.
      const at = video.currentTime || 0;
      hls.destroy();
      if (meta.url) {
        fallback = playMp4(video, meta);
        video.addEventListener("loadedmetadata", () => { video.currentTime = at; }, { once: true });
      }
    });
    hls.loadSource(hlsUrl);
    hls.attachMedia(video);
    return () => {
      detached = true;
      hls.destroy();
      if (fallback) fallback();
      releaseSource(video);
    };
  }
  if (video.canPlayType("application/vnd.apple.mpegurl")) {
    video.src = hlsUrl;
    return () => releaseSource(video);
  }
  return playMp4(video, meta);
}

export { attachMedia };
