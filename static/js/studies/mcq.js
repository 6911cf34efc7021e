// Multiple-choice widget (EgoExoBench human performance, seed 001 Sec. 4, App. A.5): the question,
// its clips (controls, replay allowed) and the options as radio buttons named by letter. Keys 1-9
// or A-Z pick an option (1 = A); Enter answers (the page's key). Response: the chosen option's index
// in the shown order. Practice feedback names the right letter beside the one chosen. An item with
// no clip (an attention item) says nothing of clips.

import { paragraph, videoList } from "./videos.js";

export function mount(root, content, { saved, changed }) {
  const fieldset = document.createElement("fieldset");
  fieldset.className = "study-options";
  const legend = document.createElement("legend");
  legend.textContent = "Options";
  fieldset.append(legend);
  const radios = content.options.map((option, i) => {
    const label = document.createElement("label");
    label.className = "study-option";
    const input = document.createElement("input");
    input.type = "radio";
    input.name = "option";
    input.value = String(i);
    input.checked = saved === i;
    input.addEventListener("change", changed);
    const letter = document.createElement("span");
    letter.className = "letter";
    letter.textContent = option.letter + ".";
    const text = document.createElement("span");
    text.textContent = option.text;
    label.append(input, letter, text);
    fieldset.append(label);
    return input;
  });
  const keys = paragraph("", "muted");
  keys.innerHTML = (content.videos.length ? "Play the clips as often as you like. " : "")
    + "Press <kbd>1</kbd>-<kbd>9</kbd> or <kbd>A</kbd>-<kbd>Z</kbd>, or click, to choose; <kbd>Enter</kbd> answers.";
  root.append(paragraph(content.question, "question study-question"), videoList(content.videos, content.video_layout), fieldset, keys);

  const chosen = () => {
    const i = radios.findIndex((r) => r.checked);
    return i < 0 ? null : i;
  };

  function pick(i) {
    radios[i].checked = true;
    radios[i].focus();
    changed();
  }

  return {
    value() {
      const i = chosen();
      return i === null ? { problem: "Choose an option first.", focus: radios[0] } : { response: i };
    },
    unsent: chosen,
    key(e) {
      if (e.ctrlKey || e.metaKey || e.altKey || e.key.length !== 1) return false;
      let i = -1;
      if (e.key >= "1" && e.key <= "9") i = e.key.charCodeAt(0) - 49;
      else if (/^[a-z]$/i.test(e.key)) i = e.key.toUpperCase().charCodeAt(0) - 65;
      if (i < 0 || i >= radios.length) return false;
      e.preventDefault();
      pick(i);
      return true;
    },
    feedback(fb, response) {
      const yours = typeof response === "number" && content.options[response] ? content.options[response].letter : null;
      const text = yours === null ? `You chose no option. The right option was ${fb.truth}.`
        : fb.correct ? `You chose ${yours}: right.` : `You chose ${yours}. The right option was ${fb.truth}.`;
      const p = paragraph(text, "");
      p.id = "feedback-choice";
      return p;
    },
  };
}
