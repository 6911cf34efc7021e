"""Django settings: everything comes from the environment, parsed strictly (see ``annotator.env``).

With no environment at all the settings point at the project-local stack that ``make demo`` and
``make test`` start (PostgreSQL on 127.0.0.1:54329, Redis on 127.0.0.1:63799, media on local disk
under ``.local/media``). Set ``STORAGE_BACKEND=s3`` and the ``AWS_*`` variables for any
S3-compatible bucket.
"""

import os
from datetime import timedelta
from pathlib import Path

from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from django_guid.integrations import CeleryIntegration
from kombu import Queue

from annotator.env import env_bool, env_float, env_int, env_list, env_str
from annotator.logging import logging_config

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DJANGO_DEBUG", False)


# --- Keys: from the environment, else from a file (made once by scripts/keys.sh) -------------------
# A public key would let anyone forge sessions and password-reset tokens, so with DEBUG off an empty
# or published key stops the process at start-up instead of running with it.
_PUBLIC_KEYS = {
    "local-only-insecure-key-set-DJANGO_SECRET_KEY-in-production",
    "local-only-insecure-pseudonym-key",
    "local-only-insecure-handle-key",
}


def _key(name: str, file_setting: str, default_file: Path, debug_fallback: str) -> str:
    """The key in ``$name``, else the stripped contents of the file named by ``$file_setting``
    (default ``default_file``). With DEBUG off, raise ImproperlyConfigured if that is empty or a
    published value; with DEBUG on, fall back to ``debug_fallback``."""
    value = os.environ.get(name, "").strip()
    path = Path(env_str(file_setting, str(default_file)))
    if not value and path.is_file():
        try:
            value = path.read_text().strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{file_setting}: cannot read {path}: {exc}") from None
    if value and value not in _PUBLIC_KEYS and not value.startswith("django-insecure-"):
        return value
    if DEBUG:
        return value or debug_fallback
    problem = "is a published placeholder" if value else "is not set"
    raise ImproperlyConfigured(
        f"{name} {problem}, and DJANGO_DEBUG is off. Set {name} to a long random string, or put one in "
        f"the file named by {file_setting} (now {path}); scripts/keys.sh creates that file once."
    )


SECRET_KEY = _key(
    "DJANGO_SECRET_KEY",
    "DJANGO_SECRET_KEY_FILE",
    BASE_DIR / ".local" / "secret_key",
    "local-only-insecure-key-set-DJANGO_SECRET_KEY-in-production",
)
# Export pseudonyms (annotator.qa.selectors.pseudonym) come from their own key, so rotating
# SECRET_KEY (sessions, tokens) never renames the annotators of past exports.
PSEUDONYM_KEY = _key(
    "PSEUDONYM_KEY", "PSEUDONYM_KEY_FILE", BASE_DIR / ".local" / "pseudonym_key", "local-only-insecure-pseudonym-key"
)
# The handles that name rows to annotators (annotator.core.handles, issue 20) have their own key too:
# rotating SECRET_KEY renames no handle, and media folders are named by a key stored per video.
HANDLE_KEY = _key("HANDLE_KEY", "HANDLE_KEY_FILE", BASE_DIR / ".local" / "handle_key", "local-only-insecure-handle-key")
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "axes",
    "django_guid",
    "health_check",
    "annotator.core",
    "annotator.projects",
    "annotator.media",
    "annotator.inference",
    "annotator.drafts",
    "annotator.qa",
    "annotator.studies",
    "annotator.exposure",
    "annotator.team",
    "annotator.gold",
    "annotator.review",
    "annotator.console",
    "annotator.agreement",
    "annotator.evaluation",
    "annotator.reports",
    "api",
    "annotator.demo",  # the demo's seeding (make demo): at the top, nothing imports it
]

