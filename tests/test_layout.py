"""The package's architecture, checked on its source: data flows models -> constructions ->
verify, no import circle (module-level or inside functions), argparse only in ``verify/cli/``,
no torch in ``constructions/``, and no subcommand importing another."""

import ast
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


def _imports(module: str, path: Path) -> set[str]:
    """Every module of the package that ``module`` imports, wherever the import statement is
    (except under ``if TYPE_CHECKING:``);
    ``from pkg import name`` counts ``pkg.name`` when that is a module, else ``pkg``."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = set()
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and getattr(block.test, "id", None) == "TYPE_CHECKING" for n in ast.walk(block)}
    for node in ast.walk(tree):
        if id(node) in typing_only:          # annotations only: never imported at run time
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


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def _internal(edges):
    return {e for e in edges if e in MODULES}


def test_the_walk_sees_the_package():
    assert len(MODULES) > 70
    assert "headprompt.verify.checks.vanilla.check" in GRAPH["headprompt.verify.reports.vanilla"]


def _cycles():
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in _internal(GRAPH[v]):
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

    for v in GRAPH:
        if v not in index:
            visit(v)
    return comps


def test_no_import_circle():
    global GRAPH
    saved = GRAPH
    # edges into a package's own __init__ from below are parent-package imports Python makes
    # anyway; count only module -> module edges between different packages' contents
    GRAPH = {m: {e for e in edges if not (e in MODULES and MODULES[e].name == "__init__.py" and m.startswith(e + "."))}
             for m, edges in saved.items()}
    try:
        assert _cycles() == []
    finally:
        GRAPH = saved


def test_the_circle_finder_finds_a_circle():
    global GRAPH
    saved = GRAPH
    GRAPH = {**saved, "headprompt.models.hmm.values": saved["headprompt.models.hmm.values"]
             | {"headprompt.verify.checks.vanilla.check"}}
    try:
        assert any("headprompt.models.hmm.values" in c for c in _cycles())
    finally:
        GRAPH = saved


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
