// One clock format for the verify page (issue 21): "h:mm:ss.f", tenths of a second, hours always
// shown ("0:18:01.2" for 1081.2 s). Times are seconds of the leading video; a life log's are its
// virtual seconds, which wall() turns into the log's wall clock ("12:31:41.3").
//
//   Clock.hms(1081.2)                 -> "0:18:01.2"
//   Clock.span(3, 7.5)                -> "0:00:03.0 – 0:00:07.5"
//   Clock.wall(17371.3, "2024-05-01T08:02:10+00:00") -> "12:51:41.3" (the log's own time of day)
(function () {
  "use strict";

  // Seconds to "h:mm:ss.f"; rounded to tenths first, so 59.96 s reads "0:01:00.0", not "0:00:60.0".
  function hms(s) {
    if (!Number.isFinite(s) || s < 0) s = 0;
    const tenths = Math.round(s * 10);
    const h = Math.floor(tenths / 36000);
    const m = Math.floor((tenths % 36000) / 600);
    const sec = (tenths % 600) / 10;
    return h + ":" + String(m).padStart(2, "0") + ":" + sec.toFixed(1).padStart(4, "0");
  }

  // The time of day of a life log at ``s`` virtual seconds from its start (an ISO 8601 datetime with
  // its offset), as "h:mm:ss.f" in the log's own zone (the offset written in ``startIso``), so the
  // page shows the clock the wearer lived, whatever the viewer's zone. A day boundary wraps to 0:00.
  function wall(s, startIso) {
    const m = /T(\d{2}):(\d{2}):(\d{2}(?:\.\d+)?)/.exec(startIso || "");
    if (!m) return hms(s);
    const start = parseInt(m[1], 10) * 3600 + parseInt(m[2], 10) * 60 + parseFloat(m[3]);
    return hms((start + (Number.isFinite(s) ? s : 0)) % 86400);
  }

  function span(a, b, format) {
    const f = format || hms;
    return f(a) + " – " + f(b);
  }

  window.Clock = { hms, wall, span };
})();
