"""Every Python block of the README and of the documentation pages runs (the docs' examples are
tested, as the examples and the notebook are in tests/test_examples.py)."""

import os
import time

import pytest

pytest.importorskip("markdown_it")

from .code_blocks import PAGES, ROOT, python_blocks, run_blocks  # noqa: E402

PAGES_WITH_CODE = [p for p in PAGES if any(b.skip is None for b in python_blocks(p.read_text(encoding="utf-8")))]


@pytest.fixture()
def in_a_temporary_folder(tmp_path, monkeypatch):
    """Blocks write files (``hmm.save("instance.json")``): run them in an empty folder, with
    matplotlib drawing off screen."""
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    yield tmp_path
    import matplotlib.pyplot as plt

    plt.close("all")


def test_the_readme_and_the_api_page_have_python_to_run():
    names = {p.name for p in PAGES_WITH_CODE}
    assert {"README.md", "api.md", "getting-started.md"} <= names, names


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=[p.relative_to(ROOT).as_posix() for p in PAGES_WITH_CODE])
def test_page_blocks_run(page, in_a_temporary_folder):
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    start = time.perf_counter()
    ran = run_blocks(blocks, page.relative_to(ROOT).as_posix())
    seconds = time.perf_counter() - start
    assert ran == sum(b.skip is None for b in blocks) > 0
    # a page's examples are for reading: each should run in seconds, not minutes
    assert seconds < 60, f"{page.name}: its examples took {seconds:.0f} s"


def test_every_skip_has_a_reason():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        markers = [line for line in text.splitlines() if line.strip().startswith("<!-- skip")]
        skipped = [b for b in python_blocks(text) if b.skip is not None]
        assert len(markers) == len(skipped), f"{page.name}: a skip comment that skips no Python block"


# -- the runner itself: it fails a failing block, honours only a skip with a reason, keeps one namespace


def test_a_failing_block_fails_with_its_page_line(tmp_path):
    text = "# t\n\n```python\nx = 1\n```\n\ntext\n\n```python\nassert x == 2, 'wrong'\n```\n"
    blocks = python_blocks(text)
    assert [b.line for b in blocks] == [3, 9]
    with pytest.raises(AssertionError, match="wrong") as info:
        run_blocks(blocks, "page.md")
    assert info.traceback[-1].lineno + 1 == 10          # the assert's line in the page (1-based)


def test_only_a_skip_comment_with_a_reason_skips():
    text = ("<!-- skip: needs a GPU -->\n```python\nraise SystemExit(1)\n```\n\n"
            "<!-- skip -->\n```python\ny = 2\n```\n\n"
            "<!-- a comment -->\n```python\nz = 3\n```\n\n```bash\nexit 1\n```\n")
    blocks = python_blocks(text)
    assert [b.skip for b in blocks] == ["needs a GPU", None, None]
    assert run_blocks(blocks, "page.md") == 2


def test_a_skip_comment_away_from_the_fence_does_not_skip():
    text = "<!-- skip: stale -->\n\nSome text.\n\n```python\nraise ValueError('ran')\n```\n"
    with pytest.raises(ValueError, match="ran"):
        run_blocks(python_blocks(text), "page.md")


def test_blocks_share_one_namespace_and_see_earlier_definitions():
    text = "```python\ndef f():\n    return 41\n```\n\n```python\nassert f() + 1 == 42\n```\n"
    assert run_blocks(python_blocks(text), "page.md") == 2


def test_the_environment_is_not_changed_by_the_runner():
    before = dict(os.environ)
    run_blocks(python_blocks("```python\nimport os\nv = os.getcwd()\n```\n"), "page.md")
    assert dict(os.environ) == before
