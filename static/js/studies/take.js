// The participant's page of a study, for every kind (templates/studies/take.html). The server
// decides the stage and the current trial; this script shows the instructions, then each trial in
// the widget of the study's kind, with the trial clock (clock.js) and a countdown when the trial has
// a time limit, the feedback of practice trials, and the end. Configuration comes from the page's
// json_script block (the CSP forbids inline script): kind, enrollUrl, currentUrl, shownUrl, answerUrl,
// and for a study link's participant afterUrl (where the page goes once every trial is answered: the
// debrief). A study with no place left answers the enrolment with 409 and errors.study "full": the
// page says so instead of "all your questions are answered".
//
// A widget is the module `./<kind>.js` (adding a kind adds one file here, nothing else). It exports
// `mount(root, content, {saved, changed})`, possibly async, which fills `root` from the trial's
// `content` (restoring `saved`, the unsent input kept from an earlier load) and calls `changed()`
// after every change. It returns:
//   value()    -> {response} ready to send, or {problem: "plain words", focus: element}
//   unsent()   -> the input to keep until it is sent (JSON)
//   key(event) -> true if the widget handled the key (the page then leaves it alone)
//   feedback(fb, response) (optional) -> a node showing a practice trial's feedback: the right
//              answer (fb.truth) beside the participant's own (`response`, as sent; null if the time ran out)
//
// Answering: the response time is the clock's, read when the person answers; the answer waits for
// the server to have the "shown" report, then is sent with an idempotency key kept per trial, and
// retried with the same key on a network failure. A refused answer shows the server's reason and
// keeps everything the person put in. When a time limit is reached the page answers with no
// response (the server stores the trial timed out) and moves on; the next trial says the last one
// was missed.
//
// Keys: Enter answers, in a text box too (Shift+Enter starts a new line there; Ctrl+Enter answers
// as well), so the Answer button's "(Enter)" is true on every kind.

import { startClock } from "./clock.js";
import { newKey, send as post } from "../http.js";
import { unsent } from "../unsent.js";

const config = JSON.parse(document.getElementById("take-config").textContent);
const $ = (id) => document.getElementById(id);
const SECTIONS = ["instructions", "trial", "feedback", "done", "full"];
const widgetModule = import(`./${config.kind}.js`);

let current = null;      // {trial, widget, clock, store} of the trial on screen
let generation = 0;      // bumped per render: a slow mount of an old trial is dropped
let sending = false;
let expireAfterSend = false;
let missedLast = false;  // the trial before the one on screen ran out of time
const WAIT_TEXT = "Wait until everything is shown.";

function say(text) { $("status").textContent = text || ""; }

function showError(text) {
  $("error").textContent = text;
  $("error").hidden = !text;
}

function show(section) {
  for (const id of SECTIONS) $(id).hidden = id !== section;
  say("");
}

function stopTrial() {
  if (current) current.clock.stop();
  current = null;
  expireAfterSend = false;
}

// GET `url`, or POST it with a JSON `body` (if any); returns [response, its JSON body,
// performance.now() at the request's midpoint, where the server read its clock].
async function call(url, method, body) {
  const sent = performance.now();
  const res = method === "GET" ? await fetch(url, { credentials: "same-origin" }) : await post(url, body);
  const data = await res.json().catch(() => ({}));
  return [res, data, (sent + performance.now()) / 2];
}

function reason(body, status) {
  const parts = [body.detail || `The server refused this (${status}).`];
  for (const message of Object.values(body.errors || {})) if (!parts.includes(message)) parts.push(message);
  return parts.join(" ");
}

async function render(state, fetchedAt) {
  stopTrial();
  generation += 1;
  if (state.stage === "not_started" || state.stage === "instructions") {
    show("instructions");
    $("begin").focus();
  } else if (state.stage === "done" || !state.trial) {
    if (config.afterUrl) { window.location.assign(config.afterUrl); return; }
    show("done");
  } else {
    await showTrial(state.trial, fetchedAt, generation);
  }
}

async function reload() {
  try {
    const [res, body, at] = await call(config.currentUrl, "GET");
    if (!res.ok) { say(reason(body, res.status)); return; }
    await render(body, at);
  } catch (e) {
    say("Cannot reach the server. Reload the page to try again.");
  }
}

