"""Mutation harness: every accepted mutation of a true certificate is a true claim.

Certificates of all five theorems, the three verdicts, several classes and the statement-level
kinds are mutated field by field (numbers nudged, negated, zeroed; ids, verdicts, scopes,
claims and sources swapped; rows dropped, duplicated, emptied; keys deleted). The checker
either refuses the mutant (rejected or unreadable) or accepts it, and then the oracle of
:mod:`tests.certcheck.claims` (path sums, brute force, an LP; nothing from the checker) must
find the accepted line true.
"""

from __future__ import annotations

import copy
import random
from fractions import Fraction

import pytest

from headprompt import certcheck
from tests.certcheck.claims import claim_is_true

WORDS = {"theorem": ["3.3", "3.6", "4.3", "4.6", "C.6"], "verdict": ["verified", "refuted", "assumptions-fail"],
         "covers": ["identity", "listed"], "claim": ["theorem", "no-linear-head", "no-prompt-and-head"],
         "source": ["construction", "given"], "kind": ["hmm", "memory-hmm"], "prompts": ["all", "some"]}

NAMES = ["3.3", "3.6", "3.3-fails", "3.3-classes", "3.6-classes", "3.6-fails", "3.3-refuted", "3.6-refuted",
         "4.3", "4.6", "C.6", "4.6-classes", "4.3-fails", "4.6-refuted", "no-prompt-and-head", "3.6-prompt", "3.3-motzkin"]


def _sites(node, path=()):
    """Every (path, value) in the JSON tree, containers included."""
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _sites(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _sites(v, path + (i,))


def _is_rational(v):
    if not isinstance(v, str):
        return False
    try:
        Fraction(v)
        return True
    except (ValueError, ZeroDivisionError):
        return False


def _changes(path, value):
    """The replacement values tried at one site (``...`` deletes a dict key)."""
    key = path[-1] if path else None
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1, 0, 2]
    if isinstance(value, str) and key in WORDS:
        return [w for w in WORDS[key] if w != value]
    if isinstance(value, str) and key == "version":
        return []
    if _is_rational(value):
        v = Fraction(value)
        return [str(v + Fraction(1, 7)), str(-v), "0", "1", str(v / 2)]
    if value is None:
        return ["1/2"]
    if isinstance(value, list) and value:
        return [value[1:], value[:-1], value + value[:1], value[:1] + value, value[::-1], []]
    return []


def _mutants(cert, rng, limit):
    structural, numeric = [], []
    for path, value in _sites(cert):
        if not path:
            continue
        for new in _changes(path, value):
            (numeric if _is_rational(value) or isinstance(value, int) else structural).append((path, new))
        if isinstance(path[-1], str) and path[-1] not in ("format", "version"):
            structural.append((path, ...))
    rng.shuffle(numeric)
    rng.shuffle(structural)
    chosen = structural[:limit] + numeric[:limit]
    for path, new in chosen:
        mutant = copy.deepcopy(cert)
        node = mutant
        for k in path[:-1]:
            node = node[k]
        if new is ...:
            del node[path[-1]]
        else:
            node[path[-1]] = copy.deepcopy(new)
        yield path, new, mutant


@pytest.mark.parametrize("name", NAMES)
def test_every_accepted_mutation_is_true(certificates, name):
    cert = certificates[name]
    line = certcheck.check(copy.deepcopy(cert))
    assert claim_is_true(cert, line), f"the true certificate's line is judged false: {line}"
    memory = cert["instance"]["kind"] == "memory-hmm"
    rng = random.Random(hash(name) & 0xFFFF)
    tried = accepted = 0
    for path, new, mutant in _mutants(cert, rng, 25 if memory else 60):
        tried += 1
        try:
            said = certcheck.check(copy.deepcopy(mutant))
        except (certcheck.Rejected, certcheck.Unreadable):
            continue
        accepted += 1
        assert claim_is_true(mutant, said), f"{name}: mutation at {path} -> {str(new)[:60]} accepted as {said}"
    print(f"{name}: {tried} mutants, {accepted} accepted")
    assert tried >= 20


def _reprint(cert):
    """Every printed number and label of a vanilla certificate recomputed by path sums (the
    oracle), so that a forged certificate is consistent everywhere but in its claim."""
    from tests.certcheck.claims import plain, _label

    hmm = plain(cert["instance"])
    w = cert["witness"]
    b = [[Fraction(v) for v in w["b"]]] if not hmm.multi else [[Fraction(v) for v in r] for r in w["b"]]
    u = None if w.get("u") is None else [Fraction(v) for v in w["u"]]
    for row in cert["sequences"]:
        x = tuple(row["x"])
        prob, star = hmm.task(x)
        g = hmm.features(cert["theorem"], x, u)
        head = [sum(bb * gg for bb, gg in zip(r, g)) for r in b]
        if hmm.multi:
            row.update(task_scores=[str(v) for v in star], head_scores=[str(v) for v in head])
        else:
            row.update(task_margin=str(star[0]), head_margin=str(head[0]))
        row.update(F_star=_label(star, not hmm.multi), F=_label(head, not hmm.multi))


@pytest.mark.parametrize("name", ["3.3", "3.6", "3.3-classes", "3.3-refuted"])
def test_consistent_forgeries_are_rejected_or_true(certificates, name):
    """A random head, or a moved transition, with every printed number re-derived to match:
    only the claim itself can be false, and an accepted one must be true."""
    rng = random.Random(7)
    for trial in range(6):
        cert = copy.deepcopy(certificates[name])
        if trial % 2 == 0:
            w = cert["witness"]
            rand = lambda: str(Fraction(rng.randint(-9, 9), rng.randint(1, 5)))      # noqa: E731
            w["b"] = [[rand() for _ in r] for r in w["b"]] if isinstance(w["b"][0], list) else [rand() for _ in w["b"]]
        else:
            A = cert["instance"]["A"]
            col = rng.randrange(len(A))
            i, j = rng.sample(range(len(A)), 2)
            d = Fraction(A[i][col]) / 2
            A[i][col], A[j][col] = str(Fraction(A[i][col]) - d), str(Fraction(A[j][col]) + d)
        _reprint(cert)
        try:
            said = certcheck.check(copy.deepcopy(cert))
        except (certcheck.Rejected, certcheck.Unreadable):
            continue
        assert claim_is_true(cert, said), f"{name} trial {trial}: forged certificate accepted as {said}"
