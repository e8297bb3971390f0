"""Issue 37, the checker's third pass: claims that combine (separation pairs, a third
certificate on the same instance), vacuity judged by the features, counts of distinct
sequences, and output that survives any locale. What the checker accepts is judged by the
independent oracle of :mod:`tests.certcheck.claims` (path sums in Fractions and an LP; it
shares no code with the checker)."""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys
from fractions import Fraction

import pytest

from headprompt import certcheck
from tests.certcheck.claims import _label, _no_head, claim_is_true, plain

HEAD = {"format": certcheck.FORMAT, "version": certcheck.VERSION}

# The issue's instance: 4 states, 3 tokens; states 0 and 1 are twins in W (equal columns), so
# Assumption 3.5 fails (any H* covering supp(mu) = {0, 1} has dependent columns); A is
# irreducible and aperiodic with pi0 > 0 (3.2 holds); x_1 tells H_0 = 0 from H_0 = 1.
TWIN = {"kind": "hmm",
        "A": [["0", "0", "1/4", "1/4"], ["0", "0", "1/4", "1/4"], ["3/4", "1/4", "1/4", "1/4"],
              ["1/4", "3/4", "1/4", "1/4"]],
        "W": [["1/3", "1/3", "3/4", "0"], ["1/3", "1/3", "0", "3/4"], ["1/3", "1/3", "1/4", "1/4"]],
        "pi0": ["1/4"] * 4, "mu": ["1", "-1", "0", "0"]}

# State 2 is never entered (row 2 of A is zero), so A pi0 has no mass there and the prompt
# u = [0, 0, 1] gives tau = 0, Gbar_2 = 0 for every x, exactly as u = 0 does (3.2 fails).
DEAD = {"kind": "hmm", "A": [["1", "0", "1/2"], ["0", "1", "1/2"], ["0", "0", "0"]],
        "W": [["1", "0", "1/2"], ["0", "1", "1/2"]], "pi0": ["1/3", "1/3", "1/3"], "mu": ["1", "-1", "0"]}


def _q(values):
    return [Fraction(v) for v in values]


def _listed_36(instance, u, b, seqs, **extra):
    """A Theorem 3.6 ``verified``, ``covers: "listed"`` certificate whose printed values are the
    oracle's (path sums); the checker recomputes every one."""
    hmm = plain(instance)
    rows = []
    for x in seqs:
        prob, star = hmm.task(x)
        g = hmm.features("3.6", x, _q(u))
        head = sum(bb * gg for bb, gg in zip(_q(b), g))
        rows.append({"x": list(x), "task_margin": str(star[0]), "head_margin": str(head),
                     "F_star": _label(star, True), "F": _label([head], True)})
    return {**HEAD, "theorem": "3.6", "claim": "theorem", "instance": instance, "verdict": "verified",
            "assumptions": {}, "witness": {"b": [str(v) for v in b], "u": [str(v) for v in u], "source": "given"},
            "covers": "listed", "sequences": rows, **extra}


def _motzkin(instance, theorem, claim, seqs, y, z, **extra):
    hmm = plain(instance)
    labels = [_label(hmm.task(x)[1], True) for x in seqs]
    return {**HEAD, "theorem": theorem, "claim": claim, "instance": instance, "sequences": [list(x) for x in seqs],
            "labels": labels, "certificate": {"y": y, "z": z}, **extra}


def _fitting_head(instance, u, seqs):
    """A head ``b`` with ``F = F*`` on ``seqs`` for the prompt ``u`` (the oracle's features), or
    None: the midpoint of the two labels' extreme scores along ``g(a) - g(b)``."""
    hmm = plain(instance)
    feats = {x: hmm.features("3.6", x, _q(u)) for x in seqs}
    labels = {x: _label(hmm.task(x)[1], True) for x in seqs}
    ones = [x for x in seqs if labels[x] == 1]
    zeros = [x for x in seqs if labels[x] == 0]
    d = [a - c for a, c in zip(feats[ones[0]], feats[zeros[0]])]
    score = {x: sum(p * q for p, q in zip(d, feats[x])) for x in seqs}
    lo, hi = min(score[x] for x in ones), max(score[x] for x in zeros)
    if lo <= hi:
        return None
    t = (lo + hi) / 2                     # every feature sums to 1, so b = d - t 1 shifts each score by -t
    return [v - t for v in d]


