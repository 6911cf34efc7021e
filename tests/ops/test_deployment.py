"""What docker-compose.yml, .env.example, deploy/Caddyfile, the Dockerfile and the requirements promise.
Docker itself is not run here (no image can be pulled); ``docker compose config`` (or the older
``docker-compose config``) validates the file where one is installed."""

import re
import shutil
import subprocess

import pytest
import yaml

from tests.conftest import REPO

TEST_ONLY = {
    "pytest",
    "pytest-django",
    "playwright",
    "iniconfig",
    "pluggy",
    "pygments",
    "greenlet",
    # ruff: make test lints and checks the format before the suite (scripts/test.sh)
    "ruff",
    # pytest-xdist (make test runs two workers) and its transport
    "pytest-xdist",
    "execnet",
    # schemathesis (API fuzzing in the suite) and what it needs
    "schemathesis",
    "hypothesis",
    "hypothesis-graphql",
    "graphql-core",
    "harfile",
    "jsonschema-rs",
    "pyrate-limiter",
    "requests",
    "certifi",
    "charset-normalizer",
    "rich",
    "markdown-it-py",
    "mdurl",
    "markupsafe",
    "sortedcontainers",
    "werkzeug",
    # Hugging Face datasets (exports must load in it) and what it needs beyond production
    "datasets",
    "dill",
    "multiprocess",
    "xxhash",
    # moto's S3 server (tests/s3_server.py) and what it needs
    "moto[server]",
    "antlr4-python3-runtime",
    "aws-xray-sdk",
    "blinker",
    "cffi",
    "cfn-lint",
    "cryptography",
    "docker",
    "flask",
    "flask-cors",
    "itsdangerous",
    "joserfc",
    "jsonpatch",
    "jsonpath-ng",
    "jsonpointer",
    "jsonschema-path",
    "lazy-object-proxy",
    "openapi-schema-validator",
    "openapi-spec-validator",
    "pathable",
    "py-partiql-parser",
    "pycparser",
    "pydantic-settings",
    "python-dotenv",
    "responses",
    "rfc3339-validator",
    "xmltodict",
    # Locust (bench/load.py, issue 22) and what it needs
    "locust",
    "bidict",
    "brotli",
    "configargparse",
    "flask-login",
    "gevent",
    "geventhttpclient",
    "msgpack",
    "psutil",
    "python-engineio",
    "python-socketio",
    "pyzmq",
    "simple-websocket",
    "websocket-client",
    "wsproto",
    "zope.event",
    "zope.interface",
}


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
    assert "-r requirements-semantic.txt" in text.splitlines()  # which includes requirements.txt
    assert set(_pins("requirements-test.txt")) == TEST_ONLY
    assert set(_pins("requirements-semantic.txt")) & TEST_ONLY == set()
    assert "-r requirements-test.txt" in (REPO / "Makefile").read_text()


def test_the_image_installs_only_production_requirements_and_the_semantic_stack_only_when_asked():
    dockerfile = (REPO / "Dockerfile").read_text()
    assert re.findall(r"pip install [^\\\n]*", dockerfile) == [
        "pip install -r requirements.txt",
        'pip install --index-url "$TORCH_INDEX" "torch==$(sed -n \'s/^torch==//p\' requirements-semantic.txt)" ',
        "pip install -r requirements-semantic-cpu.txt ",
    ]
    assert 'if [ "$EXTRAS" = "semantic" ]' in dockerfile
    assert "requirements-test.txt" in (REPO / ".dockerignore").read_text().splitlines()


