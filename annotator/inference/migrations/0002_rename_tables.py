"""Rename the tables drafts made to inference's own names (issue 18): ``drafts_modelserver`` ->
``inference_modelserver``, ``drafts_modelcall`` -> ``inference_modelcall``. One ALTER TABLE ...
RENAME each: rows, ids, indexes and the foreign keys pointing at them are kept as they are."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("inference", "0001_initial"), ("drafts", "0005_servers_and_calls_to_inference")]

    operations = [
        migrations.AlterModelTable(name="modelserver", table=None),
        migrations.AlterModelTable(name="modelcall", table=None),
    ]
