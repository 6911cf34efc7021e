// What a participant put into a trial and has not sent yet (an order, a choice, a text), and the
// answer's idempotency key, kept in localStorage per trial so a reload or a crash loses nothing.
// Cleared once the server has the answer. Time is not kept here: the server's `elapsed_ms` is the
// time already spent (clock.js).

function slot(trialId, what) {
  return `study-trial:${trialId}:${what}`;
}

function read(key) {
  try {
    return JSON.parse(localStorage.getItem(key) || "null");
  } catch (e) {
    return null;  // storage disabled or a damaged entry: start afresh
  }
}

function write(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch (e) {
    // Storage full or disabled: the page still works, a reload just starts the input afresh.
  }
}

/** The unsent input and answer key of trial `trialId`. */
export function unsent(trialId) {
  return {
    input: () => read(slot(trialId, "input")),
    keep: (value) => write(slot(trialId, "input"), value),
    key(make) {
      let key = read(slot(trialId, "key"));
      if (!key) {
        key = make();
        write(slot(trialId, "key"), key);
      }
      return key;
    },
    clear() {
      for (const what of ["input", "key"]) {
        try { localStorage.removeItem(slot(trialId, what)); } catch (e) { /* nothing kept */ }
      }
    },
  };
}
