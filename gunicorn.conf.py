"""gunicorn's settings file, read from the working directory by default (the Dockerfile,
docker-compose.yml and scripts/demo.sh start ``gunicorn annotator.wsgi`` from the repository's root;
elsewhere pass ``-c gunicorn.conf.py``).

One hook: a request body that stops arriving is cut off. gunicorn reads a body with blocking socket
reads and no timeout of its own, so a client that announced 8 GiB and sent nothing held a web thread
for ever (issue 19). Before a request with a body is handled, its socket gets a timeout of
REQUEST_BODY_TIMEOUT_S seconds: a read that waits longer for a byte raises TimeoutError, which
Django reports as UnreadablePostError and the API answers 408 (``api.exceptions.body_cut_off``).
The gthread worker puts the socket back in blocking mode before the next request on the connection.
"""


def _has_body(req) -> bool:
    for name, value in req.headers:
        if name == "TRANSFER-ENCODING" and "chunked" in value.lower():
            return True
        if name == "CONTENT-LENGTH" and value.strip() not in ("", "0"):
            return True
    return False


def pre_request(worker, req):
    worker.log.debug("%s %s", req.method, req.path)  # gunicorn's default hook
    sock = getattr(getattr(req, "unreader", None), "sock", None)
    if sock is not None and _has_body(req):
        from django.conf import settings  # the application (and so Django) is loaded by now

        sock.settimeout(settings.REQUEST_BODY_TIMEOUT_S)
