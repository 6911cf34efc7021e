"""The one way text written by people becomes HTML on a page: Markdown, then an allowlist sanitizer.

Guidelines (project and QA type) and experiment instructions are written by project admins and
researchers but read by everyone else, including superusers, so they are untrusted HTML: Markdown
passes raw HTML through (``<img src=x onerror=...>``, ``<script>``), and ``attr_list`` lets
``{: onclick=...}`` add attributes. Everything Markdown produces goes through nh3 (ammonia) with an
explicit allowlist; the page's Content-Security-Policy is the second wall, not the first.

Templates may mark as ``|safe`` only what :func:`render` returned.
"""

import markdown as _markdown
import nh3
from django.utils.safestring import SafeString, mark_safe

# What Markdown's "extra" produces, minus anything that runs code, loads frames or forms, or
# styles the page. No ``id``/``class``/``name`` anywhere: an author's ``id="status"`` would
# shadow the page's own elements for ``getElementById`` (DOM clobbering).
TAGS = frozenset(
    {
        "a",
        "abbr",
        "b",
        "blockquote",
        "br",
        "code",
        "dd",
        "del",
        "dl",
        "dt",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "img",
        "ins",
        "kbd",
        "li",
        "ol",
        "p",
        "pre",
        "strong",
        "sub",
        "sup",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    }
)
ATTRIBUTES = {"a": {"href", "title"}, "abbr": {"title"}, "img": {"src", "alt", "title"}, "ol": {"start"}}
# Table alignment as an attribute, not ``style="text-align: ..."`` (the CSP forbids inline style).
ALIGN = {"th": {"align": {"left", "center", "right"}}, "td": {"align": {"left", "center", "right"}}}
# Python-Markdown's "extra" without attr_list (it only adds attributes the sanitizer drops).
EXTENSIONS = ["abbr", "def_list", "fenced_code", "footnotes", "md_in_html", "tables"]
EXTENSION_CONFIGS = {"tables": {"use_align_attribute": True}}
URL_SCHEMES = frozenset({"http", "https", "mailto"})
# Dropped with their content, not just unwrapped (the text of a script is not guidance).
DROP_WITH_CONTENT = frozenset({"script", "style"})
LINK_REL = "noopener noreferrer"


def render(text: str) -> SafeString:
    """Markdown ``text`` (Python-Markdown's "extra" set) as sanitized HTML, safe to insert in a page.

    Only the tags and attributes above survive; link and image URLs must be relative or use
    http, https or mailto; every link gets ``rel="noopener noreferrer"``; HTML comments are
    dropped. Never raises for any input string (empty gives an empty string).
    """
    html = _markdown.markdown(text or "", extensions=EXTENSIONS, extension_configs=EXTENSION_CONFIGS)
    return mark_safe(
        nh3.clean(  # noqa: S308 - this is the sanitizer's output
            html,
            tags=set(TAGS),
            clean_content_tags=set(DROP_WITH_CONTENT),
            attributes=ATTRIBUTES,
            tag_attribute_values=ALIGN,
            url_schemes=set(URL_SCHEMES),
            link_rel=LINK_REL,
            strip_comments=True,
        )
    )
