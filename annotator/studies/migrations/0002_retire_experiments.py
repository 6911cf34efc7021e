"""The ``experiments`` app (frame ordering only) is replaced by ``studies`` (issue 8). Nothing was
deployed, so its data are not carried over: a database that had it loses its tables (their foreign
keys to videos would otherwise block deleting a video), its migration records, content types and
permissions, and its scoring jobs (their task name no longer exists, so a worker could only refuse
them). On a fresh database there is nothing to do."""

from django.db import migrations

TABLES = [
    "experiments_trial",
    "experiments_prediction",
    "experiments_participant_conditions",
    "experiments_participant",
    "experiments_item",
    "experiments_element",
    "experiments_clip",
    "experiments_condition",
    "experiments_experiment",
]


def retire(apps, schema_editor):
    connection = schema_editor.connection
    existing = set(connection.introspection.table_names())
    with connection.cursor() as cursor:
        for table in TABLES:
            if table in existing:
                cursor.execute(f"DROP TABLE {table} CASCADE")
        old_types = "SELECT id FROM django_content_type WHERE app_label = 'experiments'"
        for table in ("django_admin_log", "auth_group_permissions", "auth_user_user_permissions"):
            if table in existing:
                column = "content_type_id" if table == "django_admin_log" else "permission_id"
                source = (
                    old_types
                    if table == "django_admin_log"
                    else f"SELECT id FROM auth_permission WHERE content_type_id IN ({old_types})"
                )
                cursor.execute(f"DELETE FROM {table} WHERE {column} IN ({source})")
        if "auth_permission" in existing:
            cursor.execute(f"DELETE FROM auth_permission WHERE content_type_id IN ({old_types})")
        if "django_content_type" in existing:
            cursor.execute("DELETE FROM django_content_type WHERE app_label = 'experiments'")
        cursor.execute("DELETE FROM django_migrations WHERE app = 'experiments'")
    apps.get_model("core", "Job").objects.filter(task="experiments.score").delete()


class Migration(migrations.Migration):
    dependencies = [("studies", "0001_initial"), ("core", "0002_adopt_stranded_work")]

    operations = [migrations.RunPython(retire, migrations.RunPython.noop)]
