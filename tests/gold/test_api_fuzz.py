"""schemathesis over the gold operations only (the whole schema's run is tests/api/test_schema_fuzz.py),
with an admin's and an annotator's token, paths naming a real pause and the project: no 5xx, only
documented status codes and bodies."""

import pytest

from annotator.gold.models import Pause, Standing
from tests.api.test_schema_fuzz import _fuzz, _token, session  # noqa: F401 (session: a fixture)


@pytest.fixture
def gold_fuzz_data(transactional_db, project):
    from django.contrib.auth import get_user_model

    tokens = {
        "admin": _token("fuzz-admin", "admin", project),
        "annotator": _token("fuzz-annotator", "annotator", project),
    }
    annotator = get_user_model().objects.get(username="fuzz-annotator")
    Standing.objects.create(project=project, user=annotator, paused=True)
    pause = Pause.objects.create(project=project, user=annotator, reason="test", accuracy=0.5, window=10, threshold=0.8)
    return {"tokens": tokens, "slug": project.slug, "ids": [pause.pk, annotator.pk]}


@pytest.mark.parametrize("who", ["admin", "annotator"])
def test_the_gold_operations_answer_no_5xx_and_nothing_off_the_schema(gold_fuzz_data, live_server, session, who):
    import schemathesis

    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/schema/?format=json").include(
        path_regex=r"/(gold|qualification)/"
    )
    assert len(list(schema.get_all_operations())) == 6
    cases, failures = _fuzz(schema, session, live_server.url, gold_fuzz_data["tokens"][who], gold_fuzz_data)
    assert not failures, "\n\n".join(failures)
    assert cases >= 6 * 2 * 5
