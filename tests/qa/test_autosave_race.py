"""An autosave that races a submit of the same unit (another tab, or the page's last save arriving
late) must leave no save behind once the submit commits: the save is the person's unfinished work,
so one left on a done item would count their time twice and show as work they lost (review of
the two-statement autosave of issue 22's load work)."""

import threading

import psycopg
import pytest
from django.db import connection

from annotator.errors import Conflict
from annotator.qa.models import Autosave, QueueItem
from annotator.qa.queue import claim_next
from annotator.qa.services import autosave

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_autosave_waiting_on_a_running_submit_writes_nothing_and_says_the_unit_was_submitted(
    make_unit, project, annotator
):
    make_unit(n_open=1)
    item = claim_next(project, annotator)
    assert autosave(item.unit_id, annotator, {"v": 1}, client_saved_at_ms=1) == item.pk
    db = connection.settings_dict
    submit = psycopg.connect(
        dbname=db["NAME"], user=db["USER"], password=db["PASSWORD"], host=db["HOST"], port=db["PORT"]
    )
    try:
        # What a submit does before it commits: the item locked and done, the person's save deleted.
        submit.execute("SELECT id FROM qa_queueitem WHERE id = %s FOR UPDATE", [item.pk])
        submit.execute(
            "UPDATE qa_queueitem SET status = 'done', leased_by_id = NULL, lease_expires_at = NULL WHERE id = %s",
            [item.pk],
        )
        submit.execute("DELETE FROM qa_autosave WHERE item_id = %s", [item.pk])
        commit = threading.Timer(0.5, submit.commit)  # the submit commits while the save waits on it
        commit.start()
        with pytest.raises(Conflict, match="already submitted"):
            autosave(item.unit_id, annotator, {"v": 2}, client_saved_at_ms=2)
        commit.join()
    finally:
        submit.close()
    assert QueueItem.objects.get(pk=item.pk).status == "done"
    assert not Autosave.objects.filter(item_id=item.pk).exists()
