// What the pages share for talking to the API with the session: JSON requests carrying the CSRF
// token, and idempotency keys for submits that may be retried (an ES module).

// From the page (base.html's <meta name="csrf-token">), not the cookie: the CSRF cookie is
// HttpOnly, so scripts cannot read it.
export function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

// fetch() with a JSON body (if any), the session cookie and the CSRF header; POST by default.
export function send(url, body, method) {
  return fetch(url, {
    method: method || "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

export function newKey() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}
