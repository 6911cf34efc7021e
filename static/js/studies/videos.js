// The clips of a study item, as the kind's payload lists them (`[{label, url}]`): each in a player
// with its own controls, labelled "Video 1", "Video 2"... (the item's clips carry no other name).
// Replay is allowed: the controls play a clip again as often as the person likes. The clips load at
// once (`preload="auto"`), so the first one's first frame is there when the trial clock
// (clock.js) asks whether it is playable.

/** A `<div class="study-videos">` with one labelled player per clip (empty for none). */
export function videoList(videos) {
  const box = document.createElement("div");
  box.className = "study-videos" + (videos.length === 1 ? " single" : "");
  for (const v of videos) {
    const figure = document.createElement("figure");
    figure.className = "study-video";
    const player = document.createElement("video");
    player.controls = true;
    player.preload = "auto";
    player.muted = true;       // the clips carry no audio
    player.playsInline = true;
    player.src = v.url;
    player.setAttribute("aria-label", v.label);
    const caption = document.createElement("figcaption");
    caption.textContent = v.label;
    figure.append(caption, player);
    box.append(figure);
  }
  return box;
}

/** A paragraph of `text` with `className` (nothing added for empty text). */
export function paragraph(text, className) {
  const p = document.createElement("p");
  p.className = className;
  p.textContent = text;
  return p;
}
