// The trial clock of a study page (issue 8, Timing). A trial's time starts when it is visible:
// every image in it decoded and in the viewport, or else its first video playable (enough data for
// the first frame: `loadeddata`/`canplay`), or at once for text alone. At that moment, after the
// next frame is painted, the clock reads `performance.now()` and reports the trial shown, which
// starts the server's clock and time limit. A countdown runs from `time_limit_ms - elapsed` and
// calls `onExpire` once at zero.
//
// A reload resumes the same trial with the time already spent: when the server says the trial was
// shown already, its `elapsed_ms` (server time since shown, read when the state was fetched) sets
// the clock's origin, so the countdown continues instead of restarting and the response time
// counts the time before the reload. Nothing is kept in the browser for this.
//
// The page marks the trial's root once it is visible (`data-shown` = trial id, `data-shown-at` =
// the clock's origin in `performance.now()` ms) for people and scripts that wait for it.

const FULLY = 0.99;  // share of an image that must be inside the viewport

function decoded(img) {
  // A broken image never decodes; it does not hold the trial back (the person sees it broken).
  return img.decode ? img.decode().catch(() => {}) : Promise.resolve();
}

// Resolves when `el` is wholly inside the viewport (or fills it, if it is larger than the viewport).
function inViewport(el) {
  return new Promise((resolve) => {
    const seen = new IntersectionObserver((entries) => {
      for (const e of entries) {
        const fills = e.intersectionRect.height >= window.innerHeight - 1 || e.intersectionRect.width >= window.innerWidth - 1;
        if (e.isIntersecting && (e.intersectionRatio >= FULLY || fills)) {
          seen.disconnect();
          resolve();
        }
      }
    }, { threshold: [0, 0.25, 0.5, 0.75, FULLY, 1] });
    seen.observe(el);
  });
}

function playable(video) {
  if (video.readyState >= HTMLMediaElement.HAVE_CURRENT_DATA) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      video.removeEventListener("loadeddata", done);
      video.removeEventListener("canplay", done);
      resolve();
    };
    video.addEventListener("loadeddata", done);
    video.addEventListener("canplay", done);
  });
}

function painted() {
  return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
}

/** Resolves when the trial under `root` is visible (see the top of this file), after a paint. */
export async function whenVisible(root) {
  const images = Array.from(root.querySelectorAll("img"));
  const videos = Array.from(root.querySelectorAll("video"));
  if (images.length) {
    await Promise.all(images.map((img) => decoded(img).then(() => inViewport(img))));
  } else if (videos.length) {
    await playable(videos[0]);
  }
  await painted();
}

/**
 * Start the clock of `trial` (a trial object of the API) shown under `root`.
 *
 * `fetchedAt`: `performance.now()` when the state holding the trial arrived (the midpoint of its
 * request), so a resumed trial's `elapsed_ms` is placed on this page's clock. `reportShown()`:
 * POSTs "shown"; resolves `{elapsedMs, at}` once the server has it (its `elapsed_ms` since its
 * `shown_at`, and `performance.now()` at the request's midpoint; retrying is its business), false
 * if the server refused. `onTick(remainingMs)`: every 250 ms and at once, null remaining for no limit.
 * `onExpire()`: once, when the limit is reached.
 *
 * Returns `{elapsed(), remaining(), acknowledged, visible, stop()}`: `elapsed()` is ms since the
 * trial became visible (null before), `acknowledged` resolves as `reportShown` does (at once for a
 * resumed trial), `visible` when the trial is visible on this page.
 */
// How far the server's "shown" may lie before this page's before the page adopts it (ms).
const SERVER_AHEAD_MS = 1000;

export function startClock(trial, root, { fetchedAt, reportShown, onTick, onExpire }) {
  const limit = trial.time_limit_ms;
  let origin = null;
  let stopped = false;
  let timer = null;
  let ticker = null;
  let expired = false;

  const elapsed = () => (origin === null ? null : performance.now() - origin);
  const remaining = () => (limit === null ? null : origin === null ? limit : Math.max(0, limit - elapsed()));

  function tick() {
    if (stopped) return;
    onTick(remaining());
  }

  function run() {
    tick();
    ticker = setInterval(tick, 250);
    if (limit === null) return;
    const wait = () => {
      if (stopped || expired) return;
      const left = limit - elapsed();
      if (left > 0) { timer = setTimeout(wait, Math.min(left, 1000)); return; }
      expired = true;
      tick();
      onExpire();
    };
    // Not at once: a resumed trial may be out of time already, and the caller must hold the clock
    // before `onExpire` runs.
    timer = setTimeout(wait, 0);
  }

  let acknowledged;
  const resumed = trial.shown && trial.elapsed_ms !== null;
  if (resumed) {
    origin = fetchedAt - trial.elapsed_ms;
    acknowledged = Promise.resolve(true);
    run();
  }
  onTick(remaining());
  const visible = whenVisible(root).then(() => {
    if (stopped) return;
    if (!resumed) {
      origin = performance.now();
      acknowledged = reportShown().then((ack) => {
        if (!ack) return false;
        // The server stamps "shown" at most STUDY_SHOW_MAX_MS after it served the trial: a page that
        // took longer to show it finds its clock behind the server's (by seconds, not by the few ms
        // of a request). The page then counts from the server's time, so its countdown and the
        // response time it reports agree with the server's limit.
        const serverOrigin = ack.at - ack.elapsedMs;
        if (ack.elapsedMs !== null && serverOrigin < origin - SERVER_AHEAD_MS) {
          origin = serverOrigin;
          root.dataset.shownAt = origin.toFixed(3);
          tick();
        }
        return true;
      });
      run();
    }
    root.dataset.shownAt = origin.toFixed(3);
    root.dataset.shown = String(trial.trial_id);
  });
  return {
    elapsed, remaining, visible,
    get acknowledged() { return acknowledged || visible.then(() => acknowledged); },
    get expired() { return expired; },
    stop() {
      stopped = true;
      clearTimeout(timer);
      clearInterval(ticker);
    },
  };
}
