// The videos page (issue 21): a poster opens the preview player (a modal dialog; Esc or Close shuts it
// and stops the video), and admins upload files with a progress bar each (XMLHttpRequest, whose upload
// reports progress; fetch does not) to POST /api/projects/<slug>/videos/, one file after another.
import { csrfToken } from "./http.js";

const config = JSON.parse(document.getElementById("videos-config").textContent);
const dialog = document.getElementById("preview");
const player = document.getElementById("preview-video");
const title = document.getElementById("preview-title");

document.querySelectorAll("button.poster").forEach((button) => {
  button.addEventListener("click", () => {
    title.textContent = button.dataset.title;
    player.src = button.dataset.src;
    dialog.showModal();
    player.focus();
    player.play().catch(() => {});
  });
});
document.getElementById("preview-close").addEventListener("click", () => dialog.close());
dialog.addEventListener("close", () => {
  player.pause();
  player.removeAttribute("src");
  player.load();  // lets go of the file
});

const form = document.getElementById("upload-form");
if (form) uploads(form);  // admins only: the form is not on the page otherwise

// Uploads of the files chosen in `form`, each with its own progress bar.
function uploads(form) {
  const input = document.getElementById("upload-files");
  const list = document.getElementById("uploads");
  const csrf = csrfToken();

  function upload(file, li) {
    const bar = li.querySelector("progress");
    const note = li.querySelector(".upload-note");
    return new Promise((resolve) => {
      const xhr = new XMLHttpRequest();
      xhr.open("POST", config.uploadUrl);
      xhr.setRequestHeader("X-CSRFToken", csrf);
      xhr.upload.addEventListener("progress", (e) => {
        if (e.lengthComputable) {
          bar.max = e.total;
          bar.value = e.loaded;
          note.textContent = `${Math.floor((100 * e.loaded) / e.total)}% sent`;
        }
      });
      xhr.addEventListener("load", () => {
        let body = {};
        try { body = JSON.parse(xhr.responseText); } catch (err) { /* not JSON: a proxy's page */ }
        li.dataset.result = String(xhr.status);
        if (xhr.status === 201 || xhr.status === 200) {
          bar.value = bar.max;
          if (body.status === "failed") note.textContent = `refused: ${body.error}`;
          else if (xhr.status === 200) note.textContent = "already here: the same content was uploaded before";
          else note.textContent = "uploaded: it is being processed";
          li.classList.toggle("error", body.status === "failed");
        } else {
          li.classList.add("error");
          note.textContent = `not uploaded: ${body.detail || "the server answered " + xhr.status}`;
        }
        resolve();
      });
      xhr.addEventListener("error", () => {
        li.classList.add("error");
        note.textContent = "not uploaded: the connection failed";
        resolve();
      });
      const data = new FormData();
      data.append("file", file);
      xhr.send(data);
    });
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const files = Array.from(input.files);
    if (!files.length) {
      list.replaceChildren(Object.assign(document.createElement("li"), { textContent: "Choose one or more video files first." }));
      input.focus();
      return;
    }
    const button = document.getElementById("upload-start");
    button.disabled = true;
    const items = files.map((file) => {
      const li = document.createElement("li");
      li.className = "upload-item";
      const bar = document.createElement("progress");
      bar.max = file.size || 1;
      bar.value = 0;
      bar.setAttribute("aria-label", `Upload of ${file.name}`);
      const note = Object.assign(document.createElement("span"), { className: "upload-note", textContent: "waiting" });
      li.append(Object.assign(document.createElement("strong"), { textContent: file.name }), " ", bar, " ", note);
      return li;
    });
    list.replaceChildren(...items);
    for (let i = 0; i < files.length; i++) await upload(files[i], items[i]);
    button.disabled = false;
    input.value = "";
    const again = document.createElement("li");
    const link = Object.assign(document.createElement("a"), { href: location.href, textContent: "Show them in the list" });
    again.append("Done. ", link);
    list.append(again);
  });
}
