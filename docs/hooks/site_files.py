"""MkDocs hooks of the documentation site (``mkdocs.yml``: ``hooks:``).

- The API reference reads the source with griffe, statically. The distribution maps three
  top-level folders into the import root (``models/`` is ``headprompt.models``, and so on:
  ``[tool.setuptools.package-dir]`` of ``pyproject.toml``), which a static reader cannot follow,
  so the build copies the Python files into one ``headprompt/`` tree in a temporary folder and
  points mkdocstrings there.
- The figures of the results page live with their runs under ``benchmarks/results/``; they
  are served as ``results/...`` so that a page links them without copies in ``docs/``.
- The example notebook (``examples/tour.ipynb``, committed with its outputs) becomes the page
  ``tour.md``: markdown cells as they are, code cells as Python blocks, outputs as text, HTML
  and inline PNG images.
- Pages escape a pipe inside a table cell's code span as ``\\|`` (GitHub splits the row at a bare
  one), which Python-Markdown would show with its backslash; it does not split at a pipe inside
  a code span, so the build unescapes those (``table_code_pipes``).
- Docstrings cite the project's contract by section ("SPEC section 3"), a document readers of
  the site do not have: on the rendered pages each such citation becomes a link to the page
  that holds that section's content.
- Each example script ``examples/NAME.py`` is run when the site is built, and becomes the page
  ``gallery/NAME.md``: its docstring, its source and the output of that run. An example that
  fails (a nonzero exit) fails the build.
"""

from __future__ import annotations

import ast
import base64
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
# import name -> folder, as in [tool.setuptools.package-dir] of pyproject.toml
PACKAGE_DIRS = {"headprompt": "headprompt", "headprompt/models": "models",
                "headprompt/constructions": "constructions", "headprompt/verify": "verify"}
RESULTS = ROOT / "benchmarks" / "results"
NOTEBOOK = ROOT / "examples" / "tour.ipynb"
EXAMPLES = ("prompt_vs_head", "example_41", "learned_hmm")     # the gallery, in its order

_api_source: tempfile.TemporaryDirectory | None = None


def _copy_sources() -> str:
    """One ``headprompt/`` tree of the package's Python files, in a temporary folder."""
    global _api_source
    if _api_source is None:
        _api_source = tempfile.TemporaryDirectory(prefix="headprompt-api-")
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
        for target, folder in PACKAGE_DIRS.items():
            shutil.copytree(ROOT / folder, Path(_api_source.name) / target, ignore=ignore,
                            dirs_exist_ok=True)
    return _api_source.name


@event_priority(100)          # before mkdocstrings creates its handler from this configuration
def on_config(config):
    handlers = config.plugins["mkdocstrings"].config["handlers"]
    handlers.setdefault("python", {})["paths"] = [_copy_sources()]
    return config


def on_shutdown():
    global _api_source
    if _api_source is not None:
        _api_source.cleanup()
        _api_source = None


# section of the contract -> (page, anchor, what it holds)
SPEC_SECTIONS = {"1": ("concepts", "", "conventions"), "2": ("concepts", "#three-arithmetic-modes", "numbers"),
                 "3": ("concepts", "#instance-files", "instance files"), "4": ("reference", "", "commands and JSON"),
                 "5": ("api", "", "Python API")}
SPEC_CITATION = re.compile(r"SPEC(?:'s)? sections? (\d)(?:\.\d+)?")


CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def table_code_pipes(markdown: str) -> str:
    """``\\|`` inside the code spans of table rows (outside fenced blocks) as ``|``."""
    out, fence = [], False
    for line in markdown.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        elif not fence and line.lstrip().startswith("|"):
            line = CODE_SPAN.sub(lambda m: m.group(1) + m.group(2).replace("\\|", "|") + m.group(1), line)
        out.append(line)
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:
    return table_code_pipes(markdown)


