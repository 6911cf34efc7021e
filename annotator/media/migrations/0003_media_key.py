"""Each video stores the name of its media folders (``Video.media_key``, issue 20): its rendition,
poster, HLS and thumbnails live under ``<kind>/<media_key>/``.

A video whose files are already in a folder named by its handle (stored since handles, under the
``SECRET_KEY`` of the time) keeps that name: nothing moves. Any other video (files in a folder named
by its row id, stored before handles, or no files yet) gets 13 random letters; its old files are moved
by ``manage.py relocate_media``, and until then its media URLs are not served."""

import re

from django.db import migrations, models

import annotator.core.handles

_FOLDER = re.compile(r"^(?:renditions|hls|thumbs)/(" + annotator.core.handles.PATTERN + r")/")


def fill(apps, schema_editor):
    Video = apps.get_model("media", "Video")
    taken: set[str] = set()
    batch = []
    for video in Video.objects.only("id", "rendition", "poster", "hls", "thumbnails_vtt").order_by("id").iterator(2000):
        names = [str(getattr(video, f)) for f in ("rendition", "poster", "hls", "thumbnails_vtt")]
        found = {m.group(1) for m in (_FOLDER.match(n) for n in names if n) if m}
        key = found.pop() if len(found) == 1 and not any(n and not _FOLDER.match(n) for n in names) else None
        while key is None or key in taken:
            key = annotator.core.handles.random_key()
        taken.add(key)
        video.media_key = key
        batch.append(video)
        if len(batch) == 2000:
            Video.objects.bulk_update(batch, ["media_key"])
            batch = []
    Video.objects.bulk_update(batch, ["media_key"])


class Migration(migrations.Migration):
    dependencies = [("media", "0002_hls_multiview_lifelog")]

    operations = [
        migrations.AddField(model_name="video", name="media_key", field=models.CharField(max_length=13, null=True)),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="video",
            name="media_key",
            field=models.CharField(
                default=annotator.core.handles.random_key,
                editable=False,
                max_length=13,
                unique=True,
                help_text="The name of the folders of its rendition, poster, HLS and thumbnails "
                "(media.streaming.media_key): 13 random letters, so a media URL says nothing of the "
                "video's id or age (issue 20).",
            ),
        ),
    ]