MIDDLEWARE = [
    # First, so every later middleware's and view's log lines carry the request id.
    "django_guid.middleware.guid_middleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "annotator.middleware.RejectNulMiddleware",  # before CSRF, which reads form fields
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "annotator.urls"
WSGI_APPLICATION = "annotator.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "HOST": env_str("POSTGRES_HOST", "127.0.0.1"),
        "PORT": env_int("POSTGRES_PORT", 54329, minimum=1),
        "NAME": env_str("POSTGRES_DB", "annotator"),
        "USER": env_str("POSTGRES_USER", "annotator"),
        "PASSWORD": env_str("POSTGRES_PASSWORD", ""),
        "CONN_MAX_AGE": env_int("POSTGRES_CONN_MAX_AGE", 60, minimum=0),
        "CONN_HEALTH_CHECKS": True,
        # Server-side binding lets psycopg prepare a statement after it ran 5 times on a connection,
        # so PostgreSQL stops re-planning the queue's hot queries on every request. Turn it off
        # behind a transaction-pooling proxy (PgBouncer), which cannot keep prepared statements.
        "OPTIONS": (
            {"server_side_binding": True, "prepare_threshold": 5}
            if env_bool("POSTGRES_PREPARED_STATEMENTS", True)
            else {}
        ),
    }
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

# --- Security headers and cookies -----------------------------------------------------------------
# Cookies are Secure (sent over HTTPS only) whenever DEBUG is off. `make demo` serves plain http on
# 127.0.0.1 and so sets DJANGO_SECURE_COOKIES=0; a real deployment never should.
SECURE_COOKIES = env_bool("DJANGO_SECURE_COOKIES", not DEBUG)
SESSION_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_SECURE = SECURE_COOKIES
SESSION_COOKIE_HTTPONLY = True
# Database sessions, a new one written in one statement (annotator/session_store.py).
SESSION_ENGINE = "annotator.session_store"
# Scripts read the CSRF token from the page (<meta name="csrf-token"> in base.html), never the cookie.
CSRF_COOKIE_HTTPONLY = True
# Sent only on HTTPS responses (SecurityMiddleware), so harmless behind plain http.
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 0 if DEBUG else 31_536_000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", False)
# Behind a TLS-terminating proxy that sets X-Forwarded-Proto (and strips it from clients).
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("DJANGO_TRUST_X_FORWARDED_PROTO", False) else None
)
X_FRAME_OPTIONS = "DENY"

# --- Login throttling (django-axes) ----------------------------------------------------------------
# After AXES_FAILURE_LIMIT wrong passwords for one username from one address, that pair is locked
# out for AXES_COOLOFF_MINUTES (each further try restarts the wait). The client address is
# REMOTE_ADDR only: trusting X-Forwarded-For would let a guesser pick a new address per try. Behind
# a proxy every client shares the proxy's address, so the lock is then in effect per username.
# API tokens are not passwords and are not throttled here.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_ENABLED = env_bool("AXES_ENABLED", True)
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "annotator.lockout.locked_out"
AXES_IPWARE_META_PRECEDENCE_ORDER = ("REMOTE_ADDR",)
AXES_VERBOSE = False  # its start-up banner would clutter every command's output

# --- Storage: local disk by default, any S3-compatible bucket through django-storages ---------
STORAGE_BACKEND = env_str("STORAGE_BACKEND", "local")
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(BASE_DIR / ".local" / "media")))
MEDIA_URL = "/media/"
STATIC_URL = "/static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / ".local" / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]

if STORAGE_BACKEND == "local":
    _default_storage = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(MEDIA_ROOT), "base_url": MEDIA_URL},
    }
elif STORAGE_BACKEND == "s3":
    _default_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env_str("AWS_STORAGE_BUCKET_NAME", ""),
            "endpoint_url": env_str("AWS_S3_ENDPOINT_URL", "") or None,
            "region_name": env_str("AWS_S3_REGION_NAME", "") or None,
            "access_key": env_str("AWS_ACCESS_KEY_ID", "") or None,
            "secret_key": env_str("AWS_SECRET_ACCESS_KEY", "") or None,
            "file_overwrite": False,
            "querystring_auth": True,
            "signature_version": "s3v4",  # presigned URLs as every region and S3-compatible server takes them
            # /files/ answers a 302 to a presigned URL valid this long (seconds); a player re-asks
            # /files/ for a new one when it reloads.
            "querystring_expire": env_int("AWS_QUERYSTRING_EXPIRE", 3600, minimum=60),
            # Files opened through django-storages spill to disk past 8 MiB (its default, 0, keeps
            # a whole object in memory); local_copy downloads without it.
            "max_memory_size": 8 * 1024 * 1024,
        },
    }
    if not _default_storage["OPTIONS"]["bucket_name"]:
        raise ImproperlyConfigured("STORAGE_BACKEND=s3 needs AWS_STORAGE_BUCKET_NAME")
