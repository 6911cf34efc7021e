"""ModelServer and ModelCall move from drafts to inference (issue 18), keeping their tables and rows.

State only: the models are created here on the tables drafts made (``drafts_modelserver``,
``drafts_modelcall``); ``drafts.0005`` removes them from drafts' state, and ``inference.0002``
renames the tables to inference's names. No row is copied or touched.
"""

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models

import annotator.inference.models


class Migration(migrations.Migration):
    initial = True

    dependencies = [("drafts", "0004_key_env_rule"), ("projects", "0001_initial")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ModelServer",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.SlugField(max_length=64)),
                        (
                            "base_url",
                            models.URLField(
                                max_length=500, validators=[annotator.inference.models.no_credentials_in_url]
                            ),
                        ),
                        ("model", models.CharField(max_length=200)),
                        (
                            "key_env",
                            models.CharField(
                                blank=True,
                                help_text="Environment variable holding the API key.",
                                max_length=100,
                                validators=[
                                    django.core.validators.RegexValidator(
                                        "^[A-Z][A-Z0-9_]*_API_KEY$",
                                        "an environment variable name in capitals ending in _API_KEY, e.g. OPENAI_API_KEY",
                                    )
                                ],
                            ),
                        ),
                        (
                            "concurrency",
                            models.PositiveIntegerField(
                                default=4,
                                validators=[
                                    django.core.validators.MinValueValidator(1),
                                    django.core.validators.MaxValueValidator(256),
                                ],
                            ),
                        ),
                        (
                            "price_prompt_per_mtok",
                            models.FloatField(
                                default=0.0,
                                help_text="USD per million prompt tokens.",
                                validators=[
                                    django.core.validators.MinValueValidator(0.0),
                                    django.core.validators.MaxValueValidator(10000.0),
                                ],
                            ),
                        ),
                        (
                            "price_completion_per_mtok",
                            models.FloatField(
                                default=0.0,
                                help_text="USD per million completion tokens.",
                                validators=[
                                    django.core.validators.MinValueValidator(0.0),
                                    django.core.validators.MaxValueValidator(10000.0),
                                ],
                            ),
                        ),
                        (
                            "timeout_s",
                            models.FloatField(
                                default=120.0,
                                help_text="Seconds to wait for one reply.",
                                validators=[
                                    django.core.validators.MinValueValidator(1.0),
                                    django.core.validators.MaxValueValidator(3600.0),
                                ],
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="model_servers",
                                to="projects.project",
                            ),
                        ),
                    ],
                    options={"ordering": ["name"], "db_table": "drafts_modelserver"},
                ),
                migrations.CreateModel(
                    name="ModelCall",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("stage", models.CharField(blank=True, max_length=40)),
                        ("prompt_version", models.CharField(blank=True, max_length=50)),
                        ("attempt", models.IntegerField()),
                        ("model", models.CharField(max_length=200)),
                        (
                            "request",
                            models.JSONField(
                                help_text="The stage's input: prompt text and frame timestamps (images are not stored)."
                            ),
                        ),
                        ("raw_output", models.TextField(blank=True)),
                        (
                            "output",
                            models.JSONField(
                                blank=True, help_text="The validated answer (null when it failed).", null=True
                            ),
                        ),
                        ("cache_key", models.CharField(blank=True, db_index=True, max_length=64)),
                        (
                            "cost_usd",
                            models.FloatField(
                                blank=True, help_text="Estimated from tokens and the server's prices.", null=True
                            ),
                        ),
                        ("retry_after_s", models.FloatField(blank=True, null=True)),
                        ("prompt_tokens", models.IntegerField(blank=True, null=True)),
                        ("completion_tokens", models.IntegerField(blank=True, null=True)),
                        ("latency_ms", models.IntegerField(blank=True, null=True)),
                        ("error", models.TextField(blank=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "cached_from",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to="inference.modelcall",
                            ),
                        ),
                        (
                            "job",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="calls",
                                to="drafts.draftjob",
                            ),
                        ),
                        (
                            "project",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="model_calls",
                                to="projects.project",
                            ),
                        ),
                        (
                            "server",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="calls",
                                to="inference.modelserver",
                            ),
                        ),
                    ],
                    options={"ordering": ["id"], "db_table": "drafts_modelcall"},
                ),
                migrations.AddConstraint(
                    model_name="modelserver",
                    constraint=models.UniqueConstraint(fields=("project", "name"), name="modelserver_unique_name"),
                ),
            ],
            database_operations=[],
        )
    ]
