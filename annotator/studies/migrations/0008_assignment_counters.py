"""Counters the enrolment reads under the study's lock instead of counting (issue 19's benchmark):
``Item.raters`` (person participants with a trial of the item) and ``Condition.people`` (person
participants given the condition), kept by statement-level triggers in the statement that inserts
or deletes the rows they count, whoever runs it (the application, the admin, a cascade, a SQL
shell), and filled from the rows there are. Each trigger locks the rows it updates in id order
first, so two statements updating the same items in different orders (an enrolment and a
release) wait for each other instead of deadlocking.

Also ``studies_scoring_queued``: ``services.queue_scoring``'s two steps in one statement (take the
shared advisory lock, then read whether the scoring job is queued in a snapshot taken after the
lock was granted: a VOLATILE function's queries each take a fresh snapshot in READ COMMITTED).
"""

from django.db import migrations, models

COUNTERS = """
CREATE FUNCTION studies_count_raters() RETURNS trigger AS $$
DECLARE
    step integer := CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END;
BEGIN
    PERFORM 1 FROM studies_item WHERE id IN (
        SELECT c.item_id FROM changed c JOIN studies_participant p ON p.id = c.participant_id WHERE p.kind = 'person')
        ORDER BY id FOR NO KEY UPDATE;
    UPDATE studies_item i SET raters = i.raters + step * d.n
    FROM (SELECT c.item_id, count(*) AS n FROM changed c JOIN studies_participant p ON p.id = c.participant_id
          WHERE p.kind = 'person' GROUP BY c.item_id) d
    WHERE i.id = d.item_id;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER studies_trial_raters_insert AFTER INSERT ON studies_trial
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION studies_count_raters();
CREATE TRIGGER studies_trial_raters_delete AFTER DELETE ON studies_trial
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION studies_count_raters();

CREATE FUNCTION studies_count_people() RETURNS trigger AS $$
DECLARE
    step integer := CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END;
BEGIN
    PERFORM 1 FROM studies_condition WHERE id IN (
        SELECT c.condition_id FROM changed c JOIN studies_participant p ON p.id = c.participant_id WHERE p.kind = 'person')
        ORDER BY id FOR NO KEY UPDATE;
    UPDATE studies_condition k SET people = k.people + step * d.n
    FROM (SELECT c.condition_id, count(*) AS n FROM changed c JOIN studies_participant p ON p.id = c.participant_id
          WHERE p.kind = 'person' GROUP BY c.condition_id) d
    WHERE k.id = d.condition_id;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER studies_membership_people_insert AFTER INSERT ON studies_participant_conditions
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION studies_count_people();
CREATE TRIGGER studies_membership_people_delete AFTER DELETE ON studies_participant_conditions
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION studies_count_people();

UPDATE studies_item i SET raters = d.n
FROM (SELECT t.item_id, count(*) AS n FROM studies_trial t JOIN studies_participant p ON p.id = t.participant_id
      WHERE p.kind = 'person' GROUP BY t.item_id) d
WHERE i.id = d.item_id;
UPDATE studies_condition k SET people = d.n
FROM (SELECT m.condition_id, count(*) AS n FROM studies_participant_conditions m
      JOIN studies_participant p ON p.id = m.participant_id WHERE p.kind = 'person' GROUP BY m.condition_id) d
WHERE k.id = d.condition_id;

CREATE FUNCTION studies_scoring_queued(namespace integer, study integer, job_key text) RETURNS boolean AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(namespace, study);
    RETURN EXISTS (SELECT 1 FROM core_job WHERE key = job_key AND status = 'queued');
END;
$$ LANGUAGE plpgsql VOLATILE;
"""
DROP_COUNTERS = """
DROP FUNCTION IF EXISTS studies_scoring_queued(integer, integer, text);
DROP TRIGGER IF EXISTS studies_membership_people_insert ON studies_participant_conditions;
DROP TRIGGER IF EXISTS studies_membership_people_delete ON studies_participant_conditions;
DROP FUNCTION IF EXISTS studies_count_people();
DROP TRIGGER IF EXISTS studies_trial_raters_insert ON studies_trial;
DROP TRIGGER IF EXISTS studies_trial_raters_delete ON studies_trial;
DROP FUNCTION IF EXISTS studies_count_raters();
"""


class Migration(migrations.Migration):
    dependencies = [("core", "0002_adopt_stranded_work"), ("studies", "0007_study_links")]

    operations = [
        migrations.AddField(
            model_name="condition",
            name="people",
            field=models.PositiveIntegerField(
                default=0, editable=False, help_text="Person participants given this condition (kept by a trigger)."
            ),
        ),
        migrations.AddField(
            model_name="item",
            name="raters",
            field=models.PositiveIntegerField(
                default=0,
                editable=False,
                help_text="Person participants with a trial of this item (kept by a trigger).",
            ),
        ),
        migrations.RunSQL(COUNTERS, DROP_COUNTERS),
    ]
