// Taking part in a frame-ordering experiment (EGO-FLIGHT human baseline). The server decides the
// stage and the current trial; this page shows it, lets the person reorder the frames by drag and
// drop (SortableJS) or by keyboard (arrow keys move the focused frame), and answers with the page's
// high-resolution time from the moment every frame had decoded and was on screen. At that moment it
// reports the trial "shown", which starts the server's clock for the trial (the server refuses a
// reported time longer than its own). Elements are named by the per-trial handles the server gives
// (never element ids), and images by content hashes, so nothing here carries the true order.
// A reload shows the same trial again, in the order the person had left it, with the time already
// spent kept. Configuration comes from the page's json_script block (the CSP forbids inline script).
(function () {
  "use strict";

  const config = JSON.parse(document.getElementById("take-config").textContent);
  const $ = (id) => document.getElementById(id);
  const list = $("frames");
  let trial = null;
  let shownAt = null;        // performance.now() when every frame was visible, or null
  let shownReport = null;    // the promise of the server's acknowledgement of "shown"
  let spentBefore = 0;       // ms spent on this trial before a reload
  let sortable = null;
  let sending = false;

  const call = Http.send;
  function key(suffix) { return "ordering:" + config.currentUrl + ":" + trial.trial_id + ":" + suffix; }
  function store(suffix, value) { try { localStorage.setItem(key(suffix), JSON.stringify(value)); } catch (e) { /* ignore */ } }
  function load(suffix) { try { return JSON.parse(localStorage.getItem(key(suffix)) || "null"); } catch (e) { return null; } }

  function show(section) {
    for (const id of ["instructions", "trial", "done"]) $(id).hidden = id !== section;
    $("status").textContent = "";
  }

  function render(state) {
    if (state.stage === "not_started" || state.stage === "instructions") { show("instructions"); $("begin").focus(); return; }
    if (state.stage === "done" || !state.trial) { show("done"); trial = null; return; }
    showTrial(state.trial);
  }

  function currentOrder() { return Array.from(list.children, (li) => li.dataset.handle); }

  function showTrial(t) {
    trial = t;
    show("trial");
    $("feedback").hidden = true;
    $("error").hidden = true;
    $("trial-title").textContent = (t.practice ? "Practice " : "Question ") + t.number + " of " + t.of;
    $("trial-progress").textContent = t.practice ? "Practice: you will see the right order after answering." : "";
    $("annotation").textContent = t.annotation || "";
    $("annotation").hidden = !t.annotation;
    const saved = load("order");
    const byHandle = new Map(t.elements.map((e) => [e.handle, e]));
    const handles = saved && saved.length === t.elements.length && saved.every((h) => byHandle.has(h))
      ? saved : t.elements.map((e) => e.handle);
    list.replaceChildren(...handles.map((h, i) => frameItem(byHandle.get(h), i)));
    relabel();
    spentBefore = load("spent") || 0;
    shownAt = null;
    shownReport = null;
    const images = Array.from(list.querySelectorAll("img"));
    // The clock starts when every frame has decoded and the next frames are painted (EGO-FLIGHT: timed
    // from when all frames are visible); the server's clock starts when it hears so.
    Promise.all(images.map((img) => (img.decode ? img.decode().catch(() => {}) : Promise.resolve())))
      .then(() => requestAnimationFrame(() => requestAnimationFrame(() => {
        if (trial !== t) return;
        shownAt = performance.now();
        shownReport = reportShown(t);
      })));
    if (sortable) sortable.destroy();
    sortable = Sortable.create(list, {
      animation: 120, filter: ".pinned", preventOnFilter: true, draggable: ".frame",
      onMove: (evt) => !evt.related.classList.contains("pinned"),
      onEnd: () => { restorePinned(); relabel(); store("order", currentOrder()); },
    });
    const first = list.querySelector(".frame:not(.pinned)");
    if (first) first.focus();
  }

  // Tell the server the trial is on screen; retried on a network error (the server keeps the first time).
  async function reportShown(t) {
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await call(config.shownUrl.replace("{id}", t.trial_id));
        return res.ok;
      } catch (e) {
        await new Promise((r) => setTimeout(r, Math.min(5000, 500 * attempt)));
      }
    }
  }

  function frameItem(e, i) {
    const li = document.createElement("li");
    li.className = "frame" + (e.pinned_position ? " pinned" : "");
    li.dataset.handle = e.handle;
    if (e.pinned_position) li.dataset.pinned = e.pinned_position;
    li.tabIndex = e.pinned_position ? -1 : 0;
    if (e.kind === "text") {
      const div = document.createElement("div");
      div.className = "text-element";
      div.textContent = e.text;
      li.append(div);
    } else {
      const img = document.createElement("img");
      img.src = e.url;
      img.alt = "frame";
      img.draggable = false;
      li.append(img);
    }
    const tag = document.createElement("div");
    tag.className = "tag";
    li.append(tag);
    return li;
  }

  // Pinned (hint) frames stay at their true position whatever is dragged around them.
  function restorePinned() {
    const items = Array.from(list.children);
    const pinned = items.filter((li) => li.dataset.pinned);
    const free = items.filter((li) => !li.dataset.pinned);
    const out = [];
    for (let pos = 1; pos <= items.length; pos++) {
      const p = pinned.find((li) => parseInt(li.dataset.pinned, 10) === pos);
      out.push(p || free.shift());
    }
    list.replaceChildren(...out);
  }

  function relabel() {
    Array.from(list.children).forEach((li, i) => {
      const tag = li.querySelector(".tag");
      tag.textContent = (i + 1) + (li.dataset.pinned ? " · pinned" : "");
      li.setAttribute("aria-label", "position " + (i + 1) + (li.dataset.pinned ? ", pinned hint" : ""));
    });
  }

  function moveFocused(dir) {
    const li = document.activeElement;
    if (!li || li.parentElement !== list || li.dataset.pinned) return;
    const items = Array.from(list.children);
    let j = items.indexOf(li) + dir;
    while (j >= 0 && j < items.length && items[j].dataset.pinned) j += dir;  // jump over pinned frames
    if (j < 0 || j >= items.length) return;
    const other = items[j];
    const a = items.indexOf(li);
    items[a] = other;
    items[j] = li;
    list.replaceChildren(...items);
    relabel();
    store("order", currentOrder());
    li.focus();
  }

  function spentMs() { return spentBefore + (shownAt === null ? 0 : performance.now() - shownAt); }

  async function answer() {
    if (!trial || sending) return;
    if (shownAt === null) { $("status").textContent = "Wait until every frame is shown."; return; }
    $("status").textContent = "";
    sending = true;
    $("answer").disabled = true;
    await shownReport;  // the server must have started its clock before it hears the answer
    const body = { order: currentOrder(), client_rt_ms: Math.max(1, spentMs()), idempotency_key: load("key") || Http.newKey() };
    store("key", body.idempotency_key);
    let res;
    for (let attempt = 1; ; attempt++) {
      try { res = await call(config.answerUrl.replace("{id}", trial.trial_id), body); break; } catch (e) {
        $("status").textContent = "Network problem; retrying…";
        await new Promise((r) => setTimeout(r, Math.min(10000, 1000 * attempt)));
      }
    }
    sending = false;
    $("answer").disabled = false;
    const data = await res.json().catch(() => ({}));
    if (!res.ok) {
      $("error").textContent = data.detail || ("The answer was refused (" + res.status + ").");
      $("error").hidden = false;
      return;
    }
    for (const s of ["order", "spent", "key"]) { try { localStorage.removeItem(key(s)); } catch (e) { /* ignore */ } }
    if (data.feedback) {
      showFeedback(data.feedback, data);
      return;
    }
    render(data);
  }

  function showFeedback(fb, next) {
    const box = $("feedback");
    box.replaceChildren();
    const p = document.createElement("p");
    p.textContent = fb.correct ? "Right: that is the order they happened." : "Not quite. The right order is shown below (earliest first).";
    box.append(p);
    const byHandle = new Map(trial.elements.map((e) => [e.handle, e]));
    const ol = document.createElement("ol");
    ol.className = "frames";
    fb.truth.forEach((h, i) => ol.append(frameItem(byHandle.get(h), i)));
    Array.from(ol.children).forEach((li, i) => { li.querySelector(".tag").textContent = String(i + 1); li.tabIndex = -1; });
    box.append(ol);
    const go = document.createElement("button");
    go.type = "button";
    go.className = "primary";
    go.id = "continue";
    go.textContent = "Continue (Enter)";
    go.addEventListener("click", () => render(next));
    box.append(go);
    box.hidden = false;
    trial = null;
    go.focus();
  }

  $("begin").addEventListener("click", async () => {
    const res = await call(config.startUrl);
    if (res.ok) render(await res.json());
    else $("status").textContent = "Could not start (" + res.status + ").";
  });
  $("answer").addEventListener("click", answer);

  document.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !$("instructions").hidden) { e.preventDefault(); $("begin").click(); return; }
    if (e.key === "Enter" && document.activeElement && document.activeElement.id === "continue") return;
    if (!trial) return;
    if (e.key === "ArrowLeft") { e.preventDefault(); moveFocused(-1); }
    else if (e.key === "ArrowRight") { e.preventDefault(); moveFocused(1); }
    else if (e.key === "Enter") { e.preventDefault(); answer(); }
  });

  // Time on a trial survives a reload: what was spent so far is kept when the page goes away.
  window.addEventListener("pagehide", () => { if (trial && shownAt !== null) store("spent", spentMs()); });

  fetch(config.currentUrl, { credentials: "same-origin" })
    .then((r) => r.json()).then(render)
    .catch(() => { $("status").textContent = "Cannot reach the server. Reload to try again."; });
})();
