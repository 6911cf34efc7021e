"""Guidelines and instructions are Markdown written by some people and read by others: what
reaches a page is the sanitizer's allowlist, nothing else."""

from django.utils.safestring import SafeString

from annotator.markdown import render


def test_markdown_still_renders_the_usual_formatting():
    html = render("# Counting\n\n**Count** each *person* once.\n\n- one\n- two\n\n`code` [docs](https://example.org/x)")
    assert isinstance(html, SafeString)
    assert html == (
        "<h1>Counting</h1>\n<p><strong>Count</strong> each <em>person</em> once.</p>\n"
        "<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n"
        '<p><code>code</code> <a href="https://example.org/x" rel="noopener noreferrer">docs</a></p>'
    )


def test_an_image_keeps_its_source_but_loses_its_event_handler():
    assert render("<img src=x onerror=\"document.title='owned'\">") == '<p><img src="x"></p>'


def test_a_script_is_dropped_with_its_text():
    assert render("before\n\n<script>document.title='owned'</script>\n\nafter") == "<p>before</p>\n\n\n<p>after</p>"


def test_links_keep_only_http_https_mailto_and_relative_targets():
    html = render("[a](javascript:alert(1)) [b](data:text/html,x) [c](https://e.org) [d](mailto:x@e.org) [e](/help/)")
    assert html == (
        '<p><a rel="noopener noreferrer">a</a> <a rel="noopener noreferrer">b</a> '
        '<a href="https://e.org" rel="noopener noreferrer">c</a> <a href="mailto:x@e.org" rel="noopener noreferrer">d</a> '
        '<a href="/help/" rel="noopener noreferrer">e</a></p>'
    )


def test_frames_forms_svg_styles_ids_and_comments_are_removed():
    html = render(
        '<iframe src="https://e.org"></iframe><form action="/x"><input name="q"></form>'
        '<svg onload="x()"><circle/></svg><p id="status" class="big" style="color:red">'
        "text</p><!-- note --><style>body{}</style>"
    )
    # Only the paragraph's text survives (the empty paragraphs are Markdown's wrapping of the rest).
    assert html == "\n\n<p>\n</p><p>text</p><p></p>\n"


def test_tables_align_by_attribute_not_inline_style():
    assert render("| a | b |\n|:--|--:|\n| 1 | 2 |") == (
        '<table>\n<thead>\n<tr>\n<th align="left">a</th>\n<th align="right">b</th>\n</tr>\n</thead>\n'
        '<tbody>\n<tr>\n<td align="left">1</td>\n<td align="right">2</td>\n</tr>\n</tbody>\n</table>'
    )


def test_empty_text_gives_empty_html():
    assert render("") == ""
