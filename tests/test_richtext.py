"""Markdown from the model and from imports is rendered safely, with ids linked."""

import pytest

from incidentdesk.richtext import render_markdown


def test_ids_become_links_to_their_pages() -> None:
    html = render_markdown("See INC\u20112025\u201108\u201124\u2011001 and kb-rb-001.")
    assert '<a class="ref ref-incident" href="/incidents/INC-2025-08-24-001/"' in html
    assert '<a class="ref ref-document" href="/knowledge/KB-RB-001/"' in html
    assert html.count("<a ") == 2


def test_bold_ids_are_linked_once() -> None:
    html = render_markdown("**INC-2025-08-24-001** failed")
    assert html.count("<a ") == 1


def test_ids_inside_code_stay_code() -> None:
    html = render_markdown("Run `grep INC-2025-08-24-001 log`")
    assert "<code>grep INC-2025-08-24-001 log</code>" in html
    assert "href" not in html


@pytest.mark.parametrize(
    "attack",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "[click](javascript:alert(1))",
        '<a href="#" onclick="alert(1)">x</a>',
        "<iframe src='https://evil.example'></iframe>",
        '<div style="position:fixed">x</div>',
    ],
)
def test_nothing_executable_survives(attack: str) -> None:
    html = render_markdown(f"Answer: {attack}")
    for bad in ("<script", "onerror", "javascript:", "onclick", "<iframe", "style=", "<img"):
        assert bad not in html


def test_markdown_structure_is_kept() -> None:
    html = render_markdown(
        "## Steps\n\n1. **Restart** the pool\n2. Check `gwctl`\n\n| a | b |\n|---|---|\n| 1 | 2 |"
    )
    for tag in ("<h2>", "<ol>", "<strong>", "<code>", "<table>"):
        assert tag in html


def test_external_links_cannot_reach_back() -> None:
    html = render_markdown("[docs](https://example.com)")
    assert 'rel="noopener noreferrer nofollow"' in html


def test_a_list_right_after_a_sentence_is_a_list() -> None:
    html = render_markdown("Also relevant:\n- KB-KI-001 cache\n- KB-PM-002 postmortem")
    assert "<ul>" in html and html.count("<li>") == 2


def test_code_fences_are_left_alone() -> None:
    html = render_markdown("```\necho hi\n- not a list\n```")
    assert "<ul>" not in html and "- not a list" in html


def test_a_table_right_after_a_sentence_is_a_table() -> None:
    html = render_markdown(
        "Seen before:\n| Id | Cause |\n|---|:-:|\n| INC-2025-08-24-001 | **stale key** |"
    )
    assert "<p>Seen before:</p>" in html
    assert html.count("<th>") == 2 and "<strong>stale key</strong></td>" in html
    assert 'href="/incidents/INC-2025-08-24-001/"' in html


def test_pipes_in_a_sentence_do_not_make_a_table() -> None:
    html = render_markdown("Use a | b here\nthen --- later")
    assert "<table>" not in html and html.count("<p>") == 1
