"""The documentation site builds with ``mkdocs build --strict`` (a warning, e.g. a broken link or
a stale API name, fails it), and what it builds holds the generated parts: the API reference from
docstrings, the executed examples, the notebook with its outputs, the results figures."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("mkdocs", reason="mkdocs is not installed: pip install -e '.[docs]' (CI installs it)")
pytest.importorskip("material", reason="mkdocs-material is not installed: pip install -e '.[docs]'")
pytest.importorskip("mkdocstrings", reason="mkdocstrings is not installed: pip install -e '.[docs]'")
yaml = pytest.importorskip("yaml")


def _build(config: Path, site: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], capture_output=True, text=True, timeout=600, env=env,
                          cwd=config.parent)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    proc = _build(ROOT / "mkdocs.yml", out)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


def _text(site: Path, page: str) -> str:
    return (site / page / "index.html").read_text(encoding="utf-8")


def test_the_site_builds_strict_with_every_page_of_the_nav(site):
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert config["strict"] is True

    def pages(nav):
        for item in nav:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            yield from (pages(value) if isinstance(value, list) else [value])

    for page in pages(config["nav"]):
        built = site / ("index.html" if page == "index.md" else Path(page).with_suffix("") / "index.html")
        assert built.is_file(), page


def test_the_api_reference_comes_from_the_docstrings(site):
    from headprompt import HMM, check

    html = _text(site, "api")
    for name in ("headprompt.check", "headprompt.load", "headprompt.HMM", "headprompt.MemoryHMM",
                 "headprompt.TheoremReport", "headprompt.rationalize", "headprompt.strategies", "headprompt.certcheck"):
        assert f'id="{name}"' in html, name
    # docstrings cite "SPEC section N", a document readers do not have: the site links the page instead
    assert "SPEC section" not in html and 'href="../concepts/">conventions</a>' in html
    # a sentence of each docstring, as the source has it today
    for obj in (check, HMM):
        first = " ".join(obj.__doc__.split("\n\n")[0].split())[:40]
        assert first.split("``")[0][:30] in " ".join(html.split()), obj.__name__


def _hook():
    import importlib.util

    spec = importlib.util.spec_from_file_location("site_files", ROOT / "docs" / "hooks" / "site_files.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    return hook


def test_the_gallery_holds_every_example_script():
    assert set(_hook().EXAMPLES) == {p.stem for p in (ROOT / "examples").glob("*.py")}
    nav = (ROOT / "mkdocs.yml").read_text()
    assert all(f"gallery/{name}.md" in nav for name in _hook().EXAMPLES)


def test_the_examples_ran_and_the_notebook_keeps_its_outputs(site):
    for name in _hook().EXAMPLES:
        html = _text(site, f"gallery/{name}")
        assert "exit 0" in html and "Output" in html, name
    assert "Theorem 3.6: 1092/1092 sequences" in _text(site, "gallery/prompt_vs_head")
    tour = _text(site, "tour")
    assert tour.count("data:image/png;base64,") >= 1 and "verdict" in tour


def test_the_results_figures_are_served(site):
    for png in (ROOT / "benchmarks" / "results").rglob("*.png"):
        assert (site / "results" / png.relative_to(ROOT / "benchmarks" / "results")).is_file(), png


def test_a_broken_link_fails_the_strict_build(tmp_path):
    """The site's own settings (strict, link validation) on a two-page site with one broken
    link: the build fails and names it. (The same settings with the link fixed build.)"""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    for key in ("hooks", "plugins", "nav", "exclude_docs"):
        config.pop(key, None)
    config["plugins"] = ["search"]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the other page](other.md).\n")
    (docs / "other.md").write_text("# Other\n\nBack [home](index.md), and [nowhere](missing.md).\n")
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    proc = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode != 0 and "missing.md" in proc.stderr, proc.stderr[-2000:]
    (docs / "other.md").write_text("# Other\n\nBack [home](index.md).\n")
    shutil.rmtree(tmp_path / "site", ignore_errors=True)
    proc = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_no_page_shows_an_escaped_pipe(site):
    """Table cells write ``|H|`` in code as ``\\|H\\|`` for GitHub; the site shows ``|H|``."""
    shown = [p.relative_to(site).as_posix() for p in site.rglob("*.html") if "\\|" in p.read_text(encoding="utf-8")]
    assert not shown, shown


def test_table_code_pipes_unescapes_only_code_in_table_rows():
    hook = _hook()
    text = ("| `\\|H\\|` | \\|X\\| | `a` |\n"
            "text `\\|H\\|`\n"
            "```\n| `\\|H\\|` |\n```\n")
    assert hook.table_code_pipes(text).splitlines() == [
        "| `|H|` | \\|X\\| | `a` |", "text `\\|H\\|`", "```", "| `\\|H\\|` |", "```"]
