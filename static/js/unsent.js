// What a person put into a page and has not sent yet, and the idempotency key of its sending, kept in
// localStorage under one name per piece of work, so a reload or a crash loses nothing; cleared once
// the server has it. Shared by the study pages (a trial's order, choice or text: "study-trial:<id>")
// and the verify page (a unit's decisions and time: "verify:<project>:item:<id>"). An ES module.
//
//   const store = unsent("study-trial:12");
//   store.keep(value); store.input() -> value or null; store.key(newKey) -> the key, made once;
//   store.clear()

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
    return true;
  } catch (e) {
    return false;  // storage full or disabled: the page still works, a reload just starts afresh
  }
}

/** The unsent input and sending key of the work named `name`. */
export function unsent(name) {
  const slot = (what) => `${name}:${what}`;
  return {
    input: () => read(slot("input")),
    keep: (value) => write(slot("input"), value),
    key(make) {
      let key = read(slot("key"));
      if (!key) {
        key = make();
        write(slot("key"), key);
      }
      return key;
    },
    clear() {
      for (const what of ["input", "key"]) {
        try { localStorage.removeItem(slot(what)); } catch (e) { /* nothing kept */ }
      }
    },
  };
}
