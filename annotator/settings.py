"""Django settings: everything comes from the environment, parsed strictly (see ``annotator.env``).

With no environment at all the settings point at the project-local stack that ``make demo`` and
``make test`` start (PostgreSQL on 127.0.0.1:54329, Redis on 127.0.0.1:63799, media on local disk
under ``.local/media``). Set ``STORAGE_BACKEND=s3`` and the ``AWS_*`` variables for any
S3-compatible bucket.
"""

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from annotator.env import env_bool, env_float, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = env_str("DJANGO_SECRET_KEY", "local-only-insecure-key-set-DJANGO_SECRET_KEY-in-production")
DEBUG = env_bool("DJANGO_DEBUG", False)
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
    "annotator.projects",
    "annotator.media",
    "annotator.drafts",
    "annotator.qa",
    "annotator.experiments",
    "api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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
            ],
        },
    },
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
            if env_bool("POSTGRES_PREPARED_STATEMENTS", True) else {}
        ),
    }
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

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
        },
    }
    if not _default_storage["OPTIONS"]["bucket_name"]:
        raise ImproperlyConfigured("STORAGE_BACKEND=s3 needs AWS_STORAGE_BUCKET_NAME")
else:
    raise ImproperlyConfigured(f"STORAGE_BACKEND must be 'local' or 's3', got {STORAGE_BACKEND!r}")

STORAGES = {
    "default": _default_storage,
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- Celery ------------------------------------------------------------------------------------
REDIS_PORT = env_int("REDIS_PORT", 63799, minimum=1)
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", f"redis://127.0.0.1:{REDIS_PORT}/0")
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", f"redis://127.0.0.1:{REDIS_PORT}/1")
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 3600, minimum=1)
# A broker that is down makes .delay() raise after this many seconds instead of hanging.
CELERY_BROKER_CONNECTION_TIMEOUT = 5
CELERY_BROKER_TRANSPORT_OPTIONS = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5}

# --- Media processing --------------------------------------------------------------------------
MEDIA_MAX_UPLOAD_BYTES = env_int("MEDIA_MAX_UPLOAD_BYTES", 8 * 1024**3, minimum=1)
MEDIA_RENDITION_MAX_HEIGHT = env_int("MEDIA_RENDITION_MAX_HEIGHT", 720, minimum=16)
MEDIA_PROBE_TIMEOUT_S = env_float("MEDIA_PROBE_TIMEOUT_S", 60.0, minimum=1.0)

# --- Model server (any OpenAI-compatible endpoint) ----------------------------------------------
LLM_BASE_URL = env_str("LLM_BASE_URL", "http://127.0.0.1:8001/v1")
LLM_API_KEY = env_str("LLM_API_KEY", "not-needed")
LLM_MODEL = env_str("LLM_MODEL", "local-model")
LLM_TIMEOUT_S = env_float("LLM_TIMEOUT_S", 120.0, minimum=1.0)
LLM_FRAMES = env_int("LLM_FRAMES", 6, minimum=1)
LLM_WINDOWS = env_int("LLM_WINDOWS", 3, minimum=1)  # windows per video for QA types with a window clip policy
LLM_MAX_ATTEMPTS = env_int("LLM_MAX_ATTEMPTS", 4, minimum=1)

# --- Queues --------------------------------------------------------------------------------------
# Leases are short and renewed by the page's heartbeat, so a closed page frees its unit within a
# lease; the heartbeat interval must be well under the lease.
QUEUE_LEASE_SECONDS = env_int("QUEUE_LEASE_SECONDS", 120, minimum=5)
QUEUE_HEARTBEAT_SECONDS = env_int("QUEUE_HEARTBEAT_SECONDS", 30, minimum=1)
if QUEUE_HEARTBEAT_SECONDS * 2 > QUEUE_LEASE_SECONDS:
    raise ImproperlyConfigured("QUEUE_HEARTBEAT_SECONDS must be at most half of QUEUE_LEASE_SECONDS")

# --- Human-baseline studies ----------------------------------------------------------------------
# A trial's reported response time may exceed the server's time since the page reported the trial
# visible by at most this much: the "shown" report travels one way before the server's clock starts,
# the answer one way after the page's clock stops, and the two trips need not take equally long.
ORDERING_RT_SLACK_MS = env_int("ORDERING_RT_SLACK_MS", 2000, minimum=0)

# --- REST API ------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    "EXCEPTION_HANDLER": "api.exceptions.handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Video-QA annotation platform API",
    "DESCRIPTION": "Queues, verification, videos and exports. Token auth: `Authorization: Token <key>`.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
