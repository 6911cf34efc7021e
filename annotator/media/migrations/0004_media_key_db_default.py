"""A database default for ``Video.media_key``, for rows written without Django's default: the
historical models of data-migration tests stepped back to before the key, and raw SQL. Django's
own inserts always bring ``core.handles.random_key`` (64 bits from ``secrets``); this default is 12
letters of an md5 of ``random()`` and the clock mapped into the handle alphabet, and ``a``: random
enough for a folder name that must not tell the video's id or age, and of the same shape."""

from django.db import migrations

DEFAULT = "(translate(substr(md5(random()::text || clock_timestamp()::text), 1, 12), '0189', 'wxyz') || 'a')"


class Migration(migrations.Migration):
    dependencies = [("media", "0003_media_key")]

    operations = [
        migrations.RunSQL(
            f"ALTER TABLE media_video ALTER COLUMN media_key SET DEFAULT {DEFAULT}",
            "ALTER TABLE media_video ALTER COLUMN media_key DROP DEFAULT",
        )
    ]
