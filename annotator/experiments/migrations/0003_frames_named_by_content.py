"""Rename frame images stored under their video's hash and timestamp
(``frames/<sha16>/224/00129.375.jpg``, before issue 7) to their content name
(``frames/<SHA-256 of the bytes>.jpg``), so a database built before the fix stops leaking each
frame's time through its URL. ``make demo`` reuses its database on a rerun and runs ``migrate``
first, so a rerun on an old database ends clean. The old files are removed once the migration's
transaction commits (a failed migration leaves them in place, still named by the rows).

Frozen here on purpose, not imported from ``services``: a migration must keep doing what it did
when ``services`` changes.
"""

import hashlib
import re

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import migrations, transaction

CONTENT_NAME = re.compile(r"^frames/[0-9a-f]{64}\.jpg$")


def name_frames_by_content(apps, schema_editor):
    Element = apps.get_model("experiments", "Element")
    retired = []
    for pk, name in Element.objects.filter(kind="frame").exclude(image="").values_list("pk", "image").iterator():
        if CONTENT_NAME.match(name) or not default_storage.exists(name):
            continue
        with default_storage.open(name, "rb") as fh:
            data = fh.read()
        new = f"frames/{hashlib.sha256(data).hexdigest()}.jpg"
        if not default_storage.exists(new):
            new = default_storage.save(new, ContentFile(data))
        Element.objects.filter(pk=pk).update(image=new)
        retired.append(name)
    if retired:
        transaction.on_commit(lambda: [default_storage.delete(n) for n in retired])


class Migration(migrations.Migration):
    dependencies = [("experiments", "0002_trial_shown_at")]

    operations = [migrations.RunPython(name_frames_by_content, migrations.RunPython.noop, elidable=False)]