else:
    raise ImproperlyConfigured(f"STORAGE_BACKEND must be 'local' or 's3', got {STORAGE_BACKEND!r}")

# --- Content-Security-Policy (django-csp) ---------------------------------------------------------
# No inline script or style anywhere: configuration reaches scripts through json_script, styling
# lives in static/css. Media come from this origin (the access-checked /files/ view) or, with S3,
# from the bucket's origin (CSP_MEDIA_ORIGINS overrides the one derived here).
if STORAGE_BACKEND == "s3":
    _endpoint = _default_storage["OPTIONS"]["endpoint_url"]
    _media_origins = [_endpoint.rstrip("/")] if _endpoint else ["https://*.amazonaws.com"]
else:
    _media_origins = []
CSP_MEDIA_ORIGINS = env_list("CSP_MEDIA_ORIGINS", _media_origins)
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:", *CSP_MEDIA_ORIGINS],  # data: for the empty favicon
        # blob: for MediaSource (hls.js plays long videos' HLS through a blob: object URL)
        "media-src": [SELF, "blob:", *CSP_MEDIA_ORIGINS],
        "connect-src": [SELF, *CSP_MEDIA_ORIGINS],  # hls.js fetches segments, redirected to the bucket
        "font-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    }
}

STORAGES = {"default": _default_storage, "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"}}

# --- Celery ------------------------------------------------------------------------------------
REDIS_PORT = env_int("REDIS_PORT", 63799, minimum=1)
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", f"redis://127.0.0.1:{REDIS_PORT}/0")
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", f"redis://127.0.0.1:{REDIS_PORT}/1")
# Split queues (issue 22), routed here and nowhere else: ffmpeg work on ``media``, model calls on
# ``models``, scoring, agreement and reports on ``scores``, the rest (beat's periodic work, the job
# reconciler, releases) on ``default``, so a 2-hour transcode never waits before, or blocks, a score.
# Each queue gets a worker of its own (``make demo``: scripts/demo.sh; docker-compose.yml).
WORKER_QUEUES = ("media", "models", "scores", "default")
CELERY_TASK_DEFAULT_QUEUE = "default"
# Declared, so a worker started without -Q takes every queue, and /health/ asks that each has one.
CELERY_TASK_QUEUES = tuple(Queue(name) for name in WORKER_QUEUES)
CELERY_TASK_ROUTES = {
    "media.*": {"queue": "media"},
    "studies.build": {"queue": "media"},  # frames and clips cut with ffmpeg
    "qa.export": {"queue": "media"},  # an export's clips cut with ffmpeg (the export page, issue 21)
    "drafts.*": {"queue": "models"},
    "evaluation.*": {"queue": "models"},
    "agreement.compute": {"queue": "scores"},
    "agreement.overlap_consensus": {"queue": "scores"},
    "studies.score": {"queue": "scores"},
}
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A worker keeps its database connection from task to task, as a web process does between requests
# (``CONN_MAX_AGE``; ``workers.celery`` closes it when obsolete or broken). Without this, Celery's
# Django fix-up closes it before and after every task: a new PostgreSQL session per task, each
# ``gold.premake_for`` message then cost about 8 ms of connecting and planning (bench/queue.py).
# The fix-up still closes it every this many tasks.
CELERY_DB_REUSE_MAX = 1000
# Each task declares its own time limit (``annotator.jobs.job_task``); there is no global one.
# A broker that is down makes a send (``annotator.jobs.send``) fail after this many seconds instead of
# hanging; the job's row stays queued for the reconciler.
CELERY_BROKER_CONNECTION_TIMEOUT = 5
CELERY_BROKER_TRANSPORT_OPTIONS = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5}

