// The re-judge page's keys: R marks the judge's label right, W wrong (each submits the verdict form,
// and the server answers with the next answer); Enter takes the first answer when none is held.
// Keys typed into a field, or with a modifier, are left alone. A second key before the page has
// moved on is ignored, so one answer never gets two verdicts from a double press.
let sent = false;

function press(id) {
  const button = document.getElementById(id);
  if (!button || sent) return false;
  sent = true;
  button.click();
  return true;
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
  const target = event.target;
  if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
  const key = event.key.toLowerCase();
  const id = key === "r" ? "verdict-right" : key === "w" ? "verdict-wrong" : key === "enter" ? "start" : null;
  if (id && document.getElementById(id)) {
    event.preventDefault();
    press(id);
  }
});
