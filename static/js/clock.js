// One clock format for the verify page (issue 21): "h:mm:ss.f", tenths of a second, hours always
// shown ("0:18:01.2" for 1081.2 s). Times are seconds of the leading video; a life log's are its
// virtual seconds, which wall() turns into the log's wall clock ("12:31:41.3").
//
//   Clock.hms(1081.2)                 -> "0:18:01.2"
//   Clock.span(3, 7.5)                -> "0:00:03.0 – 0:00:07.5"
//   Clock.wall(17371.3, "2024-05-01T08:02:10+00:00") -> "12:51:41.3" (the log's own time of day)
//   Clock.parse("0:18:01.2") -> 1081.2, Clock.parse("18:01.2") -> 1081.2, Clock.parse("1081.2") -> 1081.2
//   Clock.parseWall("12:51:41.3", "2024-05-01T08:02:10+00:00") -> 17371.3 (a plain number stays seconds)
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

// What a person types in a time field: seconds ("1081.2", a comma as decimal point too) or the
// page's clock, "h:mm:ss.f" or "m:ss.f" (minutes and seconds below 60). Returns seconds, or NaN
// for anything else (a negative number included).
const CLOCK = /^(?:(\d+):)?(\d{1,2}):(\d{1,2}(?:\.\d*)?)$/;
function parse(text) {
  const t = String(text).trim().replace(",", ".");
  if (/^\d+(?:\.\d*)?$|^\.\d+$/.test(t)) return parseFloat(t);
  const m = CLOCK.exec(t);
  if (!m) return NaN;
  const h = m[1] === undefined ? 0 : parseInt(m[1], 10);
  const min = parseInt(m[2], 10);
  const sec = parseFloat(m[3]);
  if ((m[1] !== undefined && min >= 60) || sec >= 60) return NaN;
  return h * 3600 + min * 60 + sec;
}

// As parse, for a life log: a clock time is the log's time of day (wall()'s inverse: virtual
// seconds from the log's start, the first such moment of its day); a plain number stays virtual seconds.
function parseWall(text, startIso) {
  const t = String(text).trim();
  const m = /T(\d{2}):(\d{2}):(\d{2}(?:\.\d+)?)/.exec(startIso || "");
  if (!t.includes(":") || !m) return parse(t);
  const of = parse(t);
  if (!Number.isFinite(of)) return NaN;
  const start = parseInt(m[1], 10) * 3600 + parseInt(m[2], 10) * 60 + parseFloat(m[3]);
  return Math.round((((of - start) % 86400) + 86400) % 86400 * 1000) / 1000;
}

function span(a, b, format) {
  const f = format || hms;
  return f(a) + " – " + f(b);
}

export { hms, wall, span, parse, parseWall };
