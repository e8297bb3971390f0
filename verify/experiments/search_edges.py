"""How often each fair search's selection sat on an edge of what it searched (SPEC: every tuned
hyperparameter lands inside its search), read from ``results.csv`` rows alone.

A row's ``searched`` column lists ``config:val_accuracy`` in the order of the search's axis
(:mod:`models.mlm.fair`); its ``selected`` column names the configuration kept. The edge rule
is :func:`models.mlm.fair.edge_of`: a selection on the first or last configuration is on an
edge, and the edge *beats its neighbour* when its validation accuracy is strictly above its one
neighbour's (then the search stopped while still climbing; a tie on the edge is the tie rule
choosing, not the search wanting to go on). ``l2=0`` is the unregularised end of the convex
head's regularisation path, past which there is nothing to search: it is counted apart
(``path_end``), not as an edge.
"""

from __future__ import annotations

from ...models.mlm.fair import edge_of

__all__ = ["parse_searched", "row_edge", "edge_table", "edge_text"]


def parse_searched(text: str) -> list[tuple[str, float]]:
    """``"l2=1:0.9800 l2=0.01:0.9900"`` -> ``[("l2=1", 0.98), ("l2=0.01", 0.99)]`` (axis order)."""
    out = []
    for item in str(text or "").split():
        name, _, value = item.rpartition(":")
        out.append((name, float(value)))
    return out


def row_edge(row: dict) -> tuple[str, bool] | None:
    """``(edge, beats)`` of a search row (:func:`models.mlm.fair.edge_of`), ``None`` for a row
    without a search."""
    searched = parse_searched(row.get("searched", ""))
    if not searched or not row.get("selected"):
        return None
    return edge_of(str(row["selected"]), searched)


def edge_table(records: list) -> list[dict]:
    """Per (model, method) with a search: ``selections``, ``on_edge``, ``edge_beats``, ``path_end`` (counts),
    their shares, and ``edges`` (``{"low": n, "high": n}``)."""
    table: dict = {}
    for r in records:
        e = row_edge(r)
        if e is None:
            continue
        t = table.setdefault((r["model"], r["method"]), {"model": r["model"], "method": r["method"],
                                                        "selections": 0, "on_edge": 0, "edge_beats": 0,
                                                        "path_end": 0, "edges": {"low": 0, "high": 0}})
        t["selections"] += 1
        if str(r["selected"]) == "l2=0":
            t["path_end"] += 1
        elif e[0]:
            t["on_edge"] += 1
            t["edges"][e[0]] += 1
            t["edge_beats"] += bool(e[1])
    out = []
    for key in sorted(table):
        t = table[key]
        out.append({**t, "on_edge_share": t["on_edge"] / t["selections"],
                    "edge_beats_share": t["edge_beats"] / t["selections"]})
    return out


def edge_text(table: list) -> list[str]:
    """One line per (model, method) of :func:`edge_table`."""
    return [f"{t['model']} {t['method']}: {t['on_edge']} of {t['selections']} selections on an edge "
            f"(low {t['edges']['low']}, high {t['edges']['high']}), {t['edge_beats']} "
            f"({100 * t['edge_beats_share']:.0f}%) beating their neighbour"
            + (f"; {t['path_end']} at l2=0, the end of the regularisation path" if t.get("path_end") else "")
            for t in table]
