"""Gold copies are settled as the real units around them (``services.settle_gold``): a round keeps
the size of its pool, a state whether the double-check draw chose its gold copy. Gold copies
submitted before they were put in review (issue 20's first stops) get their state now, as the
submit gives it (``submitted``), so they are settled with the rest."""

from django.db import migrations, models

BACKFILL = """
INSERT INTO review_reviewstate (unit_id, project_id, state, item_id, annotator_id, submitted_at, updated_at,
                                check_drawn)
SELECT DISTINCT ON (i.unit_id) i.unit_id, i.project_id, 'submitted', i.id, i.completed_by_id,
       COALESCE(i.completed_at, i.created_at), now(), false
FROM qa_queueitem i JOIN qa_workunit u ON u.id = i.unit_id
WHERE i.status = 'done' AND i.kind = 'first_pass' AND u.purpose = 'gold' AND i.completed_by_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM review_reviewstate s WHERE s.unit_id = i.unit_id)
ORDER BY i.unit_id, COALESCE(i.completed_at, i.created_at) DESC, i.id DESC"""


class Migration(migrations.Migration):
    dependencies = [("review", "0002_backfill_states")]

    operations = [
        migrations.AddField(
            model_name="reviewround",
            name="pool",
            field=models.PositiveIntegerField(
                blank=True,
                help_text="Units awaiting review when it opened, the sample's pool (gold copies are settled in the same share when it closes: services.settle_gold).",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="reviewstate",
            name="check_drawn",
            field=models.BooleanField(
                db_default=False,
                default=False,
                help_text="A gold copy the double-check draw chose: it answers as a real unit whose double-check is open until it is settled (services.settle_gold).",
            ),
        ),
        migrations.RunSQL(BACKFILL, reverse_sql=migrations.RunSQL.noop),
    ]
