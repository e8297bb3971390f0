"""Every script in examples/ runs to completion (they assert their own claims)."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(script):
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip()


NOTEBOOKS = sorted((Path(__file__).parent.parent / "examples").glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(notebook):
    """Every code cell of the notebook runs in order in one namespace (what a kernel does),
    and the last expression of a cell that should display something has an HTML or text form."""
    import ast
    import json

    cells = json.loads(notebook.read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert code
    namespace: dict = {"__name__": "__main__"}
    for source in code:
        tree = ast.parse(source)
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        body = tree.body[:-1] if last is not None else tree.body
        exec(compile(ast.Module(body=body, type_ignores=[]), str(notebook), "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), str(notebook), "eval"), namespace)
            shown = value._repr_html_() if hasattr(value, "_repr_html_") else repr(value)
            assert shown
