"""Every table of every documentation page renders with full rows (the README's and the
reference's own check, tests/test_readme.py, applied to all pages)."""

import pytest

from ..test_readme import test_every_table_renders_with_full_rows as check_tables
from .code_blocks import PAGES, ROOT

pytest.importorskip("markdown_it")

WITH_TABLES = [p for p in PAGES if "\n|---" in p.read_text(encoding="utf-8") or "\n| ---" in p.read_text(encoding="utf-8")]


def test_most_pages_have_tables():
    assert len(WITH_TABLES) >= 8, [p.name for p in WITH_TABLES]


@pytest.mark.parametrize("page", WITH_TABLES, ids=[p.relative_to(ROOT).as_posix() for p in WITH_TABLES])
def test_tables_render(page):
    check_tables(page)
