// Likert widget (VUDG Sec. 4.5 quality ratings, X-LeBench App. D realism ratings): what is rated (a
// question and its answer, or a record's description, or an attention item's instruction) with its
// clips, the criterion and what its scale's ends mean, a 1-5 radio scale (keys 1-5 pick when not
// typing) and a justification box. Below `justify_below` the justification is required: the box
// says so in plain words and the page does not send the rating without one. Enter answers, in the
// box too (take.js); Shift+Enter starts a new line there. Response: `{score, justification}`.

import { paragraph, videoList } from "./videos.js";

const JUSTIFICATION_MAX = 2000;  // kinds/likert.py JUSTIFICATION_MAX

function needsWords(score, below) {
  return score !== null && below > 0 && score < below;
}

export function mount(root, content, { saved, changed }) {
  const below = content.justify_below || 0;
  const rated = document.createElement("div");
  rated.className = "study-rated";
  if (content.instruction) rated.append(paragraph(content.instruction, "question study-question"));
  if (content.question) rated.append(paragraph("Question: " + content.question, "question study-question"));
  if (content.answer) rated.append(paragraph("Answer: " + content.answer, "answer"));
  if (content.description) rated.append(paragraph(content.description, "study-description"));

  const fieldset = document.createElement("fieldset");
  fieldset.className = "study-scale";
  const legend = document.createElement("legend");
  legend.textContent = "Your score for " + content.criterion;
  fieldset.append(legend);
  const radios = [1, 2, 3, 4, 5].map((n) => {
    const label = document.createElement("label");
    label.className = "study-score";
    const input = document.createElement("input");
    input.type = "radio";
    input.name = "score";
    input.value = String(n);
    input.checked = saved && saved.score === n;
    input.addEventListener("change", () => { update(); changed(); });
    label.append(input, document.createTextNode(" " + n));
    fieldset.append(label);
    return input;
  });

  const why = document.createElement("label");
  why.className = "field study-justification";
  const whyText = document.createElement("span");
  const box = document.createElement("textarea");
  box.id = "justification";
  box.rows = 3;
  box.maxLength = JUSTIFICATION_MAX;
  box.value = saved && typeof saved.justification === "string" ? saved.justification : "";
  box.addEventListener("input", () => { update(); changed(); });
  why.append(whyText, box);
  const need = paragraph("", "study-need");
  need.id = "justification-needed";
  need.setAttribute("aria-live", "polite");

  const keys = paragraph("", "muted");
  keys.innerHTML = "Press <kbd>1</kbd>-<kbd>5</kbd> or click to choose; <kbd>Enter</kbd> answers "
    + "(<kbd>Shift</kbd>+<kbd>Enter</kbd> starts a new line while writing).";
  root.append(paragraph(content.criterion, "study-criterion"), paragraph(content.scale, "study-scale-text"), rated,
              videoList(content.videos, content.video_layout), fieldset, why, need, keys);

  const score = () => {
    const r = radios.find((x) => x.checked);
    return r ? parseInt(r.value, 10) : null;
  };

  // The justification box says whether it is needed, and is marked required while it is.
  function update() {
    const required = needsWords(score(), below);
    box.required = required;
    whyText.textContent = required ? `Justification (required for a score below ${below})`
      : below > 0 ? `Justification (optional; required for a score below ${below})` : "Justification (optional)";
    need.textContent = required && !box.value.trim()
      ? `You gave ${score()}, which is below ${below}: please write a short justification, in a few words, saying what is wrong.`
      : "";
  }
  update();

  return {
    value() {
      const s = score();
      if (s === null) return { problem: "Choose a score from 1 to 5 first.", focus: radios[0] };
      if (needsWords(s, below) && !box.value.trim()) {
        return { problem: `A score below ${below} needs a short justification: please say in a few words what is wrong.`, focus: box };
      }
      return { response: { score: s, justification: box.value.trim() } };
    },
    unsent: () => ({ score: score(), justification: box.value }),
    key(e) {
      if (e.target === box || e.ctrlKey || e.metaKey || e.altKey) return false;
      if (e.key >= "1" && e.key <= "5" && e.key.length === 1) {
        e.preventDefault();
        const r = radios[parseInt(e.key, 10) - 1];
        r.checked = true;
        r.focus();
        update();
        changed();
        return true;
      }
      return false;
    },
  };
}
