"""Every repository path the README and the documentation pages name in backticks exists, so a
moved module or a renamed results folder cannot leave a page pointing at nothing."""

import re
from pathlib import Path

import pytest

from .code_blocks import PAGES, ROOT

TOP = ("models/", "verify/", "constructions/", "headprompt/", "benchmarks/", "examples/", "tests/", "docs/", ".ci/")
CODE = re.compile(r"`([^`\s]+)`")


def named_paths(text: str) -> list[tuple[int, str]]:
    """``(line, path)`` for each backticked token that starts with a top-level folder of the
    repository (trailing punctuation dropped; ``*`` is a glob)."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in CODE.finditer(line):
            token = match.group(1).rstrip(".,;:)")
            if token.startswith(TOP):
                found.append((number, token))
    return found


def exists(path: str, root: Path = ROOT) -> bool:
    return any(root.glob(path)) if "*" in path else (root / path).exists()


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_named_paths_exist(page):
    missing = [f"line {n}: {p}" for n, p in named_paths(page.read_text(encoding="utf-8")) if not exists(p)]
    assert not missing, f"{page.name} names paths that do not exist:\n" + "\n".join(missing)


def test_the_pages_name_paths_at_all():
    assert sum(len(named_paths(p.read_text(encoding="utf-8"))) for p in PAGES) > 20


def test_a_missing_path_is_found(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "kept.py").write_text("")
    text = "see `models/kept.py`, `models/gone.py`, `models/*.py` and `notapath/x.py`.\n"
    names = named_paths(text)
    assert [p for _, p in names] == ["models/kept.py", "models/gone.py", "models/*.py"]
    assert [p for _, p in names if not exists(p, tmp_path)] == ["models/gone.py"]


LINK = re.compile(r"\]\(([^)\s]+)\)")


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_the_readmes_links_and_contents_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    slugs = {github_slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}
    bad = []
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://")):
            continue
        if target.startswith("#"):
            if target[1:] not in slugs:
                bad.append(target)
        elif not (ROOT / target.split("#")[0]).exists():
            bad.append(target)
    assert not bad, bad
    assert len([t for t in LINK.findall(text) if t.startswith("#")]) >= 6      # the table of contents


def test_the_slug_and_link_rules():
    assert github_slug(" The main job: check a theorem") == "the-main-job-check-a-theorem"
    assert LINK.findall("see [a](docs/a.md) and [b](#b-c), not [c] (x)") == ["docs/a.md", "#b-c"]
