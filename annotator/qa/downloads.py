"""Downloads of QA served the same way by the page and the API: the verified QA as a JSONL stream."""

from __future__ import annotations

from django.http import StreamingHttpResponse

from annotator.projects.models import Project


def jsonl_export_response(project: Project, filters: dict[str, str | None]) -> StreamingHttpResponse:
    """A streamed JSONL download of the verified QA (``qa.exports.iter_rows``, README "Export schema")
    filtered by ``filters`` (from ``qa.inputs.export_filters``)."""
    from annotator.qa import exports

    rows = exports.iter_rows(project, exports.Filters(**filters))
    response = StreamingHttpResponse(exports.jsonl_chunks(rows), content_type="application/jsonl; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-verified-qa.jsonl"'
    return response
