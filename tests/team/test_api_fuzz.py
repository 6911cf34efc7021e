"""schemathesis over the team API's two operations (as tests/api/test_schema_fuzz.py does for all):
no 5xx, documented statuses and bodies, with an admin's and an annotator's token."""

import pytest
import schemathesis

from tests.api.test_schema_fuzz import _fuzz, fuzz_data, session  # noqa: F401 (fixtures)


@pytest.fixture
def worked(fuzz_data):  # noqa: F811
    """fuzz_data with a pay rate, so the report has amounts."""
    from annotator.projects.models import Project
    from annotator.team.services import set_rate

    set_rate(Project.objects.get(slug=fuzz_data["slug"]), basis="hour", amount="18", currency="EUR")
    return fuzz_data


@pytest.mark.parametrize("who", ["admin", "annotator"])
def test_the_team_api_answers_every_generated_request_as_documented(worked, live_server, session, who):  # noqa: F811
    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/schema/?format=json").include(
        path_regex=r"/api/projects/\{slug\}/(annotators|pay)/$"
    )
    assert sorted(r.ok().label for r in schema.get_all_operations()) == [
        "GET /api/projects/{slug}/annotators/",
        "GET /api/projects/{slug}/pay/",
    ]
    cases, failures = _fuzz(schema, session, live_server.url, worked["tokens"][who], worked)
    assert not failures, "\n\n".join(failures)
    assert cases >= 2 * 2 * 5