function countdown(remaining) {
  const el = $("countdown");
  el.hidden = remaining === null;
  if (remaining === null) return;
  const s = Math.ceil(remaining / 1000);
  el.textContent = `Time left ${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  el.classList.toggle("low", s <= 10);
}

// Report the trial shown; retried on a network error (the server keeps the first time). Resolves
// {elapsedMs, at} (the server's time since its shown_at, and when it was read on this page's clock),
// or false if the server refuses (not the current trial any more), after showing the current state.
async function reportShown(trial) {
  for (let attempt = 1; ; attempt++) {
    try {
      const [res, data, at] = await call(config.shownUrl.replace("{id}", trial.trial_id), "POST");
      if (res.ok) return { elapsedMs: typeof data.elapsed_ms === "number" ? data.elapsed_ms : null, at };
      if (current && current.trial === trial) reload();
      return false;
    } catch (e) {
      await new Promise((r) => setTimeout(r, Math.min(5000, 500 * attempt)));
    }
  }
}

async function showTrial(trial, fetchedAt, gen) {
  show("trial");
  showError("");
  const root = $("trial");
  delete root.dataset.shown;
  delete root.dataset.shownAt;
  $("trial-title").textContent = (trial.practice ? "Practice " : "Question ") + trial.number + " of " + trial.of;
  $("progress").max = trial.of;
  $("progress").value = trial.number - 1;
  const notes = [];
  if (missedLast) notes.push("Time ran out on the last question: it counts as not answered.");
  if (trial.practice) notes.push("Practice: you will see how you did after answering. It does not count.");
  missedLast = false;
  $("trial-note").textContent = notes.join(" ");
  $("trial-note").classList.toggle("study-missed", notes.length > 0 && notes[0].startsWith("Time ran out"));
  $("answer").disabled = true;
  countdown(trial.time_limit_ms);
  const box = $("widget");
  box.replaceChildren();
  const store = unsent(`study-trial:${trial.trial_id}`);
  const { mount } = await widgetModule;
  const widget = await mount(box, trial.content, {
    saved: store.input(),
    changed: () => { if (current && current.trial === trial) store.keep(current.widget.unsent()); },
  });
  if (gen !== generation) return;
  const clock = startClock(trial, root, {
    fetchedAt,
    reportShown: () => reportShown(trial),
    onTick: countdown,
    onExpire: () => {
      if (!current || current.trial !== trial) return;
      say("Time is up: moving on.");
      if (sending) expireAfterSend = true;
      else answer(true);
    },
  });
  current = { trial, widget, clock, store };
  clock.visible.then(() => {
    if (!current || current.trial !== trial) return;
    $("answer").disabled = false;
    if ($("status").textContent === WAIT_TEXT) say("");
  });
}

async function send(url, body) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call(url, "POST", body);
    } catch (e) {
      say("Network problem; retrying…");
      await new Promise((r) => setTimeout(r, Math.min(10000, 1000 * attempt)));
    }
  }
}

async function answer(timedOut) {
  if (!current || sending) return;
  const { trial, widget, clock, store } = current;
  const rt = clock.elapsed();  // the moment of the answer, before anything is awaited
  // A resumed trial's clock runs from the start, but it is answered only once it is on screen again.
  if (rt === null || (!timedOut && !$("trial").dataset.shown)) { say(WAIT_TEXT); return; }
  let response = null;
  if (!timedOut) {
    const value = widget.value();
    if (value.problem) {
      showError(value.problem);
      if (value.focus) value.focus.focus();
      return;
    }
    response = value.response;
  }
  showError("");
  sending = true;
  $("answer").disabled = true;
  let res, data, at;
  if (await clock.acknowledged) {
    const body = { response, client_rt_ms: Math.max(0.1, rt), idempotency_key: store.key(newKey) };
    [res, data, at] = await send(config.answerUrl.replace("{id}", trial.trial_id), body);
  }
  sending = false;
  if (!res || !current || current.trial !== trial) return;  // "shown" was refused: the current state is shown instead
  if (res.status === 409) {                                    // answered elsewhere, or its time closed it
    if (timedOut) missedLast = true;
    await reload();
    say(reason(data, res.status));
  } else if (!res.ok) {
    showError(reason(data, res.status));                       // the person's input stays as it was
    $("answer").disabled = false;
    if (expireAfterSend || clock.expired) answer(true);
  } else {
    store.clear();
    say("");
    if (timedOut) missedLast = true;
    if (data.feedback && Object.keys(data.feedback).length) showFeedback(data, widget, response, timedOut);
    else await render(data, at);
  }
}

function showFeedback(state, widget, response, timedOut) {
  stopTrial();
  generation += 1;
  show("feedback");
  const fb = state.feedback;
  $("feedback-verdict").textContent = timedOut ? "Time ran out: this one is not answered." : fb.correct ? "Right." : "Not quite.";
  $("feedback-detail").replaceChildren(...(widget.feedback ? [widget.feedback(fb, timedOut ? null : response)] : []));
  missedLast = false;  // the feedback said so already
  $("continue").focus();
}

$("begin").addEventListener("click", async () => {
  $("begin").disabled = true;
  try {
    const [res, body, at] = await call(config.enrollUrl, "POST");
    if (res.ok) await render(body, at);
    else if (res.status === 409 && body.errors && body.errors.study === "full") show("full");
    else say(reason(body, res.status));
  } catch (e) {
    say("Cannot reach the server. Try again in a moment.");
  } finally {
    $("begin").disabled = false;
  }
});
$("answer").addEventListener("click", () => answer(false));
// The server sends the next trial only when asked after the feedback (its clock counts from when its
// content is first served), so "Continue" fetches the current state.
$("continue").addEventListener("click", () => reload());

document.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !$("instructions").hidden) { e.preventDefault(); $("begin").click(); return; }
  if (!$("feedback").hidden) {
    if (e.key === "Enter") { e.preventDefault(); $("continue").click(); }
    return;
  }
  if (!current || $("trial").hidden) return;
  if (current.widget.key(e)) return;
  if (e.key !== "Enter" || e.isComposing) return;
  const typing = e.target && e.target.tagName === "TEXTAREA";
  if (typing && e.shiftKey && !(e.ctrlKey || e.metaKey)) return;  // Shift+Enter: a new line
  if (e.target && e.target.tagName === "BUTTON" && e.target.id !== "answer") return;
  e.preventDefault();
  answer(false);
});

reload();
