"""Frames stored under their video's hash and time before issue 7 are renamed by content when
``migrate`` runs (``make demo`` reruns it on its old database), and new frames get content names."""

import hashlib
import importlib

from django.apps import apps
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from annotator.experiments.models import Element
from annotator.media.models import Video

migration = importlib.import_module("annotator.experiments.migrations.0003_frames_named_by_content")


def test_frames_named_by_time_are_renamed_by_content_and_the_old_files_go(project, django_capture_on_commit_callbacks):
    video = Video.objects.create(project=project, sha256="b" * 64, filename="v.mp4", status="ready", duration_s=30)
    old = {}
    for t, data in ((1.25, b"jpeg one"), (129.375, b"jpeg two")):
        name = default_storage.save(f"frames/{'b' * 16}/224/{t:09.3f}.jpg", ContentFile(data))
        old[Element.objects.create(kind="frame", video=video, t_s=t, size=224, image=name).pk] = (name, data)
    text = Element.objects.create(kind="text", text="a step")

    with django_capture_on_commit_callbacks(execute=True):
        migration.name_frames_by_content(apps, None)

    for pk, (name, data) in old.items():
        new = Element.objects.get(pk=pk).image.name
        assert new == f"frames/{hashlib.sha256(data).hexdigest()}.jpg"
        assert default_storage.open(new).read() == data
        assert not default_storage.exists(name)
    assert Element.objects.get(pk=text.pk).image.name == ""
    before = list(Element.objects.order_by("pk").values_list("image", flat=True))
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        migration.name_frames_by_content(apps, None)  # a second run finds nothing to do
    assert callbacks == [] and list(Element.objects.order_by("pk").values_list("image", flat=True)) == before