# --- Jobs (``annotator.jobs``): every job is a row before it is a message ---------------------------
# The reconciler (Celery beat) runs this often; it re-sends a queued job whose message went
# unanswered for JOBS_RESEND_AFTER_S (doubling per send, at most an hour), and treats a running
# job as dead once it is JOBS_STALE_SLACK_S past its task's time limit.
JOBS_RECONCILE_EVERY_S = env_float("JOBS_RECONCILE_EVERY_S", 30.0, minimum=0.5)
JOBS_RESEND_AFTER_S = env_float("JOBS_RESEND_AFTER_S", 120.0, minimum=0.5)
JOBS_STALE_SLACK_S = env_int("JOBS_STALE_SLACK_S", 60, minimum=0)
# --- Agreement (``annotator.agreement``) -----------------------------------------------------------
# Beat looks this often for scopes with new responses since their last report and queues them.
AGREEMENT_SCHEDULE_EVERY_S = env_float("AGREEMENT_SCHEDULE_EVERY_S", 600.0, minimum=5.0)
# Every value's 95% interval is a percentile bootstrap over items with this many resamples and seed.
AGREEMENT_RESAMPLES = env_int("AGREEMENT_RESAMPLES", 1000, minimum=0)
AGREEMENT_SEED = env_int("AGREEMENT_SEED", 0, minimum=0)
# How often the periodic job times out idle link participants (each study's abandon_after_min).
STUDY_RELEASE_EVERY_S = env_int("STUDY_RELEASE_EVERY_S", 300, minimum=10)
# How often gold copies are made ahead for the people whose next claim draws gold (``gold.claims.premake``),
# besides the ``gold.premake_for`` message each claim sends: a claim never makes one (it took longer).
GOLD_PREMAKE_EVERY_S = env_float("GOLD_PREMAKE_EVERY_S", 10.0, minimum=1.0)
# A gold copy reached by a review, a double-check or a round's close is settled this many seconds
# later, drawn uniformly per event (``review.services.settle_gold_later``): settled in the same
# transaction, it flipped together with the real unit whose review reached it.
GOLD_SETTLE_DELAY_MIN_S = env_float("GOLD_SETTLE_DELAY_MIN_S", 60.0, minimum=0.0)
GOLD_SETTLE_DELAY_MAX_S = env_float(
    "GOLD_SETTLE_DELAY_MAX_S", max(900.0, GOLD_SETTLE_DELAY_MIN_S), minimum=GOLD_SETTLE_DELAY_MIN_S
)
# The apps with a ``tasks`` module (Celery autodiscovers them; ``annotator.jobs`` imports them).
TASK_APPS = [
    "annotator.media",
    "annotator.drafts",
    "annotator.studies",
    "annotator.core",
    "annotator.agreement",
    "annotator.evaluation",
    "annotator.gold",
    "annotator.review",
    "annotator.qa",
]
CELERY_BEAT_SCHEDULE = {
    # Expires: a run a busy worker could not start in time is dropped, not piled up.
    "gold-premake": {
        "task": "gold.premake",
        "schedule": GOLD_PREMAKE_EVERY_S,
        "options": {"expires": GOLD_PREMAKE_EVERY_S},
    },
    "reconcile-jobs": {"task": "core.reconcile_jobs", "schedule": JOBS_RECONCILE_EVERY_S},
    "agreement-schedule": {"task": "agreement.schedule", "schedule": AGREEMENT_SCHEDULE_EVERY_S},
    "studies-release-idle": {"task": "studies.release_idle_schedule", "schedule": STUDY_RELEASE_EVERY_S},
}
# One beat whatever the number of hosts (issue 22; ``workers/beat.py``, on RedBeat): the schedule's
# last run times and a lock live in the broker's Redis. The beat holding the lock sends the periodic
# jobs and renews the lock at every tick, at least every BEAT_MAX_INTERVAL_S; any other beat (a
# standby, or one started by mistake) waits for the lock, polling as often, and sends nothing. A beat
# stopped cleanly releases the lock; a killed one's lock expires after BEAT_LOCK_TIMEOUT_S. The next
# holder reads the last run times, so nothing is sent twice for the change.
CELERY_BEAT_SCHEDULER = "workers.beat:OneBeatScheduler"
BEAT_MAX_INTERVAL_S = env_float("BEAT_MAX_INTERVAL_S", 5.0, minimum=0.1)
BEAT_LOCK_TIMEOUT_S = env_int("BEAT_LOCK_TIMEOUT_S", 60, minimum=1)
if BEAT_LOCK_TIMEOUT_S < 3 * BEAT_MAX_INTERVAL_S:
    raise ImproperlyConfigured(
        f"BEAT_LOCK_TIMEOUT_S ({BEAT_LOCK_TIMEOUT_S}) must be at least 3 times BEAT_MAX_INTERVAL_S "
        f"({BEAT_MAX_INTERVAL_S}): the beat renews its lock once per tick"
    )
