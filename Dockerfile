# One image for both the web server (gunicorn) and the Celery worker; see docker-compose.yml.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# ffmpeg (and ffprobe) for probing and transcoding uploaded videos.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ffmpeg \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app

# Production packages only: pytest, Playwright and the other test-only pins are in
# requirements-test.txt, which is not even copied in (.dockerignore).
COPY requirements.txt .
RUN pip install -r requirements.txt

# Code stays root-owned (read-only for the app user); only static and media dirs are writable.
COPY . .
RUN groupadd --system app \
    && useradd --system --gid app --home-dir /app --no-create-home --shell /usr/sbin/nologin app \
    && mkdir -p /app/staticfiles /data/media \
    && chown app:app /app/staticfiles /data/media

# Settings read these (annotator/settings.py); compose sets them too.
ENV DJANGO_SETTINGS_MODULE=annotator.settings \
    STATIC_ROOT=/app/staticfiles \
    MEDIA_ROOT=/data/media

USER app
EXPOSE 8000

# Logs: JSON lines on stderr (LOG_FORMAT=text for a terminal), each with its request and task ids.
CMD ["gunicorn", "annotator.wsgi", "--bind", "0.0.0.0:8000", "--workers", "2", "--threads", "4", \
     "--access-logfile", "-", "--error-logfile", "-"]
