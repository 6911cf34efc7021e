"""tests/fast_flush.py, the end of every transactional test: it leaves every table of Django's models
empty (those with triggers that refuse DELETE too) but the content types and permissions, as Django's
flush and post_migrate do."""

import pytest
from django.db import connection
from django.test import TransactionTestCase

from tests import fast_flush


def _counts() -> dict[str, int]:
    tables = sorted(connection.introspection.django_table_names(only_existing=True, include_views=False))
    with connection.cursor() as cursor:
        cursor.execute(
            " UNION ALL ".join(f"SELECT %s, count(*) FROM {connection.ops.quote_name(t)}" for t in tables), tables
        )
        return dict(cursor.fetchall())


@pytest.mark.django_db(transaction=True)
def test_a_transactional_test_ends_with_every_table_empty_but_the_content_types_and_permissions(make_unit, annotator):
    from annotator.exposure import ledger
    from annotator.studies import services as study_services
    from annotator.studies.models import Condition, Item, Study

    assert TransactionTestCase._fixture_teardown is fast_flush._fixture_teardown
    kept = {t: n for t, n in _counts().items() if t in fast_flush.KEPT}
    unit = make_unit(n_open=2)
    study = Study.objects.create(project=unit.project, name="flush", kind="mcq", questions_per_participant=2)
    condition = Condition.objects.create(study=study, number=1, label="quick", time_limit_s=60)
    for index in range(2):
        Item.objects.create(
            condition=condition,
            index=index,
            key=f"qa:{index}",
            truth=0,
            payload={"question": "Which?", "options": ["a", "b", "c"], "media": []},
        )
    study_services.start(study_services.enroll(study, annotator))
    ledger.record(
        "someone",
        unit.project_id,
        [ledger.Shown(kind="footage", video_id=unit.video_id)],
        source="queue",
        ref=f"unit:{unit.pk}",
    )
    before = _counts()
    # The tables with triggers of their own: qa_revision and exposure_exposure refuse DELETE.
    assert all(
        before[t] > 0
        for t in (
            "qa_revision",
            "exposure_exposure",
            "studies_trial",
            "studies_participant_conditions",
            "qa_qapair",
            "projects_project",
            "auth_user",
        )
    )

    emptied = fast_flush.empty_tables()

    assert emptied == sorted(t for t, n in before.items() if n and t not in fast_flush.KEPT)
    assert {t: n for t, n in _counts().items() if n} == kept and all(kept.values())
