// The screening page of a study link (templates/studies/link/screening.html): the window must be at
// least the study's minimum size, the browser must play H.264 in MP4, and a test clip (a synthetic
// pattern, no footage) must play to its end. The measurements go to the server in the form, which
// checks them again; "Continue" is enabled once all three pass. Config (json_script):
// {minWidth, minHeight, clipUrl}.

const config = JSON.parse(document.getElementById("screening-config").textContent);
const $ = (id) => document.getElementById(id);
const state = { viewport: false, codec: false, played: false };

function mark(id, ok, text) {
  const el = $(id);
  el.textContent = text;
  el.className = ok ? "ok" : "bad";
}

function update() {
  const ready = state.viewport && state.codec && state.played;
  const button = $("screening-continue");
  const was = button.disabled;
  button.disabled = !ready;
  if (ready && was) button.focus();
}

function checkViewport() {
  const w = window.innerWidth, h = window.innerHeight;
  $("f-width").value = String(w);
  $("f-height").value = String(h);
  state.viewport = w >= config.minWidth && h >= config.minHeight;
  mark("check-viewport", state.viewport, state.viewport ? `Window size: ${w} x ${h}, fine.`
    : `Window size: ${w} x ${h}. Make the window at least ${config.minWidth} x ${config.minHeight} (or use a larger screen).`);
  update();
}

const video = $("test-clip");
state.codec = video.canPlayType('video/mp4; codecs="avc1.42E01E"') !== "";
$("f-codec").value = state.codec ? "yes" : "no";
mark("check-codec", state.codec, state.codec ? "Video format: supported." : "Video format: this browser cannot play the study's videos. Try another browser.");
$("f-played").value = "no";

if (state.codec) {
  const failed = setTimeout(() => {
    if (!state.played) mark("check-played", false, "Test video: it did not play. Reload the page to try again.");
  }, 20000);
  video.addEventListener("ended", () => {
    clearTimeout(failed);
    state.played = true;
    $("f-played").value = "yes";
    mark("check-played", true, "Test video: played.");
    update();
  });
  video.addEventListener("error", () => mark("check-played", false, "Test video: it could not be loaded. Reload the page."));
  video.src = config.clipUrl;
  video.play().catch(() => mark("check-played", false, "Test video: press play on the video above."));
  video.controls = true;
} else {
  mark("check-played", false, "Test video: not played (format not supported).");
}

window.addEventListener("resize", checkViewport);
checkViewport();