CELERY_BEAT_MAX_LOOP_INTERVAL = BEAT_MAX_INTERVAL_S
CELERY_REDBEAT_LOCK_TIMEOUT = BEAT_LOCK_TIMEOUT_S

# --- Media processing --------------------------------------------------------------------------
MEDIA_MAX_UPLOAD_BYTES = env_int("MEDIA_MAX_UPLOAD_BYTES", 8 * 1024**3, minimum=1)
MEDIA_RENDITION_MAX_HEIGHT = env_int("MEDIA_RENDITION_MAX_HEIGHT", 720, minimum=16)
MEDIA_PROBE_TIMEOUT_S = env_float("MEDIA_PROBE_TIMEOUT_S", 60.0, minimum=1.0)
# An ffmpeg run may take this many times the video's duration (at least a minute), and never more
# than FFMPEG_TIMEOUT_MAX_S; the task's own time limit sits above the cap.
FFMPEG_TIMEOUT_FACTOR = env_float("FFMPEG_TIMEOUT_FACTOR", 6.0, minimum=0.1)
FFMPEG_TIMEOUT_MAX_S = env_int("FFMPEG_TIMEOUT_MAX_S", 3600, minimum=10)
# Temporary files of media work (one folder per task run, removed after it, and by the next
# delivery if a worker was killed mid-task).
MEDIA_WORK_DIR = Path(env_str("MEDIA_WORK_DIR", str(BASE_DIR / ".local" / "work")))
# Videos longer than this many seconds also get an HLS rendition (two levels, segments of
# MEDIA_HLS_SEGMENT_S seconds, played with hls.js); shorter ones keep the MP4 only.
MEDIA_HLS_MIN_DURATION_S = env_float("MEDIA_HLS_MIN_DURATION_S", 1200.0, minimum=1.0)
MEDIA_HLS_SEGMENT_S = env_int("MEDIA_HLS_SEGMENT_S", 5, minimum=4)
MEDIA_HLS_LOW_HEIGHT = env_int("MEDIA_HLS_LOW_HEIGHT", 360, minimum=16)
# Timeline thumbnails: tiles this many px wide, at most this many per video (a long video gets a
# tile every ceil(duration / max) seconds, at least every MEDIA_THUMB_MIN_INTERVAL_S).
MEDIA_THUMB_WIDTH = env_int("MEDIA_THUMB_WIDTH", 160, minimum=16)
MEDIA_THUMB_MAX_TILES = env_int("MEDIA_THUMB_MAX_TILES", 1000, minimum=1)
MEDIA_THUMB_MIN_INTERVAL_S = env_int("MEDIA_THUMB_MIN_INTERVAL_S", 1, minimum=1)
# Limits checked when a video is probed, before anything is stored or transcoded (issue 19: a 1.2 MB
# upload declaring 23.9 hours became 34,405 HLS files): its duration times its resolution, in
# megapixel-hours (1920x1080 for 24 hours is 49.8), and the HLS segments of one quality level
# (8640 segments of 5 s are 12 hours).
MEDIA_MAX_MEGAPIXEL_HOURS = env_float("MEDIA_MAX_MEGAPIXEL_HOURS", 50.0, minimum=0.000001)
MEDIA_HLS_MAX_SEGMENTS = env_int("MEDIA_HLS_MAX_SEGMENTS", 8640, minimum=1)
# An upload (any request body) that sends no byte for this many seconds is cut off with a 408
# (gunicorn.conf.py sets it on the socket; issue 19: an upload announcing 8 GiB and sending nothing
# held a web thread for ever).
REQUEST_BODY_TIMEOUT_S = env_float("REQUEST_BODY_TIMEOUT_S", 60.0, minimum=1.0)
for _name, _value, _most in (
    ("MEDIA_HLS_MIN_DURATION_S", MEDIA_HLS_MIN_DURATION_S, 86400),
    ("MEDIA_HLS_SEGMENT_S", MEDIA_HLS_SEGMENT_S, 6),
    ("MEDIA_HLS_LOW_HEIGHT", MEDIA_HLS_LOW_HEIGHT, 2160),
    ("MEDIA_THUMB_WIDTH", MEDIA_THUMB_WIDTH, 640),
    ("MEDIA_THUMB_MAX_TILES", MEDIA_THUMB_MAX_TILES, 10000),
    ("MEDIA_THUMB_MIN_INTERVAL_S", MEDIA_THUMB_MIN_INTERVAL_S, 600),
    ("MEDIA_MAX_MEGAPIXEL_HOURS", MEDIA_MAX_MEGAPIXEL_HOURS, 10000),
    ("MEDIA_HLS_MAX_SEGMENTS", MEDIA_HLS_MAX_SEGMENTS, 100000),
    ("REQUEST_BODY_TIMEOUT_S", REQUEST_BODY_TIMEOUT_S, 3600),
):
    if _value > _most:
        raise ImproperlyConfigured(f"{_name} must be <= {_most}, got {_value}")
