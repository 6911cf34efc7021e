// The reviewer page: one unit awaiting review, its QA pairs as submitted, a comment and issue tags
// per pair, and accept or reject, all by keyboard. The decision goes to the API
// (POST /api/units/{id}/review/) with an idempotency key made once per page, so a retry after a
// network failure is applied at most once; a refusal shows each error on the pair it concerns.
// Configuration arrives through json_script (the CSP allows no inline script).
import { newKey, send as post } from "./http.js";

const config = JSON.parse(document.getElementById("review-config").textContent);
const $ = (id) => document.getElementById(id);

// A decision made on the previous unit, said once on the next one.
const flash = sessionStorage.getItem("review:flash");
if (flash) {
  sessionStorage.removeItem("review:flash");
  $("flash").textContent = flash;
  $("flash").hidden = false;
}
if (config.unitId) reviewUnit();  // else the page says there is nothing to review

// The unit awaiting review: its cards, keys and decision.
function reviewUnit() {

  const cards = Array.from(document.querySelectorAll("#pairs > li.review-card"));
  const videos = Array.from(document.querySelectorAll(".review-video video"));
  const key = newKey();
  let selected = 0;
  let sending = false;
  let pending = null;  // "accept" | "reject" while the confirm dialog is open

  function select(i) {
    if (!cards.length) return;
    selected = Math.max(0, Math.min(cards.length - 1, i));
    cards.forEach((c, n) => c.classList.toggle("selected", n === selected));
    cards[selected].focus({ preventScroll: true });
    cards[selected].scrollIntoView({ block: "nearest" });
  }

  function inField(target) {
    return /^(TEXTAREA|INPUT|SELECT)$/.test(target.tagName) && target.type !== "checkbox";
  }

  function toggleTag(n) {
    const card = cards[selected];
    const box = card && card.querySelectorAll("input[data-tag]")[n - 1];
    if (!box) return false;
    box.checked = !box.checked;
    return true;
  }

  // Each video at the pair's clip start (plus its offset: a night video's time = day time + offset),
  // the first one playing until the clip ends.
  function playClip() {
    const card = cards[selected];
    if (!card || !videos.length) return;
    const start = parseFloat(card.dataset.start);
    const end = parseFloat(card.dataset.end);
    for (const v of videos) v.currentTime = start + parseFloat(v.dataset.offset || "0");
    const lead = videos[0];
    const stop = () => { if (lead.currentTime >= end + parseFloat(lead.dataset.offset || "0")) { lead.pause(); lead.removeEventListener("timeupdate", stop); } };
    lead.addEventListener("timeupdate", stop);
    for (const v of videos) v.play().catch(() => {});
  }

  function togglePlay() {
    if (!videos.length) return;
    if (videos[0].paused) videos.forEach((v) => v.play().catch(() => {}));
    else videos.forEach((v) => v.pause());
  }

  // The comments typed, one per pair with a text or a tag: [{card index, body}].
  function comments() {
    const out = [];
    cards.forEach((card, i) => {
      const text = card.querySelector("textarea[data-field=text]").value.trim();
      const tags = Array.from(card.querySelectorAll("input[data-tag]:checked")).map((b) => b.value);
      const more = card.querySelector("input[data-field=more-tags]");
      if (more) {
        for (const t of more.value.split(/[,\s]+/)) {
          const tag = t.trim().toLowerCase();
          if (tag && !tags.includes(tag)) tags.push(tag);
        }
      }
      if (text || tags.length) out.push({ index: i, body: { qa_id: parseInt(card.dataset.qaId, 10), text, tags } });
    });
    return out;
  }

  function showErrors(messages) {
    const box = $("errors");
    box.replaceChildren(...messages.map((m) => { const d = document.createElement("div"); d.textContent = m; return d; }));
    box.hidden = messages.length === 0;
  }

  function clearCardErrors() {
    for (const card of cards) {
      const box = card.querySelector(".card-errors");
      box.replaceChildren();
      box.hidden = true;
    }
  }

  function ask(decision) {
    if (sending) return;
    const typed = comments();
    showErrors([]);
    if (decision === "reject" && !typed.length) {
      showErrors(["Say what to change before rejecting: write a comment (C) or choose a tag (1–9) on at least one QA pair."]);
      const area = cards[selected] && cards[selected].querySelector("textarea[data-field=text]");
      if (area) area.focus();
      return;
    }
    const n = typed.length + " comment" + (typed.length === 1 ? "" : "s");
    $("confirm-text").textContent = decision === "accept"
      ? "Accept unit " + config.unitId + "?" + (typed.length ? " Your " + n + " are kept with the review." : "")
      : "Reject unit " + config.unitId + ": it goes back to " + config.annotator + " as rework, with your " + n + ".";
    $("confirm-ok").textContent = (decision === "accept" ? "Accept" : "Reject") + " (Enter)";
    pending = decision;
    $("confirm").showModal();
    $("confirm-ok").focus();
  }

  async function send(decision) {
    const typed = comments();
    const body = { decision, comments: typed.map((c) => c.body), idempotency_key: key };
    sending = true;
    $("accept").disabled = $("reject").disabled = true;
    clearCardErrors();
    for (let attempt = 1; ; attempt++) {
      $("review-status").textContent = attempt === 1 ? "Saving…" : "Network problem; retrying (attempt " + attempt + ")…";
      let res;
      try {
        res = await post(config.reviewUrl, body);
      } catch (e) {
        // The same key on every retry: the server applies the review at most once.
        await new Promise((r) => setTimeout(r, Math.min(30000, 1000 * 2 ** Math.min(attempt, 5))));
        continue;
      }
      sending = false;
      $("accept").disabled = $("reject").disabled = false;
      $("review-status").textContent = "";
      let out = {};
      try { out = await res.json(); } catch (e) { out = {}; }
      if (res.ok) {
        sessionStorage.setItem("review:flash", decision === "accept"
          ? "Unit " + out.unit_id + " accepted."
          : "Unit " + out.unit_id + " rejected: sent back to " + config.annotator + " with " + out.comments + " comment" +
            (out.comments === 1 ? "" : "s") + ".");
        window.location.assign(config.pageUrl);
        return;
      }
      const general = [];
      let first = -1;
      for (const [path, message] of Object.entries(out.errors || {})) {
        const m = path.match(/^comments\[(\d+)\]/);
        const hit = m ? typed[parseInt(m[1], 10)] : null;
        if (hit) {
          const box = cards[hit.index].querySelector(".card-errors");
          const line = document.createElement("div");
          line.textContent = message;
          box.append(line);
          box.hidden = false;
          if (first < 0) first = hit.index;
        } else {
          general.push(message);
        }
      }
      showErrors([(out.detail || "The server refused the review (" + res.status + "); nothing was saved.") +
                  (first >= 0 ? " The QA pairs concerned are marked." : "")].concat(general));
      if (first >= 0) select(first);
      return;
    }
  }

  $("accept").addEventListener("click", () => ask("accept"));
  $("reject").addEventListener("click", () => ask("reject"));
  $("confirm-cancel").addEventListener("click", () => $("confirm").close());
  $("confirm").addEventListener("close", () => { pending = null; });
  $("confirm-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const decision = pending;
    $("confirm").close();
    if (decision) send(decision);
  });
  cards.forEach((card, i) => card.addEventListener("click", (e) => { if (!inField(e.target) && e.target.type !== "checkbox") select(i); }));
  cards.forEach((card, i) => card.addEventListener("focusin", () => {
    selected = i;
    cards.forEach((c, n) => c.classList.toggle("selected", n === i));
  }));

  document.addEventListener("keydown", (e) => {
    if ($("confirm").open) return;  // Enter confirms, Esc cancels (the dialog's own keys)
    if (inField(e.target)) {
      if (e.key === "Escape") { e.preventDefault(); e.target.blur(); select(selected); }
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (/^[1-9]$/.test(k)) { if (toggleTag(parseInt(k, 10))) e.preventDefault(); return; }
    const actions = {
      j: () => select(selected + 1), ArrowDown: () => select(selected + 1),
      k: () => select(selected - 1), ArrowUp: () => select(selected - 1),
      c: () => { const a = cards[selected] && cards[selected].querySelector("textarea[data-field=text]"); if (a) a.focus(); },
      p: playClip, " ": togglePlay, a: () => ask("accept"), r: () => ask("reject"),
    };
    if (actions[k]) { e.preventDefault(); actions[k](); }
  });

  select(0);
}
