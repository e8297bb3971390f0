"""The package's architecture, checked on its source: data flows models -> constructions ->
verify, the floors of ``verify`` run one way (docs/architecture.md), no import circle anywhere
(module-level, inside functions or under ``if TYPE_CHECKING:``), argparse only in
``verify/cli/``, no torch in ``constructions/``, no subcommand importing another, and every
package folder listed in pyproject.toml."""

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"headprompt": "headprompt", "models": "headprompt.models",
           "constructions": "headprompt.constructions", "verify": "headprompt.verify"}


def _modules() -> dict[str, Path]:
    found = {}
    for folder, name in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((name,) + parts)] = path
    return found


MODULES = _modules()


def _imports(module: str, path: Path, *, typing: bool = False) -> set[str]:
    """Every module of the package that ``module`` imports, wherever the import statement is
    (inside functions too; under ``if TYPE_CHECKING:`` only with ``typing``);
    ``from pkg import name`` counts ``pkg.name`` when that is a module, else ``pkg``."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = set()
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and _names_type_checking(block.test) for n in ast.walk(block)}
    for node in ast.walk(tree):
        if id(node) in typing_only and not typing:       # annotations only: never imported at run time
            continue
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            subs = [f"{target}.{alias.name}" for alias in node.names]
            hits = [s for s in subs if s in MODULES]
            out.update(hits)
            if len(hits) < len(subs):
                out.add(target)
    return out


def _names_type_checking(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` or ``if typing.TYPE_CHECKING:``."""
    return getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == "TYPE_CHECKING"


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}
"""Imports made at run time."""
ALL_IMPORTS = {m: _imports(m, p, typing=True) for m, p in MODULES.items()}
"""Every import statement, those under ``if TYPE_CHECKING:`` included: an arrow that only
annotations need is still an arrow (STYLE 12)."""


def _internal(edges):
    return {e for e in edges if e in MODULES}


def test_the_walk_sees_the_package():
    assert len(MODULES) > 70
    assert "headprompt.verify.checks.vanilla.check" in GRAPH["headprompt.verify.reports.vanilla"]


def _cycles(graph=None):
    """Strongly connected components with more than one module (Tarjan) of ``graph`` (default
    :data:`GRAPH`), less the edges from a module into its own package's ``__init__`` (parent
    packages Python imports anyway)."""
    graph = _without_parent_edges(GRAPH if graph is None else graph)
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in _internal(graph[v]):
            # a package __init__ that re-exports its own modules is not a circle
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return comps


def _without_parent_edges(graph):
    """Edges into a package's own ``__init__`` from below are parent-package imports Python
    makes anyway; keep only module -> module edges between different packages' contents."""
    return {m: {e for e in edges if not (e in MODULES and MODULES[e].name == "__init__.py" and m.startswith(e + "."))}
            for m, edges in graph.items()}


def test_no_import_circle():
    """No circle anywhere in the package, counting imports inside functions and under
    ``if TYPE_CHECKING:`` (a lazy or annotation-only import does not make a circle acceptable)."""
    assert _cycles(ALL_IMPORTS) == []


def test_the_circle_finder_finds_a_circle():
    graph = {**GRAPH, "headprompt.models.hmm.values": GRAPH["headprompt.models.hmm.values"]
             | {"headprompt.verify.checks.vanilla.check"}}
    assert any("headprompt.models.hmm.values" in c for c in _cycles(graph))


def test_an_annotation_only_import_counts(tmp_path):
    """An import under ``if TYPE_CHECKING:`` (or inside a function) is an edge of
    :data:`ALL_IMPORTS`, so it can neither close a circle nor climb a floor unseen."""
    fake = tmp_path / "fake.py"
    fake.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..api import TheoremReport\n"
                    "def f():\n    from ..reports.render import console\n")
    name = "headprompt.verify.checks.fake"
    assert "headprompt.verify.api" not in _imports(name, fake)
    assert "headprompt.verify.reports.render" in _imports(name, fake)
    assert {"headprompt.verify.api", "headprompt.verify.reports.render"} <= _imports(name, fake, typing=True)
    assert (name, "headprompt.verify.api") in _upward_imports({**ALL_IMPORTS, name: _imports(name, fake, typing=True)})


# ---------------------------------------------------------------- the floors of verify

VERIFY = "headprompt.verify"
FLOORS = (
    ("runtime", ("runtime",)),                   # cost model, Ray, output paths: import no other floor
    ("checks", ("checks", "symbolic")),          # assumptions, witnesses, identities, decisions
    ("evidence", ("evidence",)),                 # sequence sets, certificates, robustness, searches
    ("reports", ("reports",)),                   # a check and its evidence assembled for CLI and API
    ("api", ("api",)),                           # check, load, TheoremReport, run_theorem
    ("studies", ("studies", "experiments")),     # explore, counterexample, separate, statements, Figure 3
    ("cli", ("cli", "__main__")),                # argparse and exit codes
)
"""The floors of ``headprompt.verify``, bottom to top, and the folders (or modules) each holds
(docs/architecture.md): a module may import its own floor and those below, never one above."""