# Redis redelivers a message not acknowledged within this time; it must exceed the longest task.
CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] = 2 * FFMPEG_TIMEOUT_MAX_S + 1800

# --- Model server (any OpenAI-compatible endpoint) ----------------------------------------------
LLM_TIMEOUT_S = env_float("LLM_TIMEOUT_S", 120.0, minimum=1.0)
LLM_FRAMES = env_int("LLM_FRAMES", 6, minimum=1)
LLM_WINDOWS = env_int("LLM_WINDOWS", 3, minimum=1)  # windows per video for QA types with a window clip policy
LLM_MAX_ATTEMPTS = env_int("LLM_MAX_ATTEMPTS", 4, minimum=1)
# Backoff between attempts of one stage call: BASE x 2^(n-1) s, or the server's Retry-After; capped.
LLM_BACKOFF_BASE_S = env_float("LLM_BACKOFF_BASE_S", 2.0, minimum=0.0)
LLM_BACKOFF_CAP_S = env_float("LLM_BACKOFF_CAP_S", 60.0, minimum=0.0)
# A pipeline run's task works for at most this long, then queues itself to go on (a worker is never
# held for hours and a lost worker loses at most one slice; finished videos are never redone).
DRAFT_RUN_SLICE_S = env_float("DRAFT_RUN_SLICE_S", 1800.0, minimum=1.0)
# Threads of one run's task: twice the largest concurrency of its servers, at most this.
DRAFT_RUN_MAX_THREADS = env_int("DRAFT_RUN_MAX_THREADS", 64, minimum=1)

# --- Queues --------------------------------------------------------------------------------------
# Leases are short and renewed by the page's heartbeat, so a closed page frees its unit within a
# lease; the heartbeat interval must be well under the lease.
QUEUE_LEASE_SECONDS = env_int("QUEUE_LEASE_SECONDS", 120, minimum=5)
QUEUE_HEARTBEAT_SECONDS = env_int("QUEUE_HEARTBEAT_SECONDS", 30, minimum=1)
# Times a page reports (ms on a unit, on an item) may exceed the wall time since the claim by at most
# this much (clock and network jitter); beyond it they are refused.
QUEUE_TIME_SLACK_S = env_int("QUEUE_TIME_SLACK_S", 60, minimum=0)
if QUEUE_HEARTBEAT_SECONDS * 2 > QUEUE_LEASE_SECONDS:
    raise ImproperlyConfigured("QUEUE_HEARTBEAT_SECONDS must be at most half of QUEUE_LEASE_SECONDS")

