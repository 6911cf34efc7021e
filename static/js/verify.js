// The verification page. Claims a unit through the API, shows its video (or a day-night pair, played
// in sync) and its QA pairs, records keep / modify / delete / add per item, and submits with an
// idempotency key (retried on network failure with the same key, so a submit is applied at most once).
//
// Nothing typed is lost: every change is saved in localStorage at once (works offline) and on the
// server (debounced); after a reload the newer of the two comes back. The lease on the unit is
// renewed by a heartbeat while the page is open. A QA pair changed by someone else since it was
// loaded is shown as a conflict to resolve, never overwritten silently. Everything works by keyboard.
//
// The time spent is saved with the work (locally and on the server, which bounds it) and comes back
// after a reload. If the lease lapsed and someone else took the unit, the server says in plain words
// what became of the work; the next holder of a first pass or double-check gets it restored, labelled
// with whose it was. A refused submit shows each error on the card it concerns.
(function () {
  "use strict";

  // Server configuration arrives as JSON in a non-executable <script type="application/json">
  // (Django's json_script): the CSP allows no inline script.
  const config = JSON.parse(document.getElementById("verify-config").textContent);
  const $ = (id) => document.getElementById(id);
  const cardsEl = $("cards");

  let unit = null;          // the unit payload from the API
  let items = [];           // [{kind: "draft"|"added", qa?, decision, ms, conflict?}]
  let selected = 0;
  let idempotencyKey = null;
  let loadedAt = 0;
  let priorMs = 0;          // time spent on this unit before this page load (restored from a save)
  let lost = false;         // the server said the unit is no longer ours: stop saving to it
  let selectedSince = 0;
  let submitting = false;
  let heartbeatTimer = null;
  let autosaveTimer = null;
  let players = [];         // [{el, video}] leader first
  let qaTypes = config.qaTypes || [];  // the project's QA types: [{slug, name, answer_kind, set_kind}]
  let reviewComments = {};  // a rework unit's reviewer comments by QA pair id: [{text, tags}] (issue 20)
  const KIND_LABEL = { first_pass: "First pass", overlap: "Overlap (blind)", double_check: "Double-check",
                       rework: "Rework", qualification: "Qualification" };
  // What each pass is for, in a line under the heading (issue 20: an overlap pass explains itself).
  const KIND_NOTE = {
    overlap: "An independent pass: you see the machine's drafts as drafted, not what the first annotator made of " +
      "them. Your decisions are compared with theirs to measure agreement and do not change the QA pairs; where " +
      "you disagree, the pair goes to a consensus round, whose outcome is exported with it.",
    double_check: "A second look at QA pairs another annotator verified: your decisions change them.",
    rework: "Back with you for rework (a reviewer sent it back, an admin reopened it, or you did): change what " +
      "needs changing (the reviewer's comments are beside the QA pairs), then submit again.",
    qualification: "A qualification unit: your decisions are compared with known ones. The real queue opens when enough of them match.",
  };

  // ---------------------------------------------------------------- helpers
  const api = Http.send;
  const newKey = Http.newKey;

  function unitUrl(template) { return template.replace("{id}", unit.id); }
  // One clock on the page (issue 21): "h:mm:ss.f" (static/js/clock.js); a life log's times read as
  // its own wall clock, the time of day the wearer lived, never as virtual seconds.
  function fmt(s) { return unit && unit.life_log ? Clock.wall(s, unit.life_log.start) : Clock.hms(s); }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c);
    return node;
  }

  function setStatus(text) { $("status").textContent = text; }

  // A confirmation in view wherever the page is scrolled (issue 21: "Saved unit" was off screen):
  // it names what was saved and fades after a while; the status line under Submit keeps it too.
  // "unit 7qk3… (day + night)": the unit's handle and its videos' labels, when they have any.
  function unitName() {
    const labels = unit.videos.map((v) => v.label).filter(Boolean);
    return "unit " + unit.id + (labels.length ? " (" + labels.join(" + ") + ")" : "");
  }

  let toastTimer = null;
  function toast(text) {
    const box = $("toast");
    box.textContent = text;
    box.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { box.hidden = true; }, 8000);
  }

  function focusEnd(input) {
    if (!input) return;
    input.focus();
    if (typeof input.setSelectionRange === "function" && input.type !== "radio") {
      const n = input.value.length;
      input.setSelectionRange(n, n);
    }
  }

  // ------------------------------------------------------- saving the work
  function storageKey() { return "verify:" + config.project + ":item:" + unit.queue.item_id; }

  // Time on the unit so far (ms): before this page load, plus since.
  function elapsedMs() { return priorMs + Math.round(performance.now() - loadedAt); }

  // Time on each item (ms), including the running interval of the selected one.
  function itemMs() {
    const now = performance.now();
    return items.map((it, i) => it.ms + (i === selected && !document.hidden ? Math.round(now - selectedSince) : 0));
  }

  function snapshot() {
    const ms = itemMs();
    return {
      key: idempotencyKey,
      timeMs: elapsedMs(),
      items: items.map((it, i) => ({ kind: it.kind, qaId: it.qa ? it.qa.id : null, version: it.qa ? it.qa.version : null,
                                     decision: it.decision, ms: ms[i] })),
    };
  }

  // Called after every change: localStorage at once, the server after a short pause.
  function saveLocal() {
    if (!unit) return;
    const state = { savedAt: Date.now(), state: snapshot() };
    try { localStorage.setItem(storageKey(), JSON.stringify(state)); } catch (e) { /* full or disabled */ }
    clearTimeout(autosaveTimer);
    if (lost) return;
    $("save-status").textContent = "Saving…";
    autosaveTimer = setTimeout(() => saveServer(state), 700);
  }

  async function saveServer(saved) {
    if (!unit) return;
    try {
      const res = await api(unitUrl(config.autosaveUrl),
        { state: saved.state, client_saved_at_ms: saved.savedAt, time_spent_ms: saved.state.timeMs || 0 }, "PUT");
      if (res.ok) $("save-status").textContent = "All changes saved";
      else if (res.status === 409) leaseLost((await res.json()).detail);
      else $("save-status").textContent = "Saved in this browser (server said " + res.status + ")";
    } catch (e) {
      $("save-status").textContent = "Offline: saved in this browser, will sync";
      autosaveTimer = setTimeout(() => saveServer(saved), 5000);
    }
  }

  // The person's own work comes back first: the newer of the browser's copy and the server's copy
  // (whose time the server bounded). Failing that, the work of an earlier holder whose lease lapsed
  // (``carried``): their decisions, but neither their idempotency key nor their time, which stays
  // theirs. Returns "own", "carried" or null.
  function restore() {
    let local = null;
    try { local = JSON.parse(localStorage.getItem(storageKey()) || "null"); } catch (e) { local = null; }
    const a = unit.autosave;
    const server = a ? { savedAt: a.client_saved_at_ms, state: a.state, timeMs: a.time_spent_ms } : null;
    const best = [local, server].filter((x) => x && x.state).sort((x, y) => y.savedAt - x.savedAt)[0];
    const carried = unit.carried && unit.carried.state;
    if (!best && !carried) return null;
    const state = best ? best.state : carried;
    if (best) {
      idempotencyKey = best.state.key || idempotencyKey;
      priorMs = Math.max(0, best === server ? best.timeMs || 0 : best.state.timeMs || 0);
    }
    for (const saved of (state && state.items) || []) {
      if (!saved || !saved.decision) continue;
      const ms = best ? saved.ms || 0 : 0;
      if (saved.kind === "draft") {
        const it = items.find((x) => x.kind === "draft" && x.qa.id === saved.qaId);
        if (it) { it.decision = saved.decision; it.ms = ms; }
      } else {
        items.push({ kind: "added", decision: saved.decision, ms, errors: [] });
      }
    }
    return best ? "own" : "carried";
  }

  function showCarried(restored) {
    const box = $("carried");
    const c = unit.carried;
    box.hidden = !c;
    if (!c) return;
    const when = new Date(c.saved_at).toLocaleString();
    box.replaceChildren(el("strong", {}, "Continued from " + c.username + "'s work. "),
      c.username + " held this unit before you; their lease lapsed after they saved at " + when + ". " +
      (restored === "carried" ? "Their decisions are restored below: check them before you submit. "
                              : "Their decisions were restored when you took the unit. ") +
      "Their time stays credited to them; yours starts now.");
  }

  // ------------------------------------------------------------------ queue
  async function loadTypes() {
    try {
      const res = await fetch(config.typesUrl, { credentials: "same-origin" });
      if (res.ok) qaTypes = await res.json();
    } catch (e) { /* the add menu stays empty until the next load */ }
  }

  async function loadNext() {
    releasePlayers();
    unit = null;  // keys do nothing until the next unit is shown
    stopHeartbeat();
    clearTimeout(autosaveTimer);
    $("save-status").textContent = "";
    if (!qaTypes.length) await loadTypes();
    $("empty").hidden = true;
    $("workspace").hidden = true;
    $("lease-lost").hidden = true;
    $("carried").hidden = true;
    $("submit").disabled = false;
    lost = false;
    showErrors([]);
    setStatus("Loading the next unit…");
    let res;
    try {
      res = await api(config.nextUrl);
    } catch (e) {
      setStatus("Cannot reach the server. Retrying in 3 s…");
      setTimeout(loadNext, 3000);
      return;
    }
    if (res.status === 204) {
      unit = null;
      setStatus("");
      $("empty").hidden = false;
      return;
    }
    if (!res.ok) {
      // A refusal in words (paused, out of qualification tries: why and whom to ask) is shown as it is.
      let detail = "";
      try { detail = (await res.json()).detail || ""; } catch (e) { detail = ""; }
      setStatus(res.status === 403 && detail ? detail : "Could not load a unit (" + res.status + "). Reload the page to try again.");
      return;
    }
    unit = await res.json();
    idempotencyKey = newKey();
    priorMs = 0;
    items = unit.qa_pairs.map((qa) => ({ kind: "draft", qa, decision: null, ms: 0, errors: [] }));
    // A rework (issue 20) also shows the pairs this person's pass deleted, still deleted until they
    // keep (restore) or modify one, and the reviewer's comments beside each pair.
    const review = unit.queue.kind === "rework" ? unit.review || null : null;
    reviewComments = {};
    for (const c of (review && review.comments) || []) (reviewComments[c.qa_id] = reviewComments[c.qa_id] || []).push(c);
    for (const qa of (review && review.deleted_pairs) || []) {
      items.push({ kind: "draft", qa, decision: { action: "delete", reason: qa.delete_reason }, ms: 0, errors: [] });
    }
    const restored = restore();
    showCarried(restored);
    selected = 0;
    loadedAt = performance.now();
    selectedSince = loadedAt;
    setupPlayers();
    if (items[selected]) loopItem(items[selected]);  // the first item's clip
    render();
    $("workspace").hidden = false;
    $("kind").textContent = KIND_LABEL[unit.queue.kind] || unit.queue.kind;
    $("kind-note").textContent = KIND_NOTE[unit.queue.kind] || "";
    $("kind-note").hidden = !KIND_NOTE[unit.queue.kind];
    // Assigned to this person: a rework or qualification unit would come straight back.
    $("skip").hidden = unit.queue.kind === "rework" || unit.queue.kind === "qualification";
    setStatus("This unit: " + unit.qa_pairs.length + " QA pair" + (unit.qa_pairs.length === 1 ? "" : "s") + (unit.paired ? ", day-night pair" : "") +
      (review ? (review.reopened ? " (reopened, with no reviewer comments: change what you need and submit)"
                 : " (sent back by a reviewer with " + review.comments.length + " comment" + (review.comments.length === 1 ? "" : "s") +
                   ", shown beside the QA pairs)") : "") +
      (restored === "own" ? " (your unsaved work was restored)" : restored === "carried" ? " (" + unit.carried.username + "'s work was restored)" : ""));
    startHeartbeat();
    focusCard();
  }

  function startHeartbeat() {
    stopHeartbeat();
    heartbeatTimer = setInterval(async () => {
      if (!unit) return;
      try {
        const res = await api(unitUrl(config.heartbeatUrl));
        if (res.status === 409) leaseLost((await res.json()).detail);
      } catch (e) { /* offline: the next beat tries again */ }
    }, (unit.queue.heartbeat_s || 30) * 1000);
  }
  function stopHeartbeat() { clearInterval(heartbeatTimer); heartbeatTimer = null; }

  // The server's words say what became of the work (passed on to the next holder, or kept for the
  // admins) and that the time stays credited; the page offers the next unit.
  function leaseLost(detail) {
    lost = true;
    releasePlayers();
    stopHeartbeat();
    clearTimeout(autosaveTimer);
    const box = $("lease-lost");
    const next = el("button", { type: "button", id: "take-next", onclick: loadNext }, "Take the next unit");
    box.replaceChildren(el("strong", {}, "This unit is no longer yours. "),
      detail || "Someone else holds it now.", " ", next);
    box.hidden = false;
    $("submit").disabled = true;
    next.focus();
  }

  // --------------------------------------------------------------- players
  // The first player leads; the others follow its play, pause, seek and rate. A follower shows
  // time (leader time - leader offset + its own offset): for a day-night pair, night = day + offset.
  // Only the leader may play sound (M); followers stay muted, so a pair is never heard twice.
  let loop = { start: 0, end: 0 };
  let looping = true;       // false once the person seeks outside the selected clip: the unit plays on
  let audioOn = false;      // the person's choice, kept across units
  let compare = "side";     // day-night comparison: side (by side), flicker (A/B) or swipe (A/B)
  let flickerShows = 0;     // in flicker mode, the index of the player shown
  let swipeAt = 50;         // in swipe mode, where the divider is (% of the width)
  let bigView = 0;          // with more than two views, the index of the one shown large
  const BRIGHT_ON = 2.2;    // L's brightness for the night player (was the one "Brighten" level)
  const leader = () => players[0].video;
  const swipeHandle = $("swipe-handle");  // moved into #players in swipe mode (so looked up once)
  const timeline = window.Timeline.create($("timeline"), {
    seek: (t) => seekTo(t),
    onZoom: (z) => { $("zoom-level").textContent = z > 1 ? "×" + Math.round(z * 10) / 10 : "whole unit"; },
    format: (s) => fmt(s),
  });

  // A released unit's players stop loading at once (issue 21): hls.js is destroyed and each
  // element's source let go, so no segment is fetched for a unit that is no longer this person's
  // (submitted, skipped, lease lost, or the queue empty after it).
  function releasePlayers() {
    for (const p of players) if (p.video.detachMedia) p.video.detachMedia();
    players = [];
    $("players").replaceChildren();
  }

  function setupPlayers() {
    releasePlayers();  // the previous unit's, if any
    const box = $("players");
    const many = !unit.life_log && unit.videos.length > 1;
    players = (unit.life_log ? unit.videos.slice(0, 1) : unit.videos).map((v) => {
      const video = el("video", { preload: "auto", playsinline: true, muted: true, "data-role": v.role });
      video.muted = true;
      if (v.poster_url) video.poster = v.poster_url;
      if (unit.life_log) {  // a life log (X-LeBench): one player over its parts, in virtual seconds (virtual_player.js)
        const vp = window.VirtualPlayer.create(video, unit.life_log.parts);
        vp.addEventListener("gapjump", (e) => gapNotice(e.detail.from, e.detail.to));
        return { el: el("div", { class: "video-wrap", "data-role": "single" }, video), meta: { ...v, role: "single" }, bright: 1,
                 video: vp };
      }
      video.detachMedia = window.attachMedia(video, v);  // HLS (long videos) or MP4: static/js/media_source.js
      const wrap = el("div", { class: "video-wrap", "data-role": v.role, onclick: () => showLarge(players.findIndex((p) => p.el === wrap)) },
        v.role === "single" ? null : el("span", { class: "player-label" }, (v.label || v.role) + (v.role === "night" && v.difficulty ? " · " + v.difficulty : "")), video);
      return { el: wrap, video, meta: v, bright: 1 };
    });
    box.replaceChildren(...players.map((p) => p.el));
    bigView = 0;
    // More than two views: each is a button that shows it large, reached by Tab and pressed with Enter
    // as well as clicked (issue 21: the small views could only be clicked). Space stays the page's
    // Play, whatever view was clicked or tabbed to last.
    if (!unit.life_log && players.length > 2) {
      players.forEach((p, i) => {
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
    $("compare-bar").hidden = players.length !== 2;
    if (players.length !== 2) compare = "side";
    $("compare").value = compare;
    setupBrightness();
    applyCompare();
    $("video-name").textContent = unit.videos.map((v) => v.label || "the video").join(" + ");
    const lead = leader();
    lead.playbackRate = parseFloat($("rate").value);
    lead.addEventListener("timeupdate", onLeaderTime);
    lead.addEventListener("loadedmetadata", () => {
      lead.currentTime = loop.start;
      timeline.setDuration(Number.isFinite(lead.duration) ? lead.duration : unit.video.duration_s);
    });
    lead.addEventListener("play", () => { $("play").textContent = "Pause"; followers((f) => f.play().catch(() => {})); syncFollowers(true); });
    lead.addEventListener("pause", () => { $("play").textContent = "Play"; followers((f) => f.pause()); syncFollowers(true); });
    lead.addEventListener("seeked", () => { syncFollowers(true); timeline.setTime(lead.currentTime); });
    lead.addEventListener("ratechange", () => followers((f) => { f.playbackRate = lead.playbackRate; }));
    for (const p of players.slice(1)) p.video.addEventListener("loadedmetadata", () => syncFollowers(true));
    if (lead.requestVideoFrameCallback) {
      const onFrame = () => {
        if (players[0] && players[0].video === lead) { syncFollowers(false); timeline.setTime(lead.currentTime); lead.requestVideoFrameCallback(onFrame); }
      };
      lead.requestVideoFrameCallback(onFrame);
    }
    applyAudio();
    timeline.setDuration(unit.video.duration_s || unit.end_s);
    timeline.setBounds(unit.start_s, unit.end_s);
    timeline.zoomReset();
    timeline.setTime(unit.start_s);
    timeline.loadThumbnails(unit.videos[0].thumbnails_vtt_url || null);
    setLoop(unit.start_s, unit.end_s);
  }

  // A life log's player went over a gap (a seek into one, or playing past a part's end): say so,
  // with the gap's wall-clock times, rather than jump silently (issue 21).
  function gapNotice(from, to) {
    const g = (unit.life_log.gaps || []).find((x) => from >= x.start_s - 0.05 && from <= x.end_s + 0.05);
    const a = g ? g.start_s : from;
    const b = g ? g.end_s : to;
    toast("Not recorded from " + fmt(a) + " to " + fmt(b) + " (" + Clock.hms(b - a) + "): playing from the next part, at " + fmt(to) + ".");
  }

  function followers(fn) { for (const p of players.slice(1)) fn(p.video, p.meta); }

  // While playing, a follower is sought only when it is this far off (seconds); nearer, its rate closes
  // the gap, and a follower still seeking is left to finish. On a busy machine a seek takes longer than
  // the 3 frames that used to trigger one: the follower came back behind by the seek's own time and
  // could be sought again and again (issue 21: the ego-exo test saw 0.18 s of drift under load).
  const SEEK_WHILE_PLAYING_S = 0.25;

  function syncFollowers(force) {
    if (players.length < 2) return;
    const lead = leader();
    const base = lead.currentTime - players[0].meta.offset_s;
    const frame = 1 / ((unit && unit.video.fps) || 30);
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
  function setLoop(start, end) {
    loop = { start, end };
    looping = true;
    $("loop-note").textContent = "Looping " + fmt(start) + " – " + fmt(end);
    const lead = players.length ? leader() : null;
    if (lead && lead.readyState >= 1 && (lead.currentTime < start || lead.currentTime > end)) lead.currentTime = start;
    drawRanges();
  }

  // Seek the leader (the followers follow) to ``t`` seconds, within the unit. Outside the looped
  // clip the loop is released, so the person can look around the whole unit (e.g. to set In / Out).
  function seekTo(t) {
    if (!unit || !players.length) return;
    t = Math.min(unit.end_s, Math.max(unit.start_s, t));
    if (looping && (t < loop.start || t > loop.end)) {
      looping = false;
      $("loop-note").textContent = "Playing the whole unit " + fmt(unit.start_s) + " – " + fmt(unit.end_s) + " (select the item again to loop its clip)";
    }
    leader().currentTime = t;
    $("clock").textContent = fmt(t);
    timeline.setTime(t);
  }

  function onLeaderTime() {
    if (!players.length) return;  // released
    const lead = leader();
    $("clock").textContent = fmt(lead.currentTime);
    timeline.setTime(lead.currentTime);
    const range = looping ? loop : { start: unit.start_s, end: unit.end_s };
    if (lead.currentTime >= range.end - 0.01 || lead.currentTime < range.start - 0.05) lead.currentTime = range.start;
  }

  function togglePlay() { const lead = leader(); if (lead.paused) lead.play().catch(() => {}); else lead.pause(); }
  function stepFrame(dir) {
    const lead = leader();
    lead.pause();
    const dt = 1 / (unit && unit.video.fps ? unit.video.fps : 30);
    const range = looping ? loop : { start: unit.start_s, end: unit.end_s };
    lead.currentTime = Math.min(range.end, Math.max(range.start, lead.currentTime + dir * dt));
    $("clock").textContent = fmt(lead.currentTime);
  }
  function changeRate(dir) {
    const sel = $("rate");
    sel.selectedIndex = Math.min(sel.options.length - 1, Math.max(0, sel.selectedIndex + dir));
    leader().playbackRate = parseFloat(sel.value);
  }

  // Sound: the leader only (M). Browsers allow unmuting after a key press or click, which this is.
  function applyAudio() {
    players.forEach((p, i) => { p.video.muted = i > 0 || !audioOn; });
    const b = $("audio");
    b.textContent = audioOn ? "Sound on (M)" : "Sound off (M)";
    b.setAttribute("aria-pressed", audioOn ? "true" : "false");
    b.classList.toggle("on", audioOn);
  }
  function toggleAudio() { audioOn = !audioOn; applyAudio(); }

  const nameOf = (p) => p.meta.label || p.meta.role;  // "day", "night", "ego", "exo 1"

  // Brightness per player: a slider each (1 = as recorded). L toggles the night player's (the
  // only player's for a single video) between as recorded and bright.
  function setupBrightness() {
    const box = $("brightness");
    box.replaceChildren(el("span", { class: "muted" }, "Brightness"), ...players.map((p, i) => {
      const input = el("input", { type: "range", min: "0.5", max: "3", step: "0.1", value: String(p.bright),
        "data-role": p.meta.role, "aria-label": "brightness of the " + (p.meta.role === "single" ? "video" : nameOf(p) + " video"),
        oninput: (e) => { p.bright = parseFloat(e.target.value); applyBright(p); } });
      p.slider = input;
      return el("label", { class: "bright-control" }, players.length > 1 ? nameOf(p) + " " : "", input);
    }));
    players.forEach(applyBright);
  }
  function applyBright(p) {
    p.video.style.filter = p.bright === 1 ? "" : "brightness(" + p.bright + ")";  // CSSOM: allowed by the CSP
    p.video.dataset.brightness = String(p.bright);
    if (p.slider) p.slider.value = String(p.bright);
  }
  function toggleBright() {
    const p = players.find((x) => x.meta.role === "night") || players[players.length - 1];
    if (!p) return;
    p.bright = p.bright > 1 ? 1 : BRIGHT_ON;
    applyBright(p);
  }

  // Day-night comparison (two players): side by side, or A/B in one frame by flicker (B shows the
  // other video) or swipe (a divider over the two aligned videos, the night one on the right).
  function applyCompare() {
    const box = $("players");
    const ab = players.length === 2 && compare !== "side";
    box.className = "players" + (players.length > 1 ? "" : " single") + (ab ? " ab " + compare : "") +
      (players.length > 2 ? " grid" : "");
    players.forEach((p, i) => {
      p.el.classList.toggle("big", players.length > 2 && i === bigView);
      if (players.length > 2) p.el.setAttribute("aria-pressed", i === bigView ? "true" : "false");
      p.el.classList.toggle("ab-hidden", ab && compare === "flicker" && i !== flickerShows);
      p.el.style.clipPath = ab && compare === "swipe" && i === 1 ? "inset(0 0 0 " + swipeAt + "%)" : "";
    });
    const handle = swipeHandle;
    if (ab && compare === "swipe") {
      if (handle.parentNode !== box) box.append(handle);  // moving it would end a drag's pointer capture
      handle.style.left = swipeAt + "%";
    }
    handle.hidden = !(ab && compare === "swipe");
    $("swipe").value = String(swipeAt);
    $("swipe-label").hidden = !(ab && compare === "swipe");
    $("flip").hidden = !(ab && compare === "flicker");
    if (players.length === 2) $("flip").textContent = "Showing " + nameOf(players[flickerShows]) + " (B)";
  }
  // More than two views (an ego-exo set): one large view above the others, small; a click on a small
  // view (or W, cycling) makes it the large one. The leader stays the first player whatever is shown.
  function showLarge(i) {
    if (players.length < 3) return;
    bigView = ((i % players.length) + players.length) % players.length;
    applyCompare();
  }

  function setCompare(mode) { compare = mode; $("compare").value = mode; applyCompare(); }
  function cycleCompare() { if (players.length === 2) setCompare({ side: "flicker", flicker: "swipe", swipe: "side" }[compare]); }
  function flip() {
    if (players.length !== 2) return;
    if (compare === "side") compare = "flicker";
    flickerShows = 1 - flickerShows;
    setCompare(compare);
  }
  function setSwipe(pct) { swipeAt = Math.min(100, Math.max(0, pct)); applyCompare(); }

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

  // ------------------------------------------------------------------ cards
  // The clip an item loops: a draft's own; an added item's In..Out once both are set, else the unit.
  function clipOf(it) {
    if (it.kind === "draft") return it.qa.clip;
    const d = it.decision;
    if (Number.isFinite(d.clip_start_s) && Number.isFinite(d.clip_end_s) && d.clip_end_s > d.clip_start_s) {
      return { start_s: d.clip_start_s, end_s: d.clip_end_s };
    }
    return { start_s: unit.start_s, end_s: unit.end_s };
  }

  const typeOf = (slug) => qaTypes.find((t) => t.slug === slug) || null;
  const isInterval = (slug) => { const t = typeOf(slug); return !!t && t.answer_kind === "interval"; };

  // The answer interval of an item, if its QA type's answer is one: the decision's (an added item,
  // or a draft being modified) or the draft's own. Seconds, or null.
  function answerOf(it) {
    const d = it.decision;
    if (it.kind === "added") return isInterval(d.qa_type) ? { start: d.answer_start_s, end: d.answer_end_s } : null;
    if (it.qa.answer_kind !== "interval") return null;
    if (d && d.action === "modify") return { start: d.answer_start_s, end: d.answer_end_s };
    return { start: it.qa.answer_start_s, end: it.qa.answer_end_s };
  }

  // The timeline's marks: the unit, the selected item's clip (or In / Out), its answer interval.
  function drawRanges() {
    if (!unit) return;
    const list = [{ start: unit.start_s, end: unit.end_s, kind: "unit", label: "Unit" }];
    if (unit.life_log) {  // its parts and the gaps between them, as the life-log page draws them
      unit.life_log.parts.forEach((p, n) => list.push({ start: p.offset_s, end: p.offset_s + (p.duration_s || 0), kind: "part",
                                                        label: "Part " + (n + 1) }));
      for (const g of unit.life_log.gaps || []) list.push({ start: g.start_s, end: g.end_s, kind: "gap", label: "Not recorded" });
    }
    const it = items[selected];
    if (it) {
      const c = clipOf(it);
      list.push({ start: c.start_s, end: c.end_s, kind: "clip", label: "Clip of item " + (selected + 1) });
      if (it.kind === "added") {
        const d = it.decision;
        if (Number.isFinite(d.clip_start_s)) list.push({ start: d.clip_start_s, end: d.clip_start_s + 1e-3, kind: "in", label: "In" });
        if (Number.isFinite(d.clip_end_s)) list.push({ start: d.clip_end_s - 1e-3, end: d.clip_end_s, kind: "out", label: "Out" });
      }
      const a = answerOf(it);
      if (a && Number.isFinite(a.start) && Number.isFinite(a.end)) list.push({ start: a.start, end: a.end, kind: "answer", label: "Answer" });
    }
    timeline.setRanges(list);
  }

  // The leader's time, rounded to hundredths of a second (the fields' precision).
  const now100 = () => Math.round(leader().currentTime * 100) / 100;

  // I / O: the selected added item's clip starts / ends at the playhead. Shift+I / Shift+O: the
  // answer interval of an interval QA type (an added item, or a draft being modified).
  function markClip(which) {
    const it = items[selected];
    if (!it || it.kind !== "added") {
      setStatus("In / Out set the clip of an added QA pair: add one with N first.");
      return;
    }
    it.decision[which === "in" ? "clip_start_s" : "clip_end_s"] = now100();
    render();
    saveLocal();
    drawRanges();
  }
  function markAnswer(which) {
    const it = items[selected];
    const d = it && it.decision;
    const can = it && ((it.kind === "added" && isInterval(d.qa_type)) || (it.kind === "draft" && it.qa.answer_kind === "interval" && d && d.action === "modify"));
    if (!can) {
      setStatus("Shift+I / Shift+O set the answer of a QA type whose answer is a time interval (added, or being modified).");
      return;
    }
    d[which === "in" ? "answer_start_s" : "answer_end_s"] = now100();
    render();
    saveLocal();
    drawRanges();
  }

  // A time field (In, Out, answer start / end): seconds or the page's clock, h:mm:ss.f (a life log's
  // wall clock), issue 21; kept as a number of seconds, empty is null, anything else is marked
  // invalid (and null) with a line saying what it takes.
  function parseTime(text) { return unit && unit.life_log ? Clock.parseWall(text, unit.life_log.start) : Clock.parse(text); }

  function secondsField(label, d, key, hint) {
    const value = Number.isFinite(d[key]) ? String(d[key]) : "";
    const order = () => key.endsWith("end_s") && Number.isFinite(d[key]) && Number.isFinite(d[key.replace("end", "start")]) &&
      d[key] <= d[key.replace("end", "start")];
    // Read back on the page's one clock beside it ("= 0:00:03.5", a life log's wall clock).
    const reads = () => (Number.isFinite(d[key]) ? " = " + fmt(d[key]) : "");
    const echo = el("span", { class: "muted clock-echo" }, reads());
    const wrap = el("label", { class: "seconds-field" + (order() ? " invalid" : "") }, label + " ");
    const input = el("input", { type: "text", inputmode: "decimal", size: "10", maxlength: "16", value, "data-field": key,
      "aria-label": label + " (seconds, or h:mm:ss.f)", "aria-invalid": order() ? "true" : null,
      oninput: (e) => {
        const text = e.target.value.trim();
        const v = text === "" ? null : parseTime(text);
        const unreadable = v !== null && !Number.isFinite(v);
        d[key] = unreadable ? null : v;
        echo.textContent = unreadable ? " not a time: type seconds (12.5) or h:mm:ss.f (0:00:12.5)" : reads();
        const bad = unreadable || order();
        input.setAttribute("aria-invalid", bad ? "true" : "false");
        wrap.classList.toggle("invalid", bad);
        saveLocal();
        drawRanges();
      } });
    wrap.append(input, el("span", { class: "muted" }, " s"), echo, el("span", { class: "muted" }, hint ? " " + hint : ""));
    return wrap;
  }

  // Loop the item's clip. On a life log, whose clips can span the whole day, an item with an answer
  // interval loops (and the timeline zooms to) its answer with context on each side: the answer's
  // length, at least 5 s, within the clip (issue 21).
  function loopItem(it) {
    const clip = clipOf(it);
    const a = unit.life_log ? answerOf(it) : null;
    if (a && Number.isFinite(a.start) && Number.isFinite(a.end) && a.end > a.start) {
      const ctx = Math.max(5, a.end - a.start);
      const start = Math.max(clip.start_s, a.start - ctx);
      const end = Math.min(clip.end_s, a.end + ctx);
      setLoop(start, end);
      timeline.zoomTo(start, end);
      return;
    }
    setLoop(clip.start_s, clip.end_s);
    if (unit.life_log) timeline.zoomReset();
  }

  function select(i) {
    if (!items.length) return;
    const now = performance.now();
    if (items[selected]) items[selected].ms += Math.round(now - selectedSince);
    selectedSince = now;
    selected = Math.max(0, Math.min(items.length - 1, i));
    loopItem(items[selected]);
    render();
    drawRanges();
    focusCard();
    saveLocal();
  }

  function focusCard() {
    const card = cardsEl.children[selected];
    if (card && !card.contains(document.activeElement)) card.focus({ preventScroll: false });
  }

  function decide(action) {
    const it = items[selected];
    if (!it || it.kind !== "draft") return;
    if (action === "keep") it.decision = { action: "keep" };
    else if (action === "delete") it.decision = { action: "delete", reason: (it.decision && it.decision.reason) || "" };
    else if (action === "modify") {
      const prev = it.decision && it.decision.action === "modify" ? it.decision : null;
      it.decision = prev || {
        action: "modify", question: it.qa.question, answer: it.qa.answer,
        options: it.qa.options ? it.qa.options.slice() : null, answer_index: it.qa.answer_index,
        answer_start_s: it.qa.answer_start_s, answer_end_s: it.qa.answer_end_s,
      };
    }
    render();
    saveLocal();
    if (action === "modify") {
      focusEnd(cardsEl.children[selected].querySelector("textarea[data-field=question]"));
    } else {
      focusCard();
    }
  }

  function setReason(n) {
    const it = items[selected];
    if (!it || !it.decision || it.decision.action !== "delete") return false;
    const reason = unit.delete_reasons[n - 1];
    if (!reason || !reason.available) return false;
    it.decision.reason = reason.value;
    render();
    saveLocal();
    focusCard();
    return true;
  }

  // A new QA pair: no QA type is preselected (the person chooses one: focus starts on the type),
  // and its clip is set with I / O or typed (nothing is taken silently).
  function addItem() {
    items.push({ kind: "added", decision: { qa_type: "", question: "", answer: "", clip_start_s: null, clip_end_s: null,
                                            answer_start_s: null, answer_end_s: null }, ms: 0, errors: [] });
    select(items.length - 1);
    focusEnd(cardsEl.children[selected].querySelector("select[data-field=qa_type]"));
  }

  function removeItem(i) {
    items.splice(i, 1);
    selected = Math.min(selected, items.length - 1);
    render();
    saveLocal();
    focusCard();
  }

  function field(label, value, name, onInput, rows) {
    return el("label", { class: "field" }, label,
      el("textarea", { rows: rows || 2, "data-field": name, oninput: (e) => { onInput(e.target.value); saveLocal(); } }, value || ""));
  }

  function optionsView(qa) {
    if (!qa.options) return null;
    return el("ol", { class: "options", type: "A" },
      qa.options.map((o, i) => el("li", { class: i === qa.answer_index ? "correct" : "" }, o, i === qa.answer_index ? " ✓" : "")));
  }

  function optionsEditor(d) {
    if (!d.options) return null;
    return el("fieldset", { class: "options-edit" }, el("legend", {}, "Options (select the one correct answer; no two alike)"),
      d.options.map((o, i) => el("div", { class: "option-row" },
        el("input", { type: "radio", name: "correct-" + selected, checked: i === d.answer_index,
          "aria-label": "option " + (i + 1) + " is correct", onchange: () => { d.answer_index = i; saveLocal(); } }),
        el("input", { type: "text", value: o, "data-field": "option-" + i, "aria-label": "option " + (i + 1),
          oninput: (e) => { d.options[i] = e.target.value; saveLocal(); } }))));
  }

  // The server's refusal of this item, in plain words ("Answer: answer must not be empty").
  function errorBox(it) {
    if (!it.errors || !it.errors.length) return null;
    return el("div", { class: "card-errors field-error", role: "alert" },
      el("strong", {}, "Not saved: "), it.errors.map((m) => el("div", {}, m)));
  }

  function conflictBox(it) {
    if (!it.conflict) return null;
    const cur = it.conflict.current;
    return el("div", { class: "conflict", role: "alert" },
      el("strong", {}, "Changed by someone else since you loaded it (now version " + it.conflict.version + "). "),
      el("div", {}, el("span", { class: "muted" }, "Now: "), cur.question, " → ", cur.answer, cur.status !== "verified" ? " (" + cur.status + ")" : ""),
      el("div", { class: "card-actions" },
        el("button", { type: "button", onclick: () => resolveConflict(it, "mine") }, "Keep my decision"),
        el("button", { type: "button", onclick: () => resolveConflict(it, "theirs") }, "Take theirs and decide again")));
  }

  function resolveConflict(it, choice) {
    const cur = it.conflict.current;
    it.qa = Object.assign({}, it.qa, { version: it.conflict.version });
    if (choice === "theirs") {
      Object.assign(it.qa, { question: cur.question, answer: cur.answer, options: cur.options, answer_index: cur.answer_index });
      it.decision = null;
    }
    it.conflict = null;
    render();
    saveLocal();
    focusCard();
  }

  // Items whose options are videos (EgoExoBench seed 001 Fig. 2): each labelled video plays its
  // range (a media fragment #t=start,end) under exactly the label the options name ("Video 2").
  function labelledVideos(qa) {
    return el("div", { class: "labelled-videos" }, qa.videos.map((v) => el("figure", { class: "labelled-video", "data-label": v.label },
      el("video", { src: v.url ? v.url + "#t=" + v.start_s + "," + v.end_s : null, controls: true, muted: true,
        preload: "metadata", playsinline: true }),
      el("figcaption", {}, el("strong", { class: "video-label" }, v.label),
        " " + v.role + " · " + fmt(v.start_s) + " – " + fmt(v.end_s)))));
  }

  function draftCard(it, i) {
    const qa = it.qa;
    const d = it.decision;
    const state = d ? d.action : "undecided";
    const body = [conflictBox(it), errorBox(it)];
    for (const c of reviewComments[qa.id] || []) {
      body.push(el("div", { class: "flag review-comment" }, el("strong", {}, "Reviewer: "), c.text || "",
        c.tags && c.tags.length ? el("span", { class: "muted" }, " [" + c.tags.join(", ") + "]") : null));
    }
    if (qa.status === "deleted") {
      body.push(el("div", { class: "muted" }, "You deleted this pair (" + (qa.delete_reason || "no reason") +
        "). Keep (V) restores it; Delete leaves it deleted."));
    }
    if (qa.flag) body.push(el("div", { class: "flag" }, "⚑ Flagged by " + qa.flag.source + ": " + qa.flag.reason));
    if (qa.videos && qa.videos.length) body.push(labelledVideos(qa));
    const interval = qa.answer_kind === "interval";
    if (d && d.action === "modify") {
      body.push(field("Question", d.question, "question", (v) => { d.question = v; }));
      if (!d.options) body.push(field("Answer", d.answer, "answer", (v) => { d.answer = v; }));
      body.push(optionsEditor(d));
      if (interval) {
        body.push(el("div", { class: "interval-fields" }, secondsField("Answer start", d, "answer_start_s", "(Shift+I)"),
          secondsField("Answer end", d, "answer_end_s", "(Shift+O)")));
      }
    } else {
      body.push(el("p", { class: "question" }, qa.question));
      if (qa.options) body.push(optionsView(qa));
      else body.push(el("p", { class: "answer" }, el("span", { class: "muted" }, "Answer: "), qa.answer));
      if (interval && Number.isFinite(qa.answer_start_s)) {
        body.push(el("p", { class: "answer" }, el("span", { class: "muted" }, "Answer interval: "), fmt(qa.answer_start_s) + " – " + fmt(qa.answer_end_s)));
      }
    }
    if (d && d.action === "delete") {
      body.push(el("fieldset", { class: "reasons" }, el("legend", {}, "Why delete? (1–5)"),
        unit.delete_reasons.map((r, n) => el("label", { class: r.available ? "" : "unavailable" },
          el("input", { type: "radio", name: "reason-" + qa.id, value: r.value, checked: d.reason === r.value, disabled: !r.available,
            onchange: () => { d.reason = r.value; saveLocal(); render(); } }),
          " " + (n + 1) + ". " + r.label + (r.available ? "" : " (day-night pairs only)")))));
    }
    return el("li", {
      class: "qa-card " + state + (i === selected ? " selected" : ""), tabindex: "-1",
      "data-qa-id": qa.id, "data-state": state, onclick: (e) => { if (i !== selected && e.target.tagName !== "INPUT") select(i); },
    },
      el("div", { class: "card-head" },
        el("span", { class: "idx" }, String(i + 1)),
        el("span", { class: "qa-type" }, qa.qa_type_name),
        el("span", { class: "clip muted" }, fmt(qa.clip.start_s) + " – " + fmt(qa.clip.end_s)),
        el("span", { class: "badge " + state }, state)),
      body,
      el("div", { class: "card-actions" },
        el("button", { type: "button", class: state === "keep" ? "on" : "", onclick: () => { select(i); decide("keep"); } }, "Keep (V)"),
        el("button", { type: "button", class: state === "modify" ? "on" : "", onclick: () => { select(i); decide("modify"); } }, "Modify (E)"),
        el("button", { type: "button", class: state === "delete" ? "on" : "", onclick: () => { select(i); decide("delete"); } }, "Delete (X)")));
  }

  function addedCard(it, i) {
    const d = it.decision;
    const interval = isInterval(d.qa_type);
    return el("li", { class: "qa-card added" + (i === selected ? " selected" : ""), tabindex: "-1", "data-state": "added",
      onclick: (e) => { if (i !== selected && !/^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName)) select(i); } },
      el("div", { class: "card-head" }, el("span", { class: "idx" }, String(i + 1)),
        el("span", { class: "badge added" }, "new"),
        el("label", {}, "QA type ",
          el("select", { "data-field": "qa_type", required: true, "aria-invalid": d.qa_type ? null : "true",
            onchange: (e) => { d.qa_type = e.target.value; saveLocal(); render(); drawRanges(); } },
            el("option", { value: "", selected: !d.qa_type, disabled: true }, "Choose a QA type…"),
            qaTypes.map((t) => el("option", { value: t.slug, selected: t.slug === d.qa_type }, t.name))))),
      errorBox(it),
      el("div", { class: "clip-fields" }, el("span", { class: "muted" }, "Clip "),
        secondsField("In", d, "clip_start_s", "(I)"), secondsField("Out", d, "clip_end_s", "(O)"),
        el("button", { type: "button", class: "link", onclick: () => { d.clip_start_s = unit.start_s; d.clip_end_s = unit.end_s; render(); saveLocal(); select(i); } }, "whole unit")),
      field("Question", d.question, "question", (v) => { d.question = v; }),
      interval ? el("div", { class: "interval-fields" }, secondsField("Answer start", d, "answer_start_s", "(Shift+I)"),
        secondsField("Answer end", d, "answer_end_s", "(Shift+O)")) : null,
      field(interval ? "Answer (optional: the interval is the answer)" : "Answer", d.answer, "answer", (v) => { d.answer = v; }),
      el("div", { class: "card-actions" },
        el("button", { type: "button", onclick: () => removeItem(i) }, "Remove")));
  }

  function render() {
    const active = document.activeElement;
    const activeField = active && active.dataset ? active.dataset.field : null;
    cardsEl.replaceChildren(...items.map((it, i) => (it.kind === "draft" ? draftCard(it, i) : addedCard(it, i))));
    const drafts = items.filter((x) => x.kind === "draft");
    const decided = drafts.filter((x) => x.decision).length;
    $("progress").textContent = decided + "/" + drafts.length + " decided, " + (items.length - drafts.length) + " added";
    if (activeField) {
      const again = cardsEl.children[selected] && cardsEl.children[selected].querySelector("[data-field='" + activeField + "']");
      if (again) focusEnd(again);
    }
  }

  // ----------------------------------------------------------------- submit
  function payload() {
    const ms = itemMs();
    return {
      idempotency_key: idempotencyKey,
      time_spent_ms: elapsedMs(),
      decisions: items.map((it, i) => [it, i]).filter(([it]) => it.kind === "draft" && !leftDeleted(it)).map(([it, i]) => {
        const d = Object.assign({ qa_id: it.qa.id, version: it.qa.version, time_spent_ms: ms[i] }, it.decision);
        if (d.action !== "modify") { delete d.question; delete d.answer; delete d.options; delete d.answer_index; }
        if (d.options === null) { delete d.options; delete d.answer_index; }
        if (d.options) delete d.answer;  // a multiple-choice answer is its correct option
        if (d.action !== "modify" || it.qa.answer_kind !== "interval") { delete d.answer_start_s; delete d.answer_end_s; }
        return d;
      }),
      added: items.map((it, i) => [it, i]).filter(([it]) => it.kind === "added").map(([it, i]) => {
        const d = it.decision;
        const out = { qa_type: d.qa_type, question: d.question, answer: d.answer, time_spent_ms: ms[i],
                      clip_start_s: d.clip_start_s, clip_end_s: d.clip_end_s };
        if (isInterval(d.qa_type)) Object.assign(out, { answer_start_s: d.answer_start_s, answer_end_s: d.answer_end_s });
        return out;
      }),
    };
  }

  // A rework's deleted pair left as it was: no decision is sent (it stays deleted, unchanged).
  function leftDeleted(it) {
    return it.qa.status === "deleted" && it.decision && it.decision.action === "delete" && it.decision.reason === it.qa.delete_reason;
  }

  function showErrors(messages) {
    const box = $("errors");
    box.replaceChildren(...messages.map((m) => el("div", {}, m)));
    box.hidden = messages.length === 0;
  }

  async function submit() {
    if (!unit || submitting) return;
    const undecided = items.map((it, i) => [it, i]).filter(([it]) => it.kind === "draft" && !it.decision);
    const noReason = items.map((it, i) => [it, i]).filter(([it]) => it.kind === "draft" && it.decision && it.decision.action === "delete" && !it.decision.reason);
    const noClip = items.map((it, i) => [it, i]).filter(([it]) => it.kind === "added" &&
      !(Number.isFinite(it.decision.clip_start_s) && Number.isFinite(it.decision.clip_end_s)));
    const problems = undecided.map(([, i]) => "Item " + (i + 1) + ": choose keep, modify or delete.")
      .concat(noReason.map(([, i]) => "Item " + (i + 1) + ": choose a reason for deleting (1–5)."))
      .concat(noClip.map(([, i]) => "Item " + (i + 1) + ": set the clip's In and Out (I / O at the playhead, or type them)."));
    if (problems.length) {
      showErrors(problems);
      select((undecided[0] || noReason[0] || noClip[0])[1]);
      return;
    }
    showErrors([]);
    for (const it of items) it.errors = [];
    render();
    submitting = true;
    $("submit").disabled = true;
    const body = payload();
    for (let attempt = 1; ; attempt++) {
      $("submit-status").textContent = attempt === 1 ? "Submitting…" : "Network problem; retrying (attempt " + attempt + ")…";
      let res;
      try {
        res = await api(unitUrl(config.submitUrl), body);
      } catch (e) {
        // Same idempotency key on every retry: the server applies the submit at most once.
        await new Promise((r) => setTimeout(r, Math.min(30000, 1000 * 2 ** Math.min(attempt, 5))));
        continue;
      }
      submitting = false;
      $("submit").disabled = false;
      if (res.ok) {
        const out = await res.json();
        clearTimeout(autosaveTimer);
        try { localStorage.removeItem(storageKey()); } catch (e) { /* ignore */ }
        const c = out.counts;
        const what = "Saved " + unitName() + ": " + c.kept + " kept, " + c.modified +
          " modified, " + c.deleted + " deleted, " + c.added + " added.";
        $("submit-status").textContent = what + (out.kind === "overlap"
            ? " This overlap pass is kept for agreement (the QA pairs are unchanged); pairs where it differs from the first pass go to a consensus round."
            : "");
        toast(what);
        loadNext();
        return;
      }
      let detail = {};
      try { detail = await res.json(); } catch (e) { detail = {}; }
      $("submit-status").textContent = "";
      for (const c of detail.conflicts || []) {
        const it = items.find((x) => x.kind === "draft" && x.qa.id === c.qa_id);
        if (it) it.conflict = c;
      }
      if ((detail.conflicts || []).length) { render(); saveLocal(); return showErrors([detail.detail]); }
      if (res.status === 409) return leaseLost(detail.detail);  // not yours any more, or already submitted
      showRefusal(detail, res.status);
      return;
    }
  }

  // ----------------------------------------------------------- refusals
  const FIELD_LABEL = {
    question: "Question", answer: "Answer", reason: "Reason for deleting", options: "Options",
    answer_index: "Correct option", time_spent_ms: "Time spent", qa_type: "QA type", clip: "Clip",
    answer_start_s: "Answer interval", answer_end_s: "Answer end", clip_start_s: "In", clip_end_s: "Out",
    qa_id: "Item", action: "Decision", version: "Version",
  };

  // Field paths to messages, from our domain errors ({detail, errors: {"decisions[2].answer": "..."}})
  // or from a serializer's nested shape ({decisions: [{}, {answer: ["..."]}]}).
  function fieldErrors(body) {
    if (body && body.errors && typeof body.errors === "object") return Object.entries(body.errors).map(([k, v]) => [k, String(v)]);
    const out = [];
    (function walk(value, path) {
      if (Array.isArray(value) && value.every((x) => typeof x === "string")) out.push([path, value.join(" ")]);
      else if (Array.isArray(value)) value.forEach((v, i) => walk(v, path + "[" + i + "]"));
      else if (value && typeof value === "object") Object.entries(value).forEach(([k, v]) => walk(v, path ? path + "." + k : k));
      else if (value !== undefined && value !== null) out.push([path, String(value)]);
    })(body && !body.detail ? body : {}, "");
    return out;
  }

  // The card a field path concerns (decisions[n]: the n-th draft, added[n]: the n-th added item,
  // qa[ID]: the draft of QA pair ID) and the field within it; index -1 for the unit as a whole.
  function locate(path) {
    let m = path.match(/^(decisions|added)\[(\d+)\](?:\.(\w+))?/);
    if (m) {
      const kind = m[1] === "decisions" ? "draft" : "added";
      const hit = items.map((it, i) => [it, i]).filter(([it]) => it.kind === kind && !(kind === "draft" && leftDeleted(it)))[parseInt(m[2], 10)];
      return { index: hit ? hit[1] : -1, field: m[3] || null };
    }
    m = path.match(/^qa\[([a-z2-7]+)\]/);  // a QA pair's handle, as the payload named it
    if (m) return { index: items.findIndex((it) => it.kind === "draft" && it.qa.id === m[1]), field: null };
    return { index: -1, field: path };
  }

  function plain(field, message) {
    const label = field ? FIELD_LABEL[field] || field.replace(/_/g, " ") : null;
    return label ? label + ": " + message : message.charAt(0).toUpperCase() + message.slice(1);
  }

  function showRefusal(body, status) {
    for (const it of items) it.errors = [];
    const general = [];
    for (const [path, message] of fieldErrors(body)) {
      const where = locate(path);
      if (where.index >= 0) items[where.index].errors.push(plain(where.field, message));
      else general.push(plain(where.field, message));
    }
    const first = items.findIndex((it) => it.errors.length);
    const head = (body && body.detail) || "The server refused the submit (" + status + "); nothing was saved.";
    showErrors([head + (first >= 0 ? " The items concerned are marked." : "")].concat(general));
    if (first >= 0) select(first); else render();
  }

  // ------------------------------------------------------------------- skip
  // Skip: a preset reason (1-4 in the dialog), with words of one's own besides; "Other" needs them.
  // The reason sent is the preset's text, then ": " and the words; the detail field's length leaves
  // room for the preset, so the whole stays within the server's 500 characters.
  const SKIP_MAX = 500;
  const skipPreset = () => { const r = document.querySelector("input[name=skip-preset]:checked"); return r ? r.value : ""; };
  function skipReason() {
    const preset = skipPreset();
    const words = $("skip-reason").value.trim();
    if (preset === "Other") return words;
    return preset && words ? preset + ": " + words : preset;
  }
  function onSkipPreset() {
    const preset = skipPreset();
    const detail = $("skip-reason");
    detail.setAttribute("aria-required", preset === "Other" ? "true" : "false");  // checked by skipReason(), in words
    detail.maxLength = preset && preset !== "Other" ? SKIP_MAX - preset.length - 2 : SKIP_MAX;
  }
  function openSkip() {
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
      try { localStorage.removeItem(storageKey()); } catch (err) { /* ignore */ }
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

  // --------------------------------------------------------------- keyboard
  // Only text fields keep their keys (issue 21). A slider, a select, a button or a radio that last
  // had the mouse gives the page its shortcuts: a key the page handles is not also the control's
  // (the speed select does not change on an arrow, a brightness slider does not move), and Esc
  // leaves any control for the selected card.
  const TEXT_INPUT = /^(text|search|email|url|tel|password|number)$/;
  function typesText(t) {
    return !!t && (t.tagName === "TEXTAREA" || t.isContentEditable || (t.tagName === "INPUT" && TEXT_INPUT.test(t.type)));
  }

  function toggleKeys(show) {
    const panel = $("keys");
    panel.hidden = show === undefined ? !panel.hidden : !show;
    $("keys-open").setAttribute("aria-expanded", panel.hidden ? "false" : "true");
  }
  $("keys-open").addEventListener("click", () => toggleKeys());
  $("keys-close").addEventListener("click", () => { toggleKeys(false); focusCard(); });

  document.addEventListener("keydown", (e) => {
    if (!unit || !players.length) return;
    const inField = typesText(e.target);
    const dialogOpen = $("guidelines").open || $("skip-dialog").open;
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter" && !$("skip-dialog").open) { e.preventDefault(); submit(); return; }
    if (e.key === "Escape" && !dialogOpen) {
      if (!$("keys").hidden && !inField) { e.preventDefault(); toggleKeys(false); focusCard(); return; }
      if (e.target !== document.body && !e.target.classList.contains("qa-card")) { e.preventDefault(); e.target.blur(); focusCard(); return; }
    }
    if (inField || e.ctrlKey || e.metaKey || e.altKey) return;
    if (dialogOpen) return;
    if (e.key === "?") { e.preventDefault(); toggleKeys(); return; }
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (e.shiftKey && (key === "i" || key === "o")) { e.preventDefault(); markAnswer(key === "i" ? "in" : "out"); return; }
    const actions = {
      j: () => select(selected + 1), ArrowDown: () => select(selected + 1),
      k: () => select(selected - 1), ArrowUp: () => select(selected - 1),
      v: () => decide("keep"), e: () => decide("modify"), x: () => decide("delete"),
      n: addItem, s: openSkip, " ": togglePlay, ",": () => stepFrame(-1), ".": () => stepFrame(1),
      "[": () => changeRate(-1), "]": () => changeRate(1), l: toggleBright,
      i: () => markClip("in"), o: () => markClip("out"), m: toggleAudio,
      "+": () => timeline.zoomBy(2), "=": () => timeline.zoomBy(2), "-": () => timeline.zoomBy(0.5), "0": () => timeline.zoomReset(),
      ArrowLeft: () => seekTo(leader().currentTime - (e.shiftKey ? 10 : 1)),
      ArrowRight: () => seekTo(leader().currentTime + (e.shiftKey ? 10 : 1)),
      b: flip, c: cycleCompare, w: () => showLarge(bigView + 1),
      g: () => $("guidelines").showModal(),
    };
    if (/^[1-9]$/.test(key) && setReason(parseInt(key, 10))) { e.preventDefault(); return; }
    if (actions[key]) { e.preventDefault(); actions[key](); }
  });

  document.addEventListener("visibilitychange", () => {
    // Hidden time is not work time: close the running interval when hidden, restart when back.
    const now = performance.now();
    if (document.hidden && items[selected]) { items[selected].ms += Math.round(now - selectedSince); saveLocal(); }
    selectedSince = now;
  });

  window.addEventListener("online", () => { if (unit) saveLocal(); });

  loadNext();
})();