def on_page_content(html_text: str, page, config, files) -> str:
    """Each "SPEC section N" of a rendered docstring becomes a link to the page holding it."""
    depth = page.url.count("/")

    def link(match: re.Match) -> str:
        target, anchor, what = SPEC_SECTIONS.get(match.group(1), ("reference", "", "reference"))
        return f'<a href="{"../" * depth}{target}/{anchor}">{what}</a>'

    return SPEC_CITATION.sub(link, html_text)


def _output_markdown(output: dict) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return "```text\n" + "".join(output.get("text", "")).rstrip("\n") + "\n```\n"
    if kind in ("execute_result", "display_data"):
        data = output.get("data", {})
        if "image/png" in data:
            png = "".join(data["image/png"]).replace("\n", "")
            base64.b64decode(png, validate=True)        # a broken image fails the build
            return f'<img alt="output" src="data:image/png;base64,{png}">\n'
        if "text/html" in data:
            return '<div class="notebook-output" markdown="0">\n' + "".join(data["text/html"]) + "\n</div>\n"
        if "text/plain" in data:
            return "```text\n" + "".join(data["text/plain"]).rstrip("\n") + "\n```\n"
        return ""
    if kind == "error":
        raise ValueError(f"{NOTEBOOK.name} holds an error output ({output.get('ename')}): "
                         "run python examples/tools/execute_notebooks.py")
    return ""


def notebook_markdown(path: Path) -> str:
    """The notebook as a page: its cells in order, each code cell followed by its outputs."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    parts = [f"<!-- generated from examples/{path.name} by docs/hooks/site_files.py -->\n"]
    for cell in nb["cells"]:
        source = "".join(cell["source"]).rstrip("\n")
        if cell["cell_type"] == "markdown":
            parts.append(source + "\n")
        elif cell["cell_type"] == "code":
            parts.append("```python\n" + source + "\n```\n")
            parts.extend(_output_markdown(o) for o in cell.get("outputs", []))
    return "\n".join(parts)


def example_markdown(name: str) -> str:
    """The page of ``examples/NAME.py``: docstring, source, and the output of running it now."""
    path = ROOT / "examples" / f"{name}.py"
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    doc = ast.get_docstring(tree) or ""
    title, _, rest = doc.partition("\n")
    body = source
    if tree.body and isinstance(tree.body[0], ast.Expr) and doc:
        body = "\n".join(source.splitlines()[tree.body[0].end_lineno:]).lstrip("\n")
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONHASHSEED="0")
    with tempfile.TemporaryDirectory(prefix="headprompt-example-") as cwd:
        start = time.perf_counter()
        run = subprocess.run([sys.executable, str(path)], cwd=cwd, env=env, capture_output=True,
                             text=True, timeout=600)
        seconds = time.perf_counter() - start
    if run.returncode != 0:
        raise RuntimeError(f"examples/{name}.py exited {run.returncode} while building the docs:\n"
                           + run.stderr[-3000:])
    return (f"<!-- generated by docs/hooks/site_files.py from examples/{name}.py -->\n"
            f"# {html.escape(title.rstrip('.'), quote=False)}\n\n"
            f"`examples/{name}.py`, run when this site was built ({seconds:.0f} s, exit 0).\n\n"
            f"```text\n{rest.strip()}\n```\n\n"
            f"```python\n{body.rstrip()}\n```\n\nOutput:\n\n```text\n{run.stdout.rstrip()}\n```\n")


def on_files(files: Files, config) -> Files:
    for png in sorted(RESULTS.rglob("*.png")):
        files.append(File.generated(config, "results/" + png.relative_to(RESULTS).as_posix(),
                                    abs_src_path=str(png)))
    files.append(File.generated(config, "tour.md", content=notebook_markdown(NOTEBOOK)))
    for name in EXAMPLES:
        files.append(File.generated(config, f"gallery/{name}.md", content=example_markdown(name)))
    return files
