// Open-answer widget (EgoNight, seed 000 App. A.2.1): the question and its clip(s), and a text box
// for the answer. Nobody else's answer, and no draft, is ever on this page. Enter answers (the
// page's key, take.js), Shift+Enter starts a new line. Response: the text.

import { paragraph, videoList } from "./videos.js";

const TEXT_MAX = 4000;  // kinds/open_answer.py TEXT_MAX

export function mount(root, content, { saved, changed }) {
  const label = document.createElement("label");
  label.className = "field study-text";
  label.textContent = "Your answer";
  const box = document.createElement("textarea");
  box.id = "open-answer";
  box.rows = 4;
  box.maxLength = TEXT_MAX;
  box.value = typeof saved === "string" ? saved : "";
  box.addEventListener("input", changed);
  label.append(box);
  const keys = paragraph("", "muted");
  keys.innerHTML = "Answer in a few words or a sentence. <kbd>Enter</kbd> answers; <kbd>Shift</kbd>+<kbd>Enter</kbd> starts a new line.";
  root.append(paragraph(content.question, "question study-question"), videoList(content.videos, content.video_layout), label, keys);
  box.focus();

  return {
    value() {
      const text = box.value.trim();
      return text ? { response: text } : { problem: "Write your answer first.", focus: box };
    },
    unsent: () => box.value,
    key: () => false,
  };
}