def test_only_the_scores_and_models_workers_get_the_semantic_image():
    semantic = {
        name
        for name, service in _compose().items()
        if isinstance(service.get("build"), dict) and service["build"].get("args", {}).get("EXTRAS") == "semantic"
    }
    assert semantic == {"worker-scores", "worker-models"}
    images = {name: service.get("image") for name, service in _compose().items() if "build" in service}
    assert {images[name] for name in semantic} == {"video-qa-annotator-semantic:latest"}
    assert {images[name] for name in set(images) - semantic} == {"video-qa-annotator:latest"}


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
        "sh",
        "-c",
        "python manage.py migrate --noinput && (python manage.py relocate_media || echo 'relocate_media: "
        "some videos were not moved; run it again')",
    ]
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
        # The default worker also drains `celery`, the queue of releases before the split, for one release.
        assert worker["command"][worker["command"].index("-Q") + 1] == (
            "default,celery" if queue == "default" else queue
        )
        assert worker["environment"]["WORKER_QUEUE"] == queue
        assert "celery -A workers inspect ping --destination $$WORKER_QUEUE@$$HOSTNAME" in " ".join(
            worker["healthcheck"]["test"]
        )


# --- Several hosts (issue 22) ----------------------------------------------------------------------
APP_SERVICES = {"migrate", "web", "worker-media", "worker-models", "worker-scores", "worker-default", "beat"}
# Read by a ModelServer row (``manage.py model_server ... --key-env OPENAI_API_KEY``), not by settings.
READ_OUTSIDE_SETTINGS = {"OPENAI_API_KEY"}


