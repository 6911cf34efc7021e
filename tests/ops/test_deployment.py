"""What docker-compose.yml, the Dockerfile and the requirements promise (Docker itself is not run here)."""

import re

import yaml

from tests.conftest import REPO

TEST_ONLY = {"pytest", "pytest-django", "playwright", "iniconfig", "pluggy", "pygments", "greenlet",
             # pytest-xdist (make test runs two workers) and its transport
             "pytest-xdist", "execnet",
             # schemathesis (API fuzzing in the suite) and what it needs
             "schemathesis", "hypothesis", "hypothesis-graphql", "graphql-core", "harfile", "jsonschema-rs",
             "pyrate-limiter", "requests", "certifi", "charset-normalizer", "rich", "markdown-it-py", "mdurl",
             "markupsafe", "sortedcontainers", "werkzeug",
             # Hugging Face datasets (exports must load in it) and what it needs beyond production
             "datasets", "dill", "multiprocess", "xxhash",
             # moto's S3 server (tests/s3_server.py) and what it needs
             "moto[server]", "antlr4-python3-runtime", "aws-xray-sdk", "blinker", "cffi", "cfn-lint", "cryptography",
             "docker", "flask", "flask-cors", "itsdangerous", "joserfc", "jsonpatch", "jsonpath-ng", "jsonpointer",
             "jsonschema-path", "lazy-object-proxy", "openapi-schema-validator", "openapi-spec-validator", "pathable",
             "py-partiql-parser", "pycparser", "pydantic-settings", "python-dotenv", "responses", "rfc3339-validator",
             "xmltodict"}


def _pins(name: str) -> dict[str, str]:
    pins = {}
    for line in (REPO / name).read_text().splitlines():
        if line and not line.startswith(("#", "-r ")):
            package, version = line.split("==")
            pins[package.lower().replace("_", "-")] = version
    return pins


def _compose() -> dict:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]


def test_production_requirements_hold_no_test_only_package_and_every_pin_is_exact():
    lines = [line for line in (REPO / "requirements.txt").read_text().splitlines() if line]
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][A-Za-z0-9.+-]*", line) for line in lines)
    assert set(_pins("requirements.txt")) & TEST_ONLY == set()


def test_test_requirements_include_production_and_hold_the_test_only_packages():
    text = (REPO / "requirements-test.txt").read_text()
    assert "-r requirements.txt" in text.splitlines()
    assert set(_pins("requirements-test.txt")) == TEST_ONLY
    assert "-r requirements-test.txt" in (REPO / "Makefile").read_text()


def test_the_image_installs_only_production_requirements():
    dockerfile = (REPO / "Dockerfile").read_text()
    assert re.findall(r"pip install .*", dockerfile) == ["pip install -r requirements.txt"]
    assert "requirements-test.txt" in (REPO / ".dockerignore").read_text().splitlines()


def test_redis_keeps_an_append_only_file_on_a_named_volume():
    redis = _compose()["redis"]
    command = redis["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert "redis-data:/data" in redis["volumes"]
    assert "redis-data" in yaml.safe_load((REPO / "docker-compose.yml").read_text())["volumes"]


def test_migrations_run_once_before_web_worker_and_beat():
    services = _compose()
    # Then the files stored before media keys move to their folders (issue 20): a no-op once done.
    assert services["migrate"]["command"] == [
        "sh", "-c", "python manage.py migrate --noinput && (python manage.py relocate_media || echo 'relocate_media: "
        "some videos were not moved; run it again')"]
    assert services["migrate"]["restart"] == "no"
    for name in ("web", "worker-media", "worker-models", "worker-scores", "worker-default", "beat"):
        assert services[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}, name
        assert "migrate" not in str(services[name]["command"]), name


def test_beat_runs_the_scheduler_and_the_healthchecks_use_health_and_a_celery_ping():
    services = _compose()
    assert services["beat"]["command"][:4] == ["celery", "-A", "workers", "beat"]
    # Liveness without the workers: a worker restarting must not mark web unhealthy.
    assert "http://127.0.0.1:8000/health/web/?format=json" in " ".join(services["web"]["healthcheck"]["test"])
    for queue in ("media", "models", "scores", "default"):  # a worker per queue, each answering a ping by its name
        worker = services[f"worker-{queue}"]
        assert worker["command"][worker["command"].index("-Q") + 1] == queue
        assert worker["environment"]["WORKER_QUEUE"] == queue
        assert "celery -A workers inspect ping --destination $$WORKER_QUEUE@$$HOSTNAME" in " ".join(
            worker["healthcheck"]["test"])
