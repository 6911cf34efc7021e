"""Named model servers: the model_server command, and the one-prompt llm pipeline sent to one of
them with its own model and key."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotator.drafts.models import DraftRun
from annotator.inference.models import ModelCall, ModelServer
from annotator.media.models import Video
from tests.drafts.test_pipelines import GOOD, _draft


def _server(*args):
    out = StringIO()
    call_command("model_server", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_model_server_creates_updates_lists_and_refuses_bad_values(project):
    out = _server(
        "--project",
        "proj",
        "--name",
        "gpt41",
        "--base-url",
        "https://api.example.com/v1",
        "--model",
        "gpt-4.1",
        "--key-env",
        "OPENAI_API_KEY",
        "--concurrency",
        "8",
        "--price-prompt",
        "2",
        "--price-completion",
        "8",
    )
    assert out.strip() == (
        "created model server gpt41: gpt-4.1 at https://api.example.com/v1 (key from OPENAI_API_KEY, concurrency 8)"
    )
    _server("--project", "proj", "--name", "gpt41", "--concurrency", "2")
    server = ModelServer.objects.get()
    assert (server.concurrency, server.price_prompt_per_mtok, server.model) == (2, 2.0, "gpt-4.1")
    assert "gpt41\tgpt-4.1\thttps://api.example.com/v1\tkey_env=OPENAI_API_KEY\tconcurrency=2" in _server(
        "--project", "proj"
    )
    for args, message in [
        (["--name", "new"], "server 'new' is new: give --base-url and --model"),
        (["--name", "gpt41", "--concurrency", "0"], "--concurrency must be between 1 and 256, not 0"),
        (["--name", "gpt41", "--price-prompt", "-1"], "--price-prompt must be between 0 and 10000, not -1"),
        (
            ["--name", "gpt41", "--key-env", "my key"],
            "key_env: an environment variable name in capitals ending in _API_KEY, e.g. OPENAI_API_KEY",
        ),
        # A server must not be able to send the worker's other secrets as its bearer token.
        (
            ["--name", "gpt41", "--key-env", "DJANGO_SECRET_KEY"],
            "key_env: an environment variable name in capitals ending in _API_KEY, e.g. OPENAI_API_KEY",
        ),
        (
            ["--name", "gpt41", "--base-url", "https://user:secret@api.example.com/v1"],
            "base_url: put credentials in the key variable (--key-env), not in the URL",
        ),
        (["--name", "gpt41", "--base-url", "not a url"], "base_url: Enter a valid URL."),
    ]:
        with pytest.raises(CommandError) as caught:
            _server("--project", "proj", *args)
        assert str(caught.value) == message
    assert ModelServer.objects.get().concurrency == 2


@pytest.mark.django_db(transaction=True)
def test_the_llm_pipeline_uses_the_named_servers_model_and_key(worker, short_video, model_server, monkeypatch):
    call_command("ingest", str(short_video), "--project", "llm", "--wait", stdout=StringIO())
    assert Video.objects.get().status == "ready"
    from annotator.projects.models import Project

    ModelServer.objects.create(
        project=Project.objects.get(slug="llm"),
        name="local",
        base_url=model_server.base_url,
        model="qwen-vl",
        key_env="LOCAL_VLM_API_KEY",
    )
    monkeypatch.setenv("LOCAL_VLM_API_KEY", "sk-local-123")
    model_server.replies = [GOOD]
    code, out, _ = _draft("--project", "llm", "--pipeline", "llm", "--qa-type", "counting", "--server", "local")
    assert code == 0, out
    assert model_server.requests[0]["model"] == "qwen-vl"
    assert model_server.authorizations == ["Bearer sk-local-123"]
    run = DraftRun.objects.get()
    assert (run.model, run.status, run.servers["llm"]["server"], run.servers["llm"]["key_env"]) == (
        "qwen-vl",
        "done",
        "local",
        "LOCAL_VLM_API_KEY",
    )
    assert ModelCall.objects.get().project_id == run.project_id


@pytest.mark.django_db
def test_a_person_starting_an_llm_run_cannot_create_a_qa_type(project, admin_user):
    from annotator.drafts import runs
    from annotator.errors import Invalid
    from annotator.qa.models import QAType

    with pytest.raises(Invalid, match=r"^project proj has no QA type 'made_up'; an admin defines QA types"):
        runs.start(project, "llm", qa_type="made_up", user=admin_user)
    with pytest.raises(Invalid, match=r"^the QA type is a slug: 1 to 64 letters, digits, - and _$"):
        runs.start(project, "llm", qa_type="évil / type <i>x</i>", user=admin_user)
    with pytest.raises(Invalid, match="is a slug"):
        runs.start(project, "llm", qa_type="x" * 65)
    assert not QAType.objects.filter(project=project).exists()
