"""Units submitted before the review app existed enter review too: each real unit's last completed
deciding pass (first pass, double-check or rework) becomes its ``ReviewState`` (``submitted``), in
one statement."""

from django.db import migrations

BACKFILL = """
INSERT INTO review_reviewstate (unit_id, project_id, state, item_id, annotator_id, submitted_at, updated_at)
SELECT DISTINCT ON (i.unit_id) i.unit_id, i.project_id,
       CASE WHEN i.kind = 'rework' THEN 'resubmitted' ELSE 'submitted' END,
       i.id, i.completed_by_id, COALESCE(i.completed_at, i.created_at), now()
FROM qa_queueitem i JOIN qa_workunit u ON u.id = i.unit_id
WHERE i.status = 'done' AND i.kind IN ('first_pass', 'double_check', 'rework') AND u.purpose = 'real'
  AND i.completed_by_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM review_reviewstate s WHERE s.unit_id = i.unit_id)
ORDER BY i.unit_id, COALESCE(i.completed_at, i.created_at) DESC, i.id DESC"""


class Migration(migrations.Migration):
    dependencies = [("review", "0001_initial")]

    operations = [migrations.RunSQL(BACKFILL, reverse_sql=migrations.RunSQL.noop)]
