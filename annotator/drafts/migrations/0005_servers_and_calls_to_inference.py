"""ModelServer and ModelCall leave drafts' state: inference.0001 holds them now (issue 18).
State only: the tables and every row stay (inference.0002 renames the tables)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("drafts", "0004_key_env_rule"),
        ("inference", "0001_initial"),
        ("evaluation", "0005_servers_and_calls_in_inference"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ModelCall"), migrations.DeleteModel(name="ModelServer")],
            database_operations=[],
        )
    ]
