// The verification page. Claims a unit through the API, shows its video (or a day-night pair, played
// in sync) and its QA pairs, records keep / modify / delete / add per item, and submits with an
// idempotency key (retried on network failure with the same key, so a submit is applied at most once).
//
// Nothing typed is lost: every change is saved in localStorage at once (works offline) and on the
// server (debounced); after a reload the newer of the two comes back. The lease on the unit is
// renewed by a heartbeat while the page is open. A QA pair changed by someone else since it was
// loaded is shown as a conflict to resolve, never overwritten silently. Everything works by keyboard.
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
  let selectedSince = 0;
  let submitting = false;
  let heartbeatTimer = null;
  let autosaveTimer = null;
  let players = [];         // [{el, video}] leader first
  let qaTypes = [];         // the project's QA types, read once: [{slug, name, paired, ...}]
  const KIND_LABEL = { first_pass: "First pass", overlap: "Overlap (blind)", double_check: "Double-check" };

  // ---------------------------------------------------------------- helpers
  const api = Http.send;
  const newKey = Http.newKey;

  function unitUrl(template) { return template.replace("{id}", unit.id); }
  function fmt(s) { return (Math.round(s * 100) / 100).toFixed(2) + " s"; }

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

  function snapshot() {
    return {
      key: idempotencyKey,
      items: items.map((it) => ({ kind: it.kind, qaId: it.qa ? it.qa.id : null, version: it.qa ? it.qa.version : null,
                                  decision: it.decision, ms: it.ms })),
    };
  }

  // Called after every change: localStorage at once, the server after a short pause.
  function saveLocal() {
    if (!unit) return;
    const state = { savedAt: Date.now(), state: snapshot() };
    try { localStorage.setItem(storageKey(), JSON.stringify(state)); } catch (e) { /* full or disabled */ }
    clearTimeout(autosaveTimer);
    $("save-status").textContent = "Saving…";
    autosaveTimer = setTimeout(() => saveServer(state), 700);
  }

  async function saveServer(saved) {
    if (!unit) return;
    try {
      const res = await api(unitUrl(config.autosaveUrl), { state: saved.state, client_saved_at_ms: saved.savedAt }, "PUT");
      if (res.ok) $("save-status").textContent = "All changes saved";
      else if (res.status === 409) leaseLost((await res.json()).detail);
      else $("save-status").textContent = "Saved in this browser (server said " + res.status + ")";
    } catch (e) {
      $("save-status").textContent = "Offline: saved in this browser, will sync";
      autosaveTimer = setTimeout(() => saveServer(saved), 5000);
    }
  }

  // The newer of the browser's copy and the server's copy wins.
  function restore() {
    let local = null;
    try { local = JSON.parse(localStorage.getItem(storageKey()) || "null"); } catch (e) { local = null; }
    const server = unit.autosave ? { savedAt: unit.autosave.client_saved_at_ms, state: unit.autosave.state } : null;
    const best = [local, server].filter((x) => x && x.state).sort((a, b) => b.savedAt - a.savedAt)[0];
    if (!best) return false;
    idempotencyKey = best.state.key || idempotencyKey;
    for (const saved of best.state.items || []) {
      if (saved.kind === "draft") {
        const it = items.find((x) => x.kind === "draft" && x.qa.id === saved.qaId);
        if (it) { it.decision = saved.decision; it.ms = saved.ms || 0; }
      } else {
        items.push({ kind: "added", decision: saved.decision, ms: saved.ms || 0 });
      }
    }
    return true;
  }

  // ------------------------------------------------------------------ queue
  async function loadTypes() {
    try {
      const res = await fetch(config.typesUrl, { credentials: "same-origin" });
      if (res.ok) qaTypes = await res.json();
    } catch (e) { /* the add menu stays empty until the next load */ }
  }

  async function loadNext() {
    stopHeartbeat();
    clearTimeout(autosaveTimer);
    $("save-status").textContent = "";
    if (!qaTypes.length) await loadTypes();
    $("empty").hidden = true;
    $("workspace").hidden = true;
    $("lease-lost").hidden = true;
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
      setStatus("Could not load a unit (" + res.status + "). Reload the page to try again.");
      return;
    }
    unit = await res.json();
    idempotencyKey = newKey();
    items = unit.qa_pairs.map((qa) => ({ kind: "draft", qa, decision: null, ms: 0 }));
    const restored = restore();
    selected = 0;
    loadedAt = performance.now();
    selectedSince = loadedAt;
    setupPlayers();
    render();
    $("workspace").hidden = false;
    $("kind").textContent = KIND_LABEL[unit.queue.kind] || unit.queue.kind;
    setStatus("Unit " + unit.id + ": " + unit.qa_pairs.length + " QA pairs" + (unit.paired ? ", day-night pair" : "") +
      (restored ? " (your unsaved work was restored)" : ""));
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

  function leaseLost(detail) {
    stopHeartbeat();
    const box = $("lease-lost");
    box.replaceChildren(el("strong", {}, "This unit is no longer yours. "), detail || "",
      " Your work stays saved in this browser. ", el("button", { type: "button", onclick: loadNext }, "Take the next unit"));
    box.hidden = false;
  }

  // --------------------------------------------------------------- players
  // The first player leads; the others follow its play, pause, seek and rate. A follower shows
  // time (leader time - leader offset + its own offset): for a day-night pair, night = day + offset.
  let loop = { start: 0, end: 0 };
  const leader = () => players[0].video;

  function setupPlayers() {
    const box = $("players");
    box.className = "players" + (unit.videos.length > 1 ? "" : " single");
    players = unit.videos.map((v) => {
      const video = el("video", { preload: "auto", playsinline: true, muted: true, "data-role": v.role });
      video.muted = true;
      if (v.poster_url) video.poster = v.poster_url;
      video.src = v.url || "";
      if ($("bright").checked) video.classList.add("bright");
      const wrap = el("div", { class: "video-wrap" },
        v.role === "single" ? null : el("span", { class: "player-label" }, v.role + (v.role === "night" && v.difficulty ? " · " + v.difficulty : "")), video);
      return { el: wrap, video, meta: v };
    });
    box.replaceChildren(...players.map((p) => p.el));
    $("video-name").textContent = unit.videos.map((v) => v.filename).join(" + ");
    const lead = leader();
    lead.playbackRate = parseFloat($("rate").value);
    lead.addEventListener("timeupdate", onLeaderTime);
    lead.addEventListener("loadedmetadata", () => { lead.currentTime = loop.start; });
    lead.addEventListener("play", () => { $("play").textContent = "Pause"; followers((f) => f.play().catch(() => {})); syncFollowers(true); });
    lead.addEventListener("pause", () => { $("play").textContent = "Play"; followers((f) => f.pause()); syncFollowers(true); });
    lead.addEventListener("seeked", () => syncFollowers(true));
    lead.addEventListener("ratechange", () => followers((f) => { f.playbackRate = lead.playbackRate; }));
    for (const p of players.slice(1)) p.video.addEventListener("loadedmetadata", () => syncFollowers(true));
    if (lead.requestVideoFrameCallback) {
      const onFrame = () => { if (players[0] && players[0].video === lead) { syncFollowers(false); lead.requestVideoFrameCallback(onFrame); } };
      lead.requestVideoFrameCallback(onFrame);
    }
    setLoop(unit.start_s, unit.end_s);
  }

  function followers(fn) { for (const p of players.slice(1)) fn(p.video, p.meta); }

  function syncFollowers(force) {
    if (players.length < 2) return;
    const lead = leader();
    const base = lead.currentTime - players[0].meta.offset_s;
    const frame = 1 / ((unit && unit.video.fps) || 30);
    followers((f, meta) => {
      const target = base + meta.offset_s;
      const drift = f.currentTime - target;
      if (force || Math.abs(drift) > frame / 2) f.currentTime = Math.max(0, target);
      if (f.playbackRate !== lead.playbackRate) f.playbackRate = lead.playbackRate;
      if (!lead.paused && f.paused) f.play().catch(() => {});
    });
  }

  function setLoop(start, end) {
    loop = { start, end };
    $("loop-range").textContent = fmt(start) + " – " + fmt(end);
    const lead = players.length ? leader() : null;
    if (lead && lead.readyState >= 1 && (lead.currentTime < start || lead.currentTime > end)) lead.currentTime = start;
  }

  function onLeaderTime() {
    const lead = leader();
    $("clock").textContent = fmt(lead.currentTime);
    if (lead.currentTime >= loop.end - 0.01 || lead.currentTime < loop.start - 0.05) lead.currentTime = loop.start;
  }

  function togglePlay() { const lead = leader(); if (lead.paused) lead.play().catch(() => {}); else lead.pause(); }
  function stepFrame(dir) {
    const lead = leader();
    lead.pause();
    const dt = 1 / (unit && unit.video.fps ? unit.video.fps : 30);
    lead.currentTime = Math.min(loop.end, Math.max(loop.start, lead.currentTime + dir * dt));
    $("clock").textContent = fmt(lead.currentTime);
  }
  function changeRate(dir) {
    const sel = $("rate");
    sel.selectedIndex = Math.min(sel.options.length - 1, Math.max(0, sel.selectedIndex + dir));
    leader().playbackRate = parseFloat(sel.value);
  }
  function applyBright() { for (const p of players) p.video.classList.toggle("bright", $("bright").checked); }
  function toggleBright() { $("bright").checked = !$("bright").checked; applyBright(); }
  $("play").addEventListener("click", togglePlay);
  $("step-back").addEventListener("click", () => stepFrame(-1));
  $("step-fwd").addEventListener("click", () => stepFrame(1));
  $("rate").addEventListener("change", () => { leader().playbackRate = parseFloat($("rate").value); });
  $("bright").addEventListener("change", applyBright);

  // ------------------------------------------------------------------ cards
  function clipOf(it) {
    if (it.kind === "draft") return it.qa.clip;
    return { start_s: unit.start_s, end_s: unit.end_s };
  }

  function select(i) {
    if (!items.length) return;
    const now = performance.now();
    if (items[selected]) items[selected].ms += Math.round(now - selectedSince);
    selectedSince = now;
    selected = Math.max(0, Math.min(items.length - 1, i));
    const clip = clipOf(items[selected]);
    setLoop(clip.start_s, clip.end_s);
    render();
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

  function addItem() {
    const first = qaTypes[0] ? qaTypes[0].slug : "";
    items.push({ kind: "added", decision: { qa_type: first, question: "", answer: "" }, ms: 0 });
    select(items.length - 1);
    focusEnd(cardsEl.children[selected].querySelector("textarea[data-field=question]"));
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

  function draftCard(it, i) {
    const qa = it.qa;
    const d = it.decision;
    const state = d ? d.action : "undecided";
    const body = [conflictBox(it)];
    if (qa.flag) body.push(el("div", { class: "flag" }, "⚑ Flagged by " + qa.flag.source + ": " + qa.flag.reason));
    if (d && d.action === "modify") {
      body.push(field("Question", d.question, "question", (v) => { d.question = v; }));
      if (!d.options) body.push(field("Answer", d.answer, "answer", (v) => { d.answer = v; }));
      body.push(optionsEditor(d));
    } else {
      body.push(el("p", { class: "question" }, qa.question));
      if (qa.options) body.push(optionsView(qa));
      else body.push(el("p", { class: "answer" }, el("span", { class: "muted" }, "Answer: "), qa.answer));
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
    return el("li", { class: "qa-card added" + (i === selected ? " selected" : ""), tabindex: "-1", "data-state": "added",
      onclick: () => { if (i !== selected) select(i); } },
      el("div", { class: "card-head" }, el("span", { class: "idx" }, String(i + 1)),
        el("span", { class: "badge added" }, "new"),
        el("label", {}, "QA type ",
          el("select", { "data-field": "qa_type", onchange: (e) => { d.qa_type = e.target.value; saveLocal(); } },
            qaTypes.map((t) => el("option", { value: t.slug, selected: t.slug === d.qa_type }, t.name))))),
      field("Question", d.question, "question", (v) => { d.question = v; }),
      field("Answer", d.answer, "answer", (v) => { d.answer = v; }),
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
    const now = performance.now();
    const ms = items.map((it, i) => it.ms + (i === selected ? Math.round(now - selectedSince) : 0));
    return {
      idempotency_key: idempotencyKey,
      time_spent_ms: Math.round(now - loadedAt),
      decisions: items.map((it, i) => [it, i]).filter(([it]) => it.kind === "draft").map(([it, i]) => {
        const d = Object.assign({ qa_id: it.qa.id, version: it.qa.version, time_spent_ms: ms[i] }, it.decision);
        if (d.action !== "modify") { delete d.question; delete d.answer; delete d.options; delete d.answer_index; }
        if (d.options === null) { delete d.options; delete d.answer_index; }
        if (d.options) delete d.answer;  // a multiple-choice answer is its correct option
        return d;
      }),
      added: items.map((it, i) => [it, i]).filter(([it]) => it.kind === "added").map(([it, i]) => ({
        qa_type: it.decision.qa_type, question: it.decision.question, answer: it.decision.answer, time_spent_ms: ms[i],
      })),
    };
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
    const problems = undecided.map(([, i]) => "Item " + (i + 1) + ": choose keep, modify or delete.")
      .concat(noReason.map(([, i]) => "Item " + (i + 1) + ": choose a reason for deleting (1–5)."));
    if (problems.length) {
      showErrors(problems);
      select((undecided[0] || noReason[0])[1]);
      return;
    }
    showErrors([]);
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
        $("submit-status").textContent = "Saved unit " + out.unit_id + ": " + c.kept + " kept, " + c.modified + " modified, " +
          c.deleted + " deleted, " + c.added + " added.";
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
      if ((detail.conflicts || []).length) { render(); saveLocal(); }
      const errs = Object.entries(detail.errors || {}).map(([k, v]) => describeField(k) + ": " + v);
      showErrors([detail.detail || ("The server refused the submit (" + res.status + ").")].concat(errs));
      return;
    }
  }

  function describeField(path) {
    const m = path.match(/^(decisions|added)\[(\d+)\](.*)$/);
    if (!m) return path;
    const kind = m[1] === "decisions" ? "draft" : "added";
    const nth = parseInt(m[2], 10);
    const idx = items.map((it, i) => [it, i]).filter(([it]) => it.kind === kind)[nth];
    return "Item " + (idx ? idx[1] + 1 : "?") + (m[3] || "");
  }

  // ------------------------------------------------------------------- skip
  function openSkip() { $("skip-reason").value = ""; $("skip-dialog").showModal(); $("skip-reason").focus(); }
  $("skip").addEventListener("click", openSkip);
  $("skip-cancel").addEventListener("click", () => $("skip-dialog").close());
  $("skip-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const reason = $("skip-reason").value.trim();
    if (!reason) return;
    const res = await api(unitUrl(config.skipUrl), { reason });
    $("skip-dialog").close();
    if (res.ok) {
      try { localStorage.removeItem(storageKey()); } catch (err) { /* ignore */ }
      $("submit-status").textContent = "Skipped unit " + unit.id + ".";
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
  document.addEventListener("keydown", (e) => {
    if (!unit) return;
    const inField = /^(TEXTAREA|INPUT|SELECT)$/.test(e.target.tagName) && e.target.type !== "radio" && e.target.type !== "checkbox";
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter" && !$("skip-dialog").open) { e.preventDefault(); submit(); return; }
    if (e.key === "Escape" && inField && !$("skip-dialog").open) { e.preventDefault(); e.target.blur(); focusCard(); return; }
    if (inField || e.ctrlKey || e.metaKey || e.altKey) return;
    if ($("guidelines").open || $("skip-dialog").open) return;
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    const actions = {
      j: () => select(selected + 1), ArrowDown: () => select(selected + 1),
      k: () => select(selected - 1), ArrowUp: () => select(selected - 1),
      v: () => decide("keep"), e: () => decide("modify"), x: () => decide("delete"),
      n: addItem, s: openSkip, " ": togglePlay, ",": () => stepFrame(-1), ".": () => stepFrame(1),
      "[": () => changeRate(-1), "]": () => changeRate(1), l: toggleBright,
      g: () => $("guidelines").showModal(), "?": () => $("guidelines").showModal(),
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