def _env_example() -> dict[str, str]:
    pairs = [
        line.split("=", 1)
        for line in (REPO / ".env.example").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    return {key: value for key, value in pairs}


def test_the_services_are_the_bucket_its_one_shot_a_proxy_scalable_web_a_worker_per_queue_and_one_beat():
    services = _compose()
    assert set(services) == APP_SERVICES | {"proxy", "postgres", "redis", "minio", "createbucket"}
    # Scalable: web publishes no port (N replicas cannot share one) and no service pins a container name.
    assert "ports" not in services["web"] and services["web"]["expose"] == ["8000"]
    assert [name for name, service in services.items() if "ports" in service] == ["proxy"]
    assert not any("container_name" in service for service in services.values())
    # One beat: one service runs `celery beat` and no worker embeds one (-B).
    assert [
        name for name, s in services.items() if s.get("command", [])[:4] == ["celery", "-A", "workers", "beat"]
    ] == ["beat"]
    assert not any("-B" in services[f"worker-{queue}"]["command"] for queue in ("media", "models", "scores", "default"))
    # The bucket is made by a one-shot once MinIO is up, and every app service waits for it.
    assert services["createbucket"]["restart"] == "no"
    assert services["createbucket"]["depends_on"] == {"minio": {"condition": "service_healthy"}}
    assert "mc mb --ignore-existing" in " ".join(services["createbucket"]["entrypoint"])
    for name in APP_SERVICES:
        assert services[name]["depends_on"]["createbucket"] == {"condition": "service_completed_successfully"}, name
        assert services[name]["environment"]["STORAGE_BACKEND"] == "s3", name


def test_no_volume_is_shared_between_services_and_only_the_database_broker_and_bucket_have_one():
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    named = {}
    binds = {}
    for name, service in compose["services"].items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            (binds if source.startswith((".", "/")) else named).setdefault(source, []).append(name)
    assert named == {"postgres-data": ["postgres"], "redis-data": ["redis"], "minio-data": ["minio"]}
    assert set(compose["volumes"]) == set(named)
    # The proxy's config file, read-only, is the one bind mount.
    assert binds == {"./deploy/Caddyfile": ["proxy"]}
    assert compose["services"]["proxy"]["volumes"] == ["./deploy/Caddyfile:/etc/caddy/Caddyfile:ro"]
    assert (REPO / "deploy" / "Caddyfile").is_file()
    # No app service keeps media on a local path: only its scratch folder.
    for name in APP_SERVICES:
        assert "MEDIA_ROOT" not in compose["services"][name]["environment"], name


def test_every_long_running_service_has_a_healthcheck_and_web_and_proxy_check_liveness_only():
    services = _compose()
    for name, service in services.items():
        if name not in ("migrate", "createbucket"):
            assert service["healthcheck"]["test"], name
    assert "/health/web/" in " ".join(services["proxy"]["healthcheck"]["test"])
    assert "redbeat::lock" in " ".join(services["beat"]["healthcheck"]["test"])
    assert services["minio"]["healthcheck"]["test"] == ["CMD", "mc", "ready", "local"]


def test_the_proxy_spreads_over_every_web_replica_and_serves_the_bucket_on_the_public_origin():
    caddyfile = (REPO / "deploy" / "Caddyfile").read_text()
    assert "dynamic a web 8000" in caddyfile
    assert (
        "@bucket path /{$AWS_STORAGE_BUCKET_NAME:annotator-media} /{$AWS_STORAGE_BUCKET_NAME:annotator-media}/*"
        in caddyfile
    )
    assert "reverse_proxy minio:9000" in caddyfile
    proxy = _compose()["proxy"]
    assert proxy["networks"]["default"]["aliases"] == ["${PUBLIC_HOST:?set PUBLIC_HOST}"]
    example = _env_example()
    # Browsers and containers reach the bucket at the one public origin.
    assert (
        example["AWS_S3_ENDPOINT_URL"]
        == example["PUBLIC_BASE_URL"]
        == f"http://{example['PUBLIC_HOST']}:{example['PUBLIC_PORT']}"
    )
    assert example["PUBLIC_HOST"] in example["DJANGO_ALLOWED_HOSTS"].split(",")
    assert "127.0.0.1" in example["DJANGO_ALLOWED_HOSTS"].split(",")


def test_every_variable_compose_reads_is_in_env_example_and_every_app_key_is_read_by_settings():
    text = (REPO / "docker-compose.yml").read_text()
    used = set(re.findall(r"(?<!\$)\$\{([A-Z_][A-Z0-9_]*)", text))
    example = _env_example()
    assert used == set(example), (used - set(example), set(example) - used)
    settings_text = (REPO / "annotator" / "settings.py").read_text()
    for name in APP_SERVICES:
        for key in _compose()[name]["environment"]:
            if key in ("WORKER_QUEUE", "WEB_PROCESSES"):  # read by the healthcheck and the command line
                continue
            assert key in READ_OUTSIDE_SETTINGS or f'"{key}"' in settings_text, (name, key)


def _compose_cli() -> list[str] | None:
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def test_docker_compose_config_accepts_the_file_with_env_example():
    cli = _compose_cli()
    if cli is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed")
    done = subprocess.run(
        [*cli, "--env-file", str(REPO / ".env.example"), "-f", str(REPO / "docker-compose.yml"), "config", "-q"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


# Variables only docker-compose.yml reads (the proxy, MinIO, process counts), not settings.
COMPOSE_ONLY = {
    "PUBLIC_HOST",
    "PUBLIC_PORT",
    "MINIO_ROOT_USER",
    "MINIO_ROOT_PASSWORD",
    "WEB_PROCESSES",
    "WORKER_MEDIA_CONCURRENCY",
    "WORKER_MODELS_CONCURRENCY",
    "WORKER_SCORES_CONCURRENCY",
    "WORKER_DEFAULT_CONCURRENCY",
}


def test_every_variable_docs_deploy_names_is_read_by_settings_or_only_by_compose():
    settings_text = (REPO / "annotator" / "settings.py").read_text()
    named = set(re.findall(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b", (REPO / "docs" / "deploy.md").read_text()))
    assert COMPOSE_ONLY <= set(_env_example())
    assert not any(f'"{key}"' in settings_text for key in COMPOSE_ONLY)
    build_args = set(re.findall(r"^ARG ([A-Z_]+)", (REPO / "Dockerfile").read_text(), re.M))  # the image's
    unknown = {
        key
        for key in named - COMPOSE_ONLY - build_args
        if f'"{key}"' not in settings_text and not re.search(rf"^{key} = ", settings_text, re.M)
    }
    assert unknown == set()
    # The ones it must explain: the managed services' keys, beat's lock and the queues' routes.
    assert {
        "POSTGRES_HOST",
        "CELERY_BROKER_URL",
        "AWS_S3_ENDPOINT_URL",
        "BEAT_LOCK_TIMEOUT_S",
        "CACHE_URL",
        "CELERY_TASK_ROUTES",
    } <= named
