"""Checks of a run's parameters as a request sends them, shared by the runs page and the API
(``annotator.drafts.views``, ``api.runs``): bounds first, the pipeline checks the values."""

from __future__ import annotations

import json

from rest_framework import serializers

from annotator.core.validators import storable_json
from annotator.errors import Invalid

PARAMS_MAX_KEYS = 20
PARAMS_MAX_CHARS = 2000  # the parameters as compact JSON
PARAM_KEY_MAX = 40
# Parameters a run must not take from a request: where a stage sends its requests and with which
# key come from the project's model servers only (an ``llm`` run reads them from its parameters,
# so a request naming ``base_url`` and ``key_env`` could send any of the worker's environment
# variables to any host), and ``file`` names a path on the server (the import pipeline reads it).
RESERVED_PARAMS = frozenset(
    {
        "server",
        "server_id",
        "base_url",
        "model",
        "key_env",
        "concurrency",
        "timeout_s",
        "price_prompt_per_mtok",
        "price_completion_per_mtok",
        "file",
    }
)


def check_params(params) -> dict:
    """A run's ``params`` from a request: a JSON object of at most ``PARAMS_MAX_KEYS`` keys and
    ``PARAMS_MAX_CHARS`` characters (compact JSON), no reserved key (``RESERVED_PARAMS``), text
    PostgreSQL can store. Returns it; raises Invalid with the reason in plain words. The pipeline
    checks the values (``PipelineDef.clean_params``)."""
    if not isinstance(params, dict):
        raise Invalid("params must be a JSON object of parameter names and values", errors={"params": "not an object"})
    if len(params) > PARAMS_MAX_KEYS:
        message = f"at most {PARAMS_MAX_KEYS} parameters, got {len(params)}"
        raise Invalid(message, errors={"params": message})
    reserved = sorted(set(params) & RESERVED_PARAMS)
    if reserved:
        message = (
            f"parameter {', '.join(reserved)} cannot be set here: a run's servers come from the project's model "
            "servers (server, stage_servers), and files are imported with the draft command"
        )
        raise Invalid(message, errors={"params": message})
    for key in params:
        if not key or len(key) > PARAM_KEY_MAX:
            message = f"a parameter name has 1 to {PARAM_KEY_MAX} characters"
            raise Invalid(message, errors={"params": message})
    try:
        storable_json(params, "params")
    except serializers.ValidationError as exc:
        message = " ".join(map(str, exc.detail))
        raise Invalid(message, errors={"params": message}) from None
    size = len(json.dumps(params, separators=(",", ":"), ensure_ascii=False))
    if size > PARAMS_MAX_CHARS:
        message = f"the parameters take {size} characters as JSON; at most {PARAMS_MAX_CHARS}"
        raise Invalid(message, errors={"params": message})
    return params
