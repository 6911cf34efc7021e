"""The evaluation's server and call references now name inference's models (issue 18). State only:
the foreign keys already point at these tables (inference.0002 renames them; PostgreSQL's
constraints follow a renamed table)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0004_study_items_and_ablations"), ("inference", "0001_initial")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="evaluation",
                    name="judge_server",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="inference.modelserver",
                    ),
                ),
                migrations.AlterField(
                    model_name="evaluation",
                    name="server",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="inference.modelserver",
                    ),
                ),
                migrations.AlterField(
                    model_name="prediction",
                    name="judge_call",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="inference.modelcall",
                    ),
                ),
                migrations.AlterField(
                    model_name="prediction",
                    name="predict_call",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="inference.modelcall",
                    ),
                ),
            ],
            database_operations=[],
        )
    ]