# --- Human-baseline studies ----------------------------------------------------------------------
# A trial's reported response time may exceed the server's time since the page reported the trial
# visible by at most this much: the "shown" report travels one way before the server's clock starts,
# the answer one way after the page's clock stops, and the two trips need not take equally long.
STUDY_RT_SLACK_MS = env_int("STUDY_RT_SLACK_MS", 2000, minimum=0)
# An answer this much past a trial's time limit (server time since shown) still counts as in time:
# the answer's request needs a moment to arrive after the page's countdown ends.
STUDY_TIME_GRACE_MS = env_int("STUDY_TIME_GRACE_MS", 1500, minimum=0)
# The page has this long after a trial's content is served to report it visible (its images or
# first video loading). A later report is stamped at served + this, so a page cannot read the
# content first and start the clock when it likes; a trial never reported expires from there.
STUDY_SHOW_MAX_MS = env_int("STUDY_SHOW_MAX_MS", 10000, minimum=1000)
# Study links (issue 19): the address commands print links under, and how many link pages one
# client address may open per minute (Django's cache; set CACHE_URL so that every web process
# counts together). Beyond it a plain 429 page.
PUBLIC_BASE_URL = env_str("PUBLIC_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
if not PUBLIC_BASE_URL.startswith(("http://", "https://")):
    raise ImproperlyConfigured(f"PUBLIC_BASE_URL must start with http:// or https:// (got {PUBLIC_BASE_URL!r})")
STUDY_LINK_RATE_PER_MIN = env_int("STUDY_LINK_RATE_PER_MIN", 60, minimum=1)
CACHE_URL = env_str("CACHE_URL", "")
if CACHE_URL and not CACHE_URL.startswith(("redis://", "rediss://")):
    raise ImproperlyConfigured(f"CACHE_URL must be a redis:// URL (got {CACHE_URL!r})")
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# --- REST API ------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON bodies only: what the pages and scripts send, and what the schema documents.
    "DEFAULT_PARSER_CLASSES": ["api.parsers.JSONParser"],
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    "DEFAULT_SCHEMA_CLASS": "api.schema.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "api.pagination.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 100,
    "EXCEPTION_HANDLER": "api.exceptions.handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Video-QA annotation platform API",
    "DESCRIPTION": "Queues, verification, videos and exports. Token auth: `Authorization: Token <key>`.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Path parameters as the URL converters accept them (annotator.converters, Django's slug).
    "PATH_CONVERTER_OVERRIDES": {
        "id": {"type": "integer", "format": "int64", "minimum": 0, "maximum": 10**18 - 1},
        "slug": {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"},
    },
    # Two choice sets of fields named "source": named apart, so the schema builds without a warning.
    "ENUM_NAME_OVERRIDES": {
        "RatingSetSourceEnum": "annotator.agreement.models.RatingSet.Source",
        "VideoSourceEnum": "annotator.media.models.Video.Source",
    },
}

# --- Logging and request ids (``annotator.logging``) ---------------------------------------------
# LOG_FORMAT json (one JSON object a line, for log shippers) or text (for a terminal).
LOGGING = logging_config(env_str("LOG_LEVEL", "INFO"), env_str("LOG_FORMAT", "json"))
DJANGO_GUID = {
    "GUID_HEADER_NAME": "X-Request-ID",  # read from the request, returned on the response
    "VALIDATE_GUID": True,  # only a UUID (32 hex digits, dashes allowed) is taken from a client
    "INTEGRATIONS": [CeleryIntegration()],  # the id travels with the tasks a request queues
}

# --- Health (``annotator/health.py``, served at /health/ and /health/web/) --------------------------
# Container healthchecks call the server over plain HTTP from inside; never redirect them to HTTPS.
SECURE_REDIRECT_EXEMPT = [r"^health/"]
