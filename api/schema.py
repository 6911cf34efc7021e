"""The OpenAPI schema's error answers, documented once for every operation.

``AutoSchema`` (drf-spectacular's ``DEFAULT_SCHEMA_CLASS``) adds 400, 401, 403 and 404 to every
operation with the ``Error`` body that ``api.exceptions.handler`` writes, and gives the same body to
any other 4xx a view declares (409 where it applies, with the view's own description), so the
decorators name only what is particular to them.
"""

from __future__ import annotations

from drf_spectacular import openapi
from rest_framework import serializers


class Error(serializers.Serializer):
    """Every error answer under /api/ (``api.exceptions.handler``)."""

    detail = serializers.CharField(help_text="What went wrong, in plain words.")
    errors = serializers.DictField(
        child=serializers.CharField(), required=False, help_text="Per-field messages by path, e.g. decisions[1].reason."
    )
    conflicts = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="Rows someone else changed since you loaded them, with their current content.",
    )


ALWAYS = {
    "400": "Bad input (per-field errors in `errors`); nothing was changed.",
    "401": "No valid credentials (send `Authorization: Token <key>`).",
    "403": "Your role in this project does not allow this.",
    "404": "No such project or row, or not yours to see.",
}


class AutoSchema(openapi.AutoSchema):
    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        codes = set(ALWAYS) | {code for code in responses if code.startswith("4")}
        for code in sorted(codes):
            declared = responses.get(code)
            if declared is not None and declared.get("content"):
                continue  # the view documented its own body
            documented = self._get_response_for_code(Error, code, direction=direction)
            documented["description"] = (declared or {}).get("description") or ALWAYS[code]
            responses[code] = documented
        return dict(sorted(responses.items()))