def _twin_pair():
    """The issue's false separation: a 3.6 prompt and head right on two length-2 sequences, and
    a 3.3 no-linear-head certificate on [0] and [1], where no prompt and head fit either."""
    u = ["1", "1", "1", "1"]
    works_on = [(0, 2), (1, 1)]
    b = _fitting_head(TWIN, u, works_on)
    assert b is not None
    working = _listed_36(TWIN, u, b, works_on)
    failing = _motzkin(TWIN, "3.3", "no-linear-head", [(0,), (1,)], ["0", "1"], ["1", "0"])
    nobody = _motzkin(TWIN, "3.6", "no-prompt-and-head", [(0,), (1,)], ["0", "1"], ["1", "0"], prompts="all")
    return working, failing, nobody, (u, b)


def _cli(*args, env=None):
    done = subprocess.run([sys.executable, "-m", "headprompt.certcheck", *map(str, args)], capture_output=True,
                          text=True, timeout=120, env=env)
    return done.returncode, (done.stdout + done.stderr).strip()


def test_the_false_separation_of_the_issue_is_rejected(tmp_path):
    working, failing, nobody, (u, b) = _twin_pair()
    for cert in (working, failing, nobody):           # each is true alone (the oracle agrees)
        line = certcheck.check(copy.deepcopy(cert))
        assert claim_is_true(cert, line), line
    with pytest.raises(certcheck.Rejected, match=r"does not cover the failing half's sequences: 2 of the 2"):
        certcheck.check_separation(working, failing)
    paths = []
    for name, cert in (("w", working), ("f", failing)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(cert))
    code, out = _cli("--separation", *paths)
    assert code == 1 and out.startswith("rejected: the working half does not cover") and len(out.splitlines()) == 1
    # the third certificate on the instance is no half of a separation (it says prompts fail too)
    with pytest.raises(certcheck.Rejected, match="needs one"):
        certcheck.check_separation(working, nobody)
    # the oracle: no prompt at all fits [0], [1] (features of every 0/1 prompt and random ones)
    hmm = plain(TWIN)
    rng = random.Random(5)
    for prompt in [[Fraction(int(c)) for c in f"{k:04b}"] for k in range(1, 16)] + \
                  [[Fraction(rng.randint(0, 9), 9) for _ in range(4)] for _ in range(20)]:
        feats = [hmm.features("3.6", x, prompt) for x in [(0,), (1,)]]
        assert _no_head(feats, [_label(hmm.task(x)[1], True) for x in [(0,), (1,)]])


def test_a_working_half_that_lists_the_failing_sequences_is_refuted_there():
    """Covering the failing half's sequences by listing them cannot be forged here: a
    no-prompt-and-head certificate holds on them, so the working half, printed truthfully,
    disagrees with F* on one and is rejected; the pair is then rejected as half 1."""
    working, failing, nobody, (u, b) = _twin_pair()
    wider = _listed_36(TWIN, u, b, [(0, 2), (1, 1), (0,), (1,)])
    assert any(r["F"] != r["F_star"] for r in wider["sequences"])
    with pytest.raises(certcheck.Rejected, match="disagrees with F"):
        certcheck.check(wider)
    with pytest.raises(certcheck.Rejected, match="half 1"):
        certcheck.check_separation(wider, failing)
    forged = copy.deepcopy(wider)              # the same rows with the labels F reprinted as F*
    for r in forged["sequences"]:
        r["F"] = r["F_star"]
    with pytest.raises(certcheck.Rejected):
        certcheck.check_separation(forged, failing)


