"""Local files for the tools that need a path (ffmpeg, zip writers): a stored file's local path, and
temporary work folders under ``MEDIA_WORK_DIR``, whether the storage is a local folder or a bucket."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.files.storage import default_storage


def on_local_disk() -> bool:
    """Whether the default storage is a local folder (it has filesystem paths), not a bucket."""
    try:
        default_storage.path("probe")
    except NotImplementedError:
        return False
    return True


COPY_CHUNK = 1 << 20  # bytes


@contextmanager
def local_copy(name: str) -> Iterator[Path]:
    """A local filesystem path for a stored file: the file itself on disk storage, else a temporary
    copy under ``MEDIA_WORK_DIR``, removed on exit.

    From an S3 bucket the object is streamed to that file by one GET, 1 MiB at a time (never whole
    in memory: django-storages' own ``open`` reads an object into a spooled buffer that stays in
    memory unless ``AWS_S3_MAX_MEMORY_SIZE`` is set, and boto3's managed download buffers parts of
    several ranges at once, 32 MiB of a 48 MiB object here). Raises FileNotFoundError when
    the object is missing, OSError on other storage errors."""
    try:
        yield Path(default_storage.path(name))
        return
    except NotImplementedError:
        pass
    suffix = Path(name).suffix
    with tempfile.NamedTemporaryFile(suffix=suffix, dir=work_root()) as tmp:
        if hasattr(default_storage, "bucket_name"):  # storages.backends.s3.S3Storage
            from botocore.exceptions import ClientError

            # The storage's connection is per thread (exports cut clips from several threads).
            client = default_storage.connection.meta.client
            try:
                body = client.get_object(Bucket=default_storage.bucket_name, Key=default_storage._normalize_name(name))[
                    "Body"
                ]
                with body:
                    shutil.copyfileobj(body, tmp, COPY_CHUNK)
            except ClientError as exc:
                code = exc.response.get("Error", {}).get("Code", "")
                if code in ("404", "NoSuchKey"):
                    raise FileNotFoundError(f"no such object in the bucket: {name}") from None
                raise OSError(f"storage error reading {name}: {code or exc}") from None
        else:
            with default_storage.open(name, "rb") as src:
                shutil.copyfileobj(src, tmp)
        tmp.flush()
        yield Path(tmp.name)


def work_root() -> Path:
    """The folder for temporary media files (``MEDIA_WORK_DIR``), created if missing."""
    root = Path(settings.MEDIA_WORK_DIR)
    root.mkdir(parents=True, exist_ok=True)
    return root


@contextmanager
def work_dir(prefix: str) -> Iterator[Path]:
    """A fresh temporary folder named ``prefix`` + random under ``MEDIA_WORK_DIR``, removed on exit.

    Folders left by an earlier run of the same work (a worker killed mid-task, which no ``finally``
    survives) are removed first, so a redelivered task cleans up after the one that died."""
    root = work_root()
    for stale in root.glob(f"{prefix}*"):
        shutil.rmtree(stale, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix=prefix, dir=root) as path:
        yield Path(path)
