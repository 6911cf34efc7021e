"""One stage call against the loopback OpenAI-compatible server: the schema it sends, validation,
retries with backoff and Retry-After, refusals, timeouts, the cache, cost, keys and concurrency."""

import threading

import pytest

from annotator.inference import engine
from annotator.inference.models import ModelCall

STAGE = engine.Stage(
    name="caption",
    prompt_version="test-caption-v1",
    system="Describe the frames.",
    schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["caption"],
        "properties": {"caption": {"type": "string", "minLength": 3}},
    },
)


def _endpoint(model_server, **kw):
    return engine.Endpoint(server="fake", base_url=model_server.base_url, model="fake-vlm", **kw)


def _call(model_server, project, text="clip 1", *, sleep=lambda s: None, **kw):
    return engine.call_stage(
        STAGE, _endpoint(model_server, **kw), engine.StageInput(text=text), project_id=project.pk, sleep=sleep
    )


@pytest.mark.django_db
def test_a_stage_sends_its_schema_as_a_strict_response_format_and_stores_the_call(model_server, project):
    model_server.responders["caption"] = lambda body: {"caption": "a dark kitchen"}
    out = _call(model_server, project, price_prompt_per_mtok=2.0, price_completion_per_mtok=8.0)
    assert out == {"caption": "a dark kitchen"}
    (body,) = model_server.requests
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "caption", "schema": STAGE.schema, "strict": True},
    }
    call = ModelCall.objects.get()
    assert (call.stage, call.prompt_version, call.model, call.output, call.error) == (
        "caption",
        "test-caption-v1",
        "fake-vlm",
        {"caption": "a dark kitchen"},
        "",
    )
    assert call.request["text"] == "clip 1" and call.latency_ms is not None
    assert call.cost_usd == pytest.approx((101 * 2.0 + 20 * 8.0) / 1e6)


@pytest.mark.django_db
def test_malformed_invalid_and_refused_answers_are_recorded_and_retried_with_backoff(model_server, project, settings):
    settings.LLM_MAX_ATTEMPTS, settings.LLM_BACKOFF_BASE_S = 4, 0.5
    model_server.responders["caption"] = lambda body: {"caption": "fine"}
    model_server.fail_next("malformed")
    model_server.fail_next("invalid")
    model_server.fail_next("refuse")
    waits = []
    assert _call(model_server, project, sleep=waits.append) == {"caption": "fine"}
    errors = list(ModelCall.objects.order_by("attempt").values_list("attempt", "error"))
    assert [a for a, _ in errors] == [1, 2, 3, 4]
    assert errors[0][1].startswith("malformed: not JSON")
    assert errors[1][1].startswith("malformed: does not match the caption schema")
    assert errors[2][1] == "refused: refused: I can't help with that."
    assert errors[3][1] == ""
    assert waits == [0.5, 1.0, 2.0]


@pytest.mark.django_db
def test_a_429_waits_for_retry_after_and_a_slow_server_times_out(model_server, project, settings):
    settings.LLM_MAX_ATTEMPTS = 3
    model_server.responders["caption"] = lambda body: {"caption": "fine"}
    model_server.fail_next("429", retry_after=7)
    model_server.fail_next("slow", seconds=3)
    waits = []
    assert _call(model_server, project, sleep=waits.append, timeout_s=1.0) == {"caption": "fine"}
    calls = list(ModelCall.objects.order_by("attempt").values_list("error", "retry_after_s"))
    assert calls[0][0].startswith("rate_limited: RateLimitError") and calls[0][1] == 7.0
    assert calls[1] == ("timeout: timed out after 1 s", None)
    assert waits[0] == 7.0


@pytest.mark.django_db
def test_giving_up_raises_stage_failed_with_the_last_error(model_server, project, settings):
    settings.LLM_MAX_ATTEMPTS = 2
    model_server.fail_next("500", n=2)
    with pytest.raises(engine.StageFailed) as caught:
        _call(model_server, project)
    assert caught.value.stage == "caption"
    assert "no usable answer in 2 attempts; last: http: InternalServerError" in str(caught.value)
    assert ModelCall.objects.filter(output__isnull=True).count() == 2


@pytest.mark.django_db
def test_the_same_input_comes_from_the_cache_at_no_cost(model_server, project):
    model_server.responders["caption"] = lambda body: {"caption": "first answer"}
    first = _call(model_server, project, price_prompt_per_mtok=1.0)
    model_server.responders["caption"] = lambda body: {"caption": "second answer"}
    again = _call(model_server, project, price_prompt_per_mtok=1.0)
    other = _call(model_server, project, "clip 2", price_prompt_per_mtok=1.0)
    assert first == again == {"caption": "first answer"} and other == {"caption": "second answer"}
    assert len(model_server.requests) == 2
    hit = ModelCall.objects.get(cached_from__isnull=False)
    assert (hit.cost_usd, hit.prompt_tokens, hit.output) == (0.0, None, {"caption": "first answer"})


@pytest.mark.django_db
def test_an_unset_key_variable_fails_the_stage_without_a_request(model_server, project, monkeypatch):
    monkeypatch.delenv("FAKE_NOT_SET_API_KEY", raising=False)
    with pytest.raises(engine.StageFailed, match="FAKE_NOT_SET_API_KEY"):
        _call(model_server, project, key_env="FAKE_NOT_SET_API_KEY")
    assert model_server.requests == []
    monkeypatch.setenv("FAKE_NOT_SET_API_KEY", "sk-test")
    model_server.responders["caption"] = lambda body: {"caption": "keyed"}
    assert _call(model_server, project, key_env="FAKE_NOT_SET_API_KEY") == {"caption": "keyed"}
    assert model_server.authorizations == ["Bearer sk-test"]


@pytest.mark.django_db
def test_no_other_secret_of_the_worker_is_ever_sent_as_a_key(model_server, project, monkeypatch):
    monkeypatch.setenv("DJANGO_SECRET_KEY", "the-platform-secret")
    monkeypatch.setenv("LLM_API_KEY", "sk-global")  # the variable of the retired global key
    with pytest.raises(engine.StageFailed, match="must be an environment variable name in capitals ending in _API_KEY"):
        _call(model_server, project, key_env="DJANGO_SECRET_KEY")
    assert model_server.requests == []
    model_server.responders["caption"] = lambda body: {"caption": "no key"}
    _call(model_server, project)  # no key variable: a placeholder, not LLM_API_KEY
    assert model_server.authorizations == [f"Bearer {engine.NO_KEY}"]


@pytest.mark.django_db(transaction=True)
def test_requests_in_flight_never_exceed_the_server_concurrency(model_server, project):
    model_server.delay_s = 0.2
    model_server.responders["caption"] = lambda body: {"caption": "slow answer"}
    endpoint = _endpoint(model_server, concurrency=2)
    errors = []

    def one(i):
        try:
            engine.call_stage(STAGE, endpoint, engine.StageInput(text=f"clip {i}"), project_id=project.pk)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            from django.db import connection

            connection.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(model_server.requests) == 6 and model_server.max_in_flight == 2


@pytest.mark.django_db
def test_a_free_text_stage_sends_no_response_format_and_keeps_the_text(model_server, project):
    free = engine.Stage(name="predict", prompt_version="p1", system="Answer.", schema=None)
    model_server.replies = ["  (B) the red cup  "]
    out = engine.call_stage(free, _endpoint(model_server), engine.StageInput(text="Which cup?"), project_id=project.pk)
    assert out == {"text": "(B) the red cup"}
    assert "response_format" not in model_server.requests[0]
