// Ordering widget (EGO-FLIGHT frame ordering, X-LeBench summary ordering): shuffled frames or texts
// to put back in the order they happened, earliest first. Drag and drop (SortableJS, vendored and
// loaded by this module) or the keyboard: Tab to an element, Left/Right arrows move it. Pinned
// elements (hints) are in their true place, marked, and stay there whatever moves around them.
// Elements are named by the per-trial handles the server gives, never by ids, so nothing here
// carries the true order. Up to 8 frames sit in one row, scaled to fit (app.css, studies section).
// Response: the handles in the order given. Practice feedback shows the participant's order beside the
// right one.

import { paragraph } from "./videos.js";

const SORTABLE_URL = new URL("../../vendor/sortablejs-1.15.6/Sortable.min.js", import.meta.url);
const ONE_ROW_MAX = 8;
let sortableScript = null;

function loadSortable() {
  if (window.Sortable) return Promise.resolve(window.Sortable);
  if (!sortableScript) {
    sortableScript = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = SORTABLE_URL.href;
      s.onload = () => resolve(window.Sortable);
      s.onerror = () => reject(new Error("SortableJS did not load"));
      document.head.append(s);
    });
  }
  return sortableScript;
}

function elementItem(e) {
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

function elementList(elements, label) {
  const ol = document.createElement("ol");
  const oneRow = elements.length <= ONE_ROW_MAX && elements.every((e) => e.kind !== "text");
  ol.className = "frames study-frames" + (oneRow ? " one-row" : "");
  ol.setAttribute("aria-label", label);
  return ol;
}

export async function mount(root, content, { saved, changed }) {
  const byHandle = new Map(content.elements.map((e) => [e.handle, e]));
  const list = elementList(content.elements, "Elements, earliest first");
  list.id = "frames";
  const handles = Array.isArray(saved) && saved.length === byHandle.size && saved.every((h) => byHandle.has(h))
    ? saved : content.elements.map((e) => e.handle);
  list.append(...handles.map((h) => elementItem(byHandle.get(h))));
  const hint = paragraph("", "muted");
  hint.innerHTML = "Drag the elements into the order they happened, earliest on the left, or move the focused one with "
    + "<kbd>←</kbd> <kbd>→</kbd> (<kbd>Tab</kbd> to the next). <kbd>Enter</kbd> answers.";
  root.append(...(content.annotation ? [paragraph(content.annotation, "annotation")] : []), list, hint);

  const order = () => Array.from(list.children, (li) => li.dataset.handle);

  function relabel() {
    Array.from(list.children).forEach((li, i) => {
      li.querySelector(".tag").textContent = (i + 1) + (li.dataset.pinned ? " · pinned" : "");
      li.setAttribute("aria-label", "position " + (i + 1) + (li.dataset.pinned ? ", pinned hint" : ""));
    });
  }

  // Pinned (hint) elements go back to their true position whatever was dragged around them.
  function restorePinned() {
    const items = Array.from(list.children);
    const free = items.filter((li) => !li.dataset.pinned);
    const out = [];
    for (let pos = 1; pos <= items.length; pos++) {
      out.push(items.find((li) => parseInt(li.dataset.pinned, 10) === pos) || free.shift());
    }
    list.replaceChildren(...out);
  }

  function moveFocused(dir) {
    const li = document.activeElement;
    if (!li || li.parentElement !== list || li.dataset.pinned) return false;
    const items = Array.from(list.children);
    const from = items.indexOf(li);
    let to = from + dir;
    while (to >= 0 && to < items.length && items[to].dataset.pinned) to += dir;  // over pinned elements
    if (to < 0 || to >= items.length) return true;
    [items[from], items[to]] = [items[to], items[from]];
    list.replaceChildren(...items);
    relabel();
    changed();
    li.focus();
    return true;
  }

  relabel();
  const first = list.querySelector(".frame:not(.pinned)");
  if (first) first.focus();
  loadSortable().then((Sortable) => {
    if (!list.isConnected) return;
    Sortable.create(list, {
      animation: 120, filter: ".pinned", preventOnFilter: true, draggable: ".frame",
      onMove: (evt) => !evt.related.classList.contains("pinned"),
      onEnd: () => { restorePinned(); relabel(); changed(); },
    });
  }).catch(() => { hint.textContent = "Dragging is not available; move elements with the arrow keys."; });

  return {
    value: () => ({ response: order() }),
    unsent: order,
    key(e) {
      if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
        const moved = moveFocused(e.key === "ArrowLeft" ? -1 : 1);
        if (moved) e.preventDefault();
        return moved;
      }
      return false;
    },
    // The participant's order beside the right one: each of theirs says whether it is in its right
    // place, and if not, which place that is.
    feedback(fb, response) {
      const box = document.createElement("div");
      box.className = "study-feedback-orders";
      const rightAt = new Map(fb.truth.map((h, i) => [h, i + 1]));
      const list = (handles, label, tagOf) => {
        const ol = elementList(content.elements, label);
        handles.forEach((h, i) => {
          const li = elementItem(byHandle.get(h));
          li.tabIndex = -1;
          li.querySelector(".tag").textContent = tagOf(h, i + 1);
          li.setAttribute("aria-label", "position " + (i + 1) + ": " + tagOf(h, i + 1));
          ol.append(li);
        });
        return ol;
      };
      if (Array.isArray(response) && response.length === fb.truth.length && response.every((h) => byHandle.has(h))) {
        const mine = document.createElement("section");
        mine.id = "feedback-yours";
        mine.append(paragraph("Your order, earliest first:", "study-feedback-head"),
                    list(response, "Your order, earliest first",
                         (h, pos) => rightAt.get(h) === pos ? `${pos} · right place` : `${pos} · belongs at ${rightAt.get(h)}`));
        box.append(mine);
      } else {
        box.append(paragraph("You gave no order in time.", "study-feedback-head"));
      }
      const right = document.createElement("section");
      right.id = "feedback-right";
      right.append(paragraph(fb.correct ? "That is the order they happened:" : "The right order, earliest first:", "study-feedback-head"),
                   list(fb.truth, "The right order, earliest first", (h, pos) => String(pos)));
      box.append(right);
      return box;
    },
  };
}
