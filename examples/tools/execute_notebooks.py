"""Execute the example notebooks in place, so that they are committed with their outputs and plots.

Run:  python examples/tools/execute_notebooks.py [NOTEBOOK ...]      (default: examples/*.ipynb)

Needs nbclient, nbformat and ipykernel (``pip install nbclient ipykernel``), which the project
does not depend on: CI runs every notebook cell without a kernel instead
(``tests/test_examples.py``), and this script refreshes the committed outputs.
"""

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

EXAMPLES = Path(__file__).resolve().parents[1]


def execute(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(EXAMPLES.parent)}}).execute()
    nbformat.validate(nb)
    nbformat.write(nb, path)
    images = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    print(f"{path.name}: {len(nb.cells)} cells executed in {time.perf_counter() - start:.0f} s, {images} plot(s)")


if __name__ == "__main__":
    for name in sys.argv[1:] or sorted(EXAMPLES.glob("*.ipynb")):
        execute(Path(name))
