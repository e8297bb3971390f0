"""The README renders: every table in its Markdown source is a table for a real renderer
(markdown-it-py with GitHub's table rule) and every row has the header's cell count (an
unescaped ``|`` inside a cell, e.g. in ``|H|``, splits the row; write ``\\|``)."""

import re
from pathlib import Path

import pytest

markdown_it = pytest.importorskip("markdown_it")

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "docs" / "reference.md"]
DELIMITER = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def _cells(line: str) -> list[str]:
    """GFM's cell split: at every ``|`` not escaped by a backslash (code spans do not protect it)."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return re.split(r"(?<!\\)\|", body)


def _source_tables(lines: list[str]) -> list[tuple[int, list[int]]]:
    """``(header line index, [line indices of the rows])`` of every pipe table in the source."""
    tables, i, fence = [], 0, False
    while i < len(lines):
        if lines[i].lstrip().startswith("```"):
            fence = not fence
        elif not fence and "|" in lines[i] and i + 1 < len(lines) and DELIMITER.match(lines[i + 1]):
            start, j = i, i + 2
            while j < len(lines) and lines[j].strip().startswith("|"):
                j += 1
            tables.append((start, list(range(start + 2, j))))
            i = j
            continue
        i += 1
    return tables


@pytest.mark.parametrize("path", [p for p in DOCS if p.exists()], ids=lambda p: p.name)
def test_every_table_renders_with_full_rows(path):
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    md = markdown_it.MarkdownIt("commonmark").enable("table")
    rendered = {t.map[0] for t in md.parse(text) if t.type == "table_open"}
    tables = _source_tables(lines)
    assert tables, f"{path.name}: no tables found (the test would check nothing)"
    bad = []
    for start, rows in tables:
        if start not in rendered:
            bad.append(f"line {start + 1}: not rendered as a table: {lines[start][:80]}")
            continue
        width = len(_cells(lines[start]))
        for r in rows:
            if len(_cells(lines[r])) != width:
                bad.append(f"line {r + 1}: {len(_cells(lines[r]))} cells, header has {width}: {lines[r][:80]}")
    assert not bad, f"{path.name}:\n" + "\n".join(bad)


def test_the_checker_catches_an_unescaped_pipe():
    broken = "| a | b |\n|---|---|\n| `|H|` | 2 |\n"
    start, rows = _source_tables(broken.splitlines())[0]
    assert len(_cells(broken.splitlines()[rows[0]])) == 4 != len(_cells(broken.splitlines()[start]))
    fixed = "| a | b |\n|---|---|\n| `\\|H\\|` | 2 |\n"
    assert len(_cells(fixed.splitlines()[2])) == 2
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(fixed)
    assert "<code>|H|</code>" in html
