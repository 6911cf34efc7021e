// The completion page of a study link (templates/studies/link/done.html): after showing the code for
// a moment, go on to the panel's completion URL, which carries the code. The link on the page does
// the same by hand. Config (json_script): {completionUrl}.

const config = JSON.parse(document.getElementById("done-config").textContent);
if (config.completionUrl) setTimeout(() => window.location.assign(config.completionUrl), 2500);
