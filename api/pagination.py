"""Pagination of the API's lists: limit and offset, both bounded (issue 19: ``?limit=2**63`` made the
database overflow and the API answer 500)."""

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination

LIMIT_MAX = 1000
OFFSET_MAX = 10**9


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    """``?limit=N&offset=M`` with 1 <= N <= ``LIMIT_MAX`` (default ``PAGE_SIZE``) and
    0 <= M <= ``OFFSET_MAX``; anything else is a 400 naming the parameter, never a 5xx."""

    max_limit = LIMIT_MAX

    def _bounded(self, request, name: str, low: int, high: int, default: int) -> int:
        raw = request.query_params.get(name)
        if raw is None or raw == "":
            return default
        if not raw.isdigit() or len(raw) > 12 or not low <= int(raw) <= high:
            raise ValidationError({name: [f"{name} must be a whole number from {low} to {high}"]})
        return int(raw)

    def get_limit(self, request):
        return self._bounded(request, self.limit_query_param, 1, LIMIT_MAX, self.default_limit)

    def get_offset(self, request):
        return self._bounded(request, self.offset_query_param, 0, OFFSET_MAX, 0)

    def get_schema_operation_parameters(self, view):
        """The two parameters as the OpenAPI schema documents them, with their bounds."""
        params = super().get_schema_operation_parameters(view)
        bounds = {self.limit_query_param: (1, LIMIT_MAX), self.offset_query_param: (0, OFFSET_MAX)}
        for p in params:
            low, high = bounds[p["name"]]
            p["schema"] = {**p["schema"], "minimum": low, "maximum": high}
        return params