def _floor(module: str) -> int | None:
    """The index in :data:`FLOORS` of a module of ``headprompt.verify`` (the package's own
    ``__init__``, which imports nothing, counts as the bottom), or None if no floor holds it."""
    if module == VERIFY:
        return 0
    rel = module[len(VERIFY) + 1:]
    for index, (_, roots) in enumerate(FLOORS):
        if any(rel == root or rel.startswith(root + ".") for root in roots):
            return index
    return None


def _upward_imports(graph) -> list[tuple[str, str]]:
    """Every import ``(module, imported)`` inside ``headprompt.verify`` from a lower floor to a
    higher one."""
    return sorted((m, e) for m, edges in graph.items() if m == VERIFY or m.startswith(VERIFY + ".")
                  for e in edges if e in MODULES and (e == VERIFY or e.startswith(VERIFY + "."))
                  and _floor(e) > _floor(m))


def test_every_verify_module_has_a_floor():
    """A new folder of ``verify/`` is given a floor here (and in docs/architecture.md) before it
    can pass."""
    verify = [m for m in MODULES if m == VERIFY or m.startswith(VERIFY + ".")]
    assert len(verify) > 60
    assert [m for m in verify if _floor(m) is None] == []


def test_verify_floors_run_one_way():
    """No import from a lower floor to a higher one: not at module level, not inside a function,
    not under ``if TYPE_CHECKING:``."""
    assert _upward_imports(ALL_IMPORTS) == []


@pytest.mark.parametrize("lower, upper", [("headprompt.verify.checks.vanilla.check", "headprompt.verify.api"),
                                          ("headprompt.verify.runtime.cost", "headprompt.verify.checks.registry"),
                                          ("headprompt.verify.evidence.construction", "headprompt.verify.reports.vanilla"),
                                          ("headprompt.verify.reports.rows", "headprompt.verify.studies.explore"),
                                          ("headprompt.verify.api", "headprompt.verify.cli.main")])
def test_the_floor_checker_flags_an_upward_import(lower, upper):
    """The checker is not vacuous: one injected edge up a floor is reported, and only that one."""
    graph = {**ALL_IMPORTS, lower: ALL_IMPORTS[lower] | {upper}}
    assert _upward_imports(graph) == [(lower, upper)]
    assert _upward_imports({**ALL_IMPORTS, upper: ALL_IMPORTS[upper] | {lower}}) == []       # downward is fine


def test_no_module_is_imported_by_a_computed_name():
    """A name given to ``importlib.import_module`` hides an arrow from the checks above; only
    the command line's table of subcommands (one floor, imported on demand for start-up time)
    imports by name."""
    users = sorted(m for m, p in MODULES.items() if m.startswith(VERIFY)
                   and any(isinstance(n, ast.Attribute) and n.attr == "import_module" or
                           isinstance(n, ast.Name) and n.id == "__import__" for n in ast.walk(ast.parse(p.read_text()))))
    assert users == ["headprompt.verify.cli.main"]


def test_every_package_folder_is_listed_in_pyproject():
    """A non-editable install ships only the packages pyproject.toml lists: every folder with an
    ``__init__.py`` under the four roots is there (and nothing listed is missing)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {m for m, p in MODULES.items() if p.name == "__init__.py"}
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - found == set(), "pyproject.toml lists packages that no longer exist"
    assert {name: (ROOT / folder).is_dir() for name, folder in config["package-dir"].items()} == \
        {name: True for name in FOLDERS.values()}


@pytest.mark.parametrize("lower, upper", [("headprompt.models", "headprompt.constructions"),
                                          ("headprompt.models", "headprompt.verify"),
                                          ("headprompt.constructions", "headprompt.verify")])
def test_data_flows_one_way(lower, upper):
    offenders = {m: sorted(e for e in edges if e.startswith(upper + ".") or e == upper)
                 for m, edges in GRAPH.items() if m.startswith(lower + ".")}
    assert {m: e for m, e in offenders.items() if e} == {}


def test_constructions_never_import_torch():
    def reaches_torch(m, seen):
        if m in seen:
            return False
        seen.add(m)
        edges = GRAPH.get(m, set())
        if any(e == "torch" or e.startswith("torch.") for e in edges):
            return True
        return any(reaches_torch(e, seen) for e in _internal(edges))

    for m in MODULES:
        if m.startswith("headprompt.constructions"):
            assert not reaches_torch(m, set()), m


def test_argparse_only_in_the_command_line_layer():
    users = sorted(m for m, edges in GRAPH.items() if "argparse" in edges)
    assert users and all(m.startswith("headprompt.verify.cli") for m in users), users


def test_no_subcommand_imports_another():
    cli = {m for m in MODULES if m.startswith("headprompt.verify.cli.")}
    shared = {"headprompt.verify.cli.main", "headprompt.verify.cli.options", "headprompt.verify.cli.sequence_text"}
    for m in cli - shared:
        assert not (_internal(GRAPH[m]) & (cli - shared)), m
