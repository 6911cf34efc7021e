"""schemathesis over the whole OpenAPI schema, against the real app on a live server.

The app serves /api/schema/; schemathesis (Python API, Hypothesis underneath) generates requests for
every operation, data that fits the schema (positive) and data that does not (negative), sent with
an admin's token and with an annotator's token. Half of the generated requests name real rows (the
project's slug, its units, QA pairs, studies and trials), so the views get past the 404 of an
unknown id and into validation and the services. Every response must pass schemathesis' checks: no
5xx, a documented status code, a documented content type, and a body matching the documented schema.

Bounded in time: ``MAX_EXAMPLES`` per operation and mode, derandomized so a run is reproducible.
"""

from __future__ import annotations

import time
from io import StringIO

import pytest
import requests
import schemathesis
from django.core.management import call_command
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from annotator.qa.models import QAPair
from annotator.qa.queue import claim_next
from annotator.qa.services import ensure_qa_type
from annotator.studies import services as study_services
from annotator.studies.models import Condition, Element, Item, Study, Trial

# Examples per operation and generation mode: 5 gives 700 cases a token (every operation of the schema, both
# modes; 192 s at load 10-15 on 2 cores). 10 gave about twice as many (92 s a token in a full run at lower load),
# for both tokens. A review runs many more once (issue 19's: 56,796 cases); here every
# operation, both modes, both tokens and all four checks run on every `make test`.
MAX_EXAMPLES = 5
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def _token(name: str, role: str, project) -> str:
    out = StringIO()
    call_command("createuser", name, "--role", role, "--project", project.slug, "--token", stdout=out)
    return out.getvalue().strip()


def _studies(project, video, participant_user) -> list[Study]:
    """A small ordering study (one 4-frame condition, 4 items, 1 practice item) and a timed
    multiple-choice study (2 items), with ``participant_user`` enrolled in both and past the
    instructions, so trials exist."""
    order = Study.objects.create(
        project=project,
        name="fuzz",
        kind="ordering",
        questions_per_participant=3,
        conditions_per_participant=1,
        practice_items=1,
    )
    cond = Condition.objects.create(
        study=order,
        number=1,
        label="baseline",
        baseline=True,
        variables={"n_frames": 4, "clip_length": "medium", "annotation": "none", "hints": [], "item_kind": "texts"},
    )
    for index in range(5):
        elements = [Element.objects.create(kind="text", text=f"{index}-{i}") for i in range(4)]
        ids = [e.pk for e in elements]
        Item.objects.create(
            condition=cond,
            index=index,
            role="practice" if index == 4 else "scored",
            seed=index,
            key=f"clip:{index}",
            footage=video,
            truth=ids,
            payload={"shown": [ids[i] for i in (2, 0, 3, 1)], "hints": [], "annotation": ""},
        )
    mcq = Study.objects.create(project=project, name="fuzz-mcq", kind="mcq", questions_per_participant=2)
    quick = Condition.objects.create(study=mcq, number=1, label="quick (60 s)", time_limit_s=60)
    for index in range(2):
        Item.objects.create(
            condition=quick,
            index=index,
            key=f"qa:{index}",
            truth=0,
            payload={"question": "Which?", "options": ["a", "b", "c"], "media": []},
        )
    for study in (order, mcq):
        study_services.start(study_services.enroll(study, participant_user))
    return [order, mcq]


@pytest.fixture
def fuzz_data(transactional_db, make_unit, project):
    """A project with real data: three units of QA pairs (one claimed by the annotator), a window QA
    type, videos, and an ordering and a multiple-choice study the annotator takes part in."""
    from django.contrib.auth import get_user_model

    admin_token = _token("fuzz-admin", "admin", project)
    annotator_token = _token("fuzz-annotator", "annotator", project)
    annotator = get_user_model().objects.get(username="fuzz-annotator")
    units = [make_unit(n_open=2) for _ in range(3)]
    ensure_qa_type(project, "counting", name="Counting", clip_policy="window", window_s=3.0)
    claim_next(project, annotator)
    studies = _studies(project, units[0].video, annotator)
    return {
        "tokens": {"admin": admin_token, "annotator": annotator_token},
        "slug": project.slug,
        "ids": sorted(
            {
                *[u.pk for u in units],
                *QAPair.objects.filter(project=project).values_list("pk", flat=True),
                *[s.pk for s in studies],
                *Trial.objects.filter(participant__study__in=studies).values_list("pk", flat=True),
            }
        ),
    }


def _fuzz(schema, session, base_url: str, token: str, data: dict) -> tuple[int, list[str]]:
    """Run every operation of ``schema`` in both generation modes; returns (cases run, failures)."""
    headers = {"Authorization": f"Token {token}"}
    cases, failures = 0, []
    for result in schema.get_all_operations():
        operation = result.ok()
        names = {p.name for p in operation.path_parameters}
        for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE):
            # Generated path parameters, or the real ones (every id is tried on every {id} route).
            real = st.fixed_dictionaries(
                {n: (st.just(data["slug"]) if n == "slug" else st.sampled_from(data["ids"])) for n in names}
            )
            strategy = st.one_of(
                operation.as_strategy(mode),
                real.flatmap(lambda params: operation.as_strategy(mode, path_parameters=params)),
            )

            @settings(
                max_examples=MAX_EXAMPLES,
                deadline=None,
                derandomize=True,
                database=None,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=strategy)
            def run(case):
                nonlocal cases
                cases += 1
                case.call_and_validate(base_url=base_url, session=session, headers=headers, checks=CHECKS)

            try:
                run()
            except (Exception, BaseExceptionGroup) as exc:  # collect every operation's failures, then fail once
                failures.append(f"{operation.label} [{mode.value}]: {exc}")
    return cases, failures


@pytest.fixture
def session():
    # Closed at the end so no keep-alive request thread of the live server holds a database connection.
    with requests.Session() as session:
        yield session


@pytest.mark.parametrize("who", ["admin", "annotator"])
def test_schemathesis_finds_no_server_error_and_no_answer_off_the_schema(fuzz_data, live_server, session, who):
    started = time.monotonic()
    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/schema/?format=json")
    cases, failures = _fuzz(schema, session, live_server.url, fuzz_data["tokens"][who], fuzz_data)
    print(f"schemathesis ({who} token): {cases} cases in {time.monotonic() - started:.0f} s")
    assert not failures, "\n\n".join(failures)
    assert cases >= 18 * 2 * MAX_EXAMPLES // 2  # every operation ran (derandomized runs stop early only when exhausted)