@pytest.fixture(scope="module")
def separated(tmp_path_factory):
    """The four certificates ``verify separate`` writes."""
    from headprompt.verify.studies.separation import CERTIFICATE_FILES
    folder = tmp_path_factory.mktemp("separated")
    done = subprocess.run([sys.executable, "-m", "headprompt.verify", "separate", "--certificate-dir", str(folder),
                           "--json"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return {k: json.loads((folder / name).read_text()) for k, name in CERTIFICATE_FILES.items()}


def test_verify_separate_pairs_are_accepted_and_name_the_covered_set(separated):
    line = certcheck.check_separation(separated["prompt"], separated["head"])
    n = len(separated["head"]["sequences"])
    assert line.startswith(f"accepted: separation on one instance, on the {n} sequences the no-linear-head half lists "
                           "(every sequence with Pr(x) > 0, by the identity)")
    line = certcheck.check_separation(separated["linear"], separated["attention"])
    n = len({tuple(s) for s in separated["linear"]["sequences"]})
    assert line.startswith(f"accepted: separation on one instance, on the {n} sequences the no-linear-head half lists "
                           "(each listed in R in the working half)")
    in_R = {tuple(r["x"]) for r in separated["attention"]["sequences"] if r["in_R"]}
    assert {tuple(s) for s in separated["linear"]["sequences"]} <= in_R
    # the oracle: on the linear half's sequences no linear head on G_1 fits (LP on path sums)
    assert claim_is_true(separated["linear"], certcheck.check(separated["linear"]))


def test_a_memory_pair_whose_failing_sequences_leave_R_is_rejected(separated):
    attention = copy.deepcopy(separated["attention"])
    linear = separated["linear"]
    first = [list(s) for s in linear["sequences"]][0]
    kept = [r for r in attention["sequences"] if r["x"] != first]
    attention["sequences"] = kept                     # still a true certificate, about fewer sequences
    certcheck.check(attention)
    with pytest.raises(certcheck.Rejected, match="not listed in R in the working half"):
        certcheck.check_separation(attention, linear)


def test_a_half_may_spell_the_shared_instance_otherwise(separated):
    """Reusing the other half's instance is checked value by value, not by spelling: integers
    written as JSON integers are the same instance; one changed value is another instance."""
    head = copy.deepcopy(separated["head"])
    respell = lambda v: int(v) if "/" not in v else v       # noqa: E731  ("1" and 1 are one value)
    head["instance"]["A"] = [[respell(v) for v in row] for row in head["instance"]["A"]]
    head["instance"]["mu"] = [respell(v) for v in head["instance"]["mu"]]
    assert head["instance"] != separated["head"]["instance"]
    assert certcheck.check_separation(separated["prompt"], head).startswith("accepted: separation")
    other = copy.deepcopy(separated["head"])
    other["instance"]["mu"] = [str(-Fraction(v)) for v in other["instance"]["mu"]]
    with pytest.raises((certcheck.Rejected, certcheck.Unreadable)):
        certcheck.check_separation(separated["prompt"], other)


def test_listed_working_halves_by_subsets_and_the_oracle(separated):
    """A vanilla pair whose working half lists a random subset of sequences (printed by the
    oracle): accepted exactly when the subset covers the failing half's sequences, and then the
    separation holds by path sums (the witness right on each) and the LP (no head on G_1)."""
    prompt, head = separated["prompt"], separated["head"]
    w = prompt["witness"]
    needed = [tuple(s) for s in head["sequences"]]
    hmm = plain(prompt["instance"])
    extra = [tuple(r["x"]) for r in prompt["sequences"] if len(r["x"]) <= 3][:6]
    rng = random.Random(11)
    outcomes = set()
    for trial in range(8):
        pool = needed + extra
        chosen = [x for x in pool if rng.random() < 0.7] or pool[:1]
        working = _listed_36(prompt["instance"], w["u"], w["b"], list(dict.fromkeys(chosen)))
        try:
            line = certcheck.check_separation(working, head)
        except certcheck.Vacuous:
            continue
        except certcheck.Rejected as exc:
            assert not set(needed) <= set(chosen), exc
            outcomes.add("rejected")
            continue
        outcomes.add("accepted")
        assert set(needed) <= set(chosen)
        for x in needed:                                   # the working half's witness is right on each
            prob, star = hmm.task(x)
            g = hmm.features("3.6", x, _q(w["u"]))
            assert prob > 0 and _label(star, True) == _label([sum(a * c for a, c in zip(_q(w["b"]), g))], True)
        labels = [_label(hmm.task(x)[1], True) for x in needed]
        assert _no_head([hmm.features("3.3", x) for x in needed], labels), line
    assert outcomes == {"accepted", "rejected"}


# ---------------------------------------------------------------- vacuity judged by the features

def test_an_unreachable_prompt_is_vacuous_like_u_0():
    hmm = plain(DEAD)
    seqs = [(0,), (1,)]
    assert all(not any(hmm.features("3.6", x, _q(["0", "0", "1"]))) for x in seqs)   # the oracle: all zero
    assert [_label(hmm.task(x)[1], True) for x in seqs] == [1, 0]
    one = _motzkin(DEAD, "3.6", "no-linear-head", seqs, ["0", "1"], ["1", "0"], prompt=["0", "0", "1"])
    with pytest.raises(certcheck.Vacuous, match="all zero"):
        certcheck.check(one)
    entry = {k: one[k] for k in ("sequences", "labels", "certificate", "prompt")}
    failed = {**HEAD, "theorem": "3.6", "claim": "theorem", "instance": DEAD, "verdict": "assumptions-fail",
              "assumptions": {"3.2": {"holds": False, "why": "state 2 is never entered"}}, "motzkin": [entry]}
    with pytest.raises(certcheck.Vacuous, match="all zero"):
        certcheck.check(failed)
    del failed["motzkin"]                           # the assumption alone is a true, non-vacuous claim
    assert certcheck.check(failed).startswith("accepted: Theorem 3.6 assumptions-fail: Assumption 3.2 fails")


def test_a_prompt_that_makes_all_features_equal_is_vacuous():
    """u = [1, 1, 0, 0] on the twin instance reaches states 2 and 3 only through the twins,
    whose rows of A agree: every Gbar_2 is the same vector (the oracle), so no head could tell
    [0] from [1]; the claim is vacuous. G_1's equal features there are the instance's own
    failure (Theorem 3.3's conclusion fails) and are accepted."""
    hmm = plain(TWIN)
    u = ["1", "1", "0", "0"]
    feats = [hmm.features("3.6", x, _q(u)) for x in [(0,), (1,)]]
    assert feats[0] == feats[1] and any(feats[0])
    cert = _motzkin(TWIN, "3.6", "no-linear-head", [(0,), (1,)], ["0", "1"], ["1", "0"], prompt=u)
    with pytest.raises(certcheck.Vacuous, match="all equal"):
        certcheck.check(cert)
    g1 = [hmm.features("3.3", x) for x in [(0,), (1,)]]
    assert g1[0] == g1[1]
    line = certcheck.check(_motzkin(TWIN, "3.3", "no-linear-head", [(0,), (1,)], ["0", "1"], ["1", "0"]))
    assert line.startswith("accepted: no linear head b on G_1")


# ---------------------------------------------------------------- counts of distinct sequences

def test_repeated_rows_are_counted_once(certificates):
    cert = copy.deepcopy(certificates["4.3"])
    in_R = [r for r in cert["sequences"] if r["in_R"]]
    a = next(r for r in in_R if r["F_star"] == 1)
    b = next(r for r in in_R if r["F_star"] == 0)
    cert["sequences"] = [a] + [b] * 1000
    line = certcheck.check(cert)
    assert "on the 2 listed sequences in R (of 2 distinct listed, 999 repeated rows counted once" in line
    assert claim_is_true(cert, line)
    cert["sequences"][5] = {**b, "F": 1 - b["F"]}
    with pytest.raises(certcheck.Rejected, match=r"sequences\[5\] repeats the sequence of sequences\[1\]"):
        certcheck.check(cert)
    van = copy.deepcopy(certificates["3.6"])
    van["sequences"] = van["sequences"] + van["sequences"][:3]
    line = certcheck.check(van)
    assert f"{len(van['sequences']) - 3} distinct sequences recomputed, 3 repeated rows counted once" in line
    motz = copy.deepcopy(certificates["3.3-motzkin"])
    seqs = motz["sequences"]
    motz.update(sequences=seqs + seqs, labels=motz["labels"] * 2,
                certificate={k: v + ["0"] * len(v) for k, v in motz["certificate"].items()})
    line = certcheck.check(motz)
    assert f"on these {len(seqs)} sequences ({len(seqs)} repeated row" in line


# ---------------------------------------------------------------- any locale

def test_output_survives_an_ascii_terminal(tmp_path, certificates):
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "LC_ALL": "C", "LANG": "C"}
    for name in ("3.3-motzkin", "3.6", "no-prompt-and-head"):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(certificates[name]))
        code, out = _cli(path, env=env)
        assert code == 0 and out.startswith("accepted") and out.isascii(), out
        code_utf8, out_utf8 = _cli(path, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
        assert code_utf8 == 0
        for symbol, text in (("∅", "{}"), ("⊙", "*")):
            out_utf8 = out_utf8.replace(symbol, text)
        assert out == out_utf8
    assert "G_1({}, x)" in _cli(tmp_path / "3.3-motzkin.json", env=env)[1]


@pytest.mark.parametrize("where", ["key", "value", "notes"])
def test_a_lone_surrogate_is_a_format_error_before_any_claim(tmp_path, certificates, where):
    cert = copy.deepcopy(certificates["3.6"])
    cert["sequences"][0]["task_margin"] = "1/3"          # a false claim: without the surrogate, exit 1
    text = json.dumps(cert)
    if where == "key":
        text = text.replace('"witness": {', '"witness": {"\\ud800": 1, ', 1)
    elif where == "value":
        text = text.replace('"source": "', '"source": "\\ud800', 1)
    else:
        text = text[:-1] + ', "notes": "\\udc00 x"}'
    path = tmp_path / "s.json"
    path.write_text(text)
    for env in ({**os.environ, "PYTHONIOENCODING": "utf-8"}, {**os.environ, "PYTHONIOENCODING": "ascii"}):
        code, out = _cli(path, env=env)
        assert code == 2 and "lone surrogate" in out and len(out.splitlines()) == 1, out
    with pytest.raises(certcheck.Unreadable, match="lone surrogate"):
        certcheck.check(certcheck.loads(text))


def test_verify_leaves_out_what_the_checker_calls_vacuous():
    """verify's writer and the checker judge a prompt's Motzkin certificate alike: found by
    verify's own search on the unreachable prompt u = [0, 0, 1], it is left out of a written
    certificate (its features are all zero) and the checker rejects it as vacuous; on a prompt
    that reaches the states both keep it."""
    import headprompt
    from headprompt.verify.evidence.certificate import _informative, evidence_certificate
    from headprompt.verify.evidence.certificates import find_no_linear_head_certificate

    hmm = headprompt.HMM.create(DEAD["A"], DEAD["W"], DEAD["pi0"], DEAD["mu"])
    found = find_no_linear_head_certificate(hmm, [(0,), (1,), (0, 0), (1, 1)], prompt=[0, 0, 1])
    assert found is not None and not _informative(found, "3.6")
    with pytest.raises(certcheck.Vacuous, match="all zero"):
        certcheck.check(evidence_certificate(hmm, "3.6", found))
    twin = headprompt.HMM.create(TWIN["A"], TWIN["W"], TWIN["pi0"], TWIN["mu"])
    equal = find_no_linear_head_certificate(twin, [(0,), (1,)], prompt=[1, 1, 0, 0])
    assert equal is not None and not _informative(equal, "3.6")
    with pytest.raises(certcheck.Vacuous, match="all equal"):
        certcheck.check(evidence_certificate(twin, "3.6", equal))
    g1 = find_no_linear_head_certificate(twin, [(0,), (1,)])            # G_1: the instance's own failure
    assert g1 is not None and _informative(g1, "3.3")
    assert certcheck.check(evidence_certificate(twin, "3.3", g1)).startswith("accepted")
