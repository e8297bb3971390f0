"""``verify separate``: its four claims, each against an independent check. Vanilla: Assumption
3.1 fails, 3.2 and 3.5 hold (brute-force oracles); the head certificate holds by path sums; the
prompt's identity holds in sympy and the prompt agrees with F* by path sums. Memory: the
attention head is verified by its identities; the no-linear-head certificate is accepted by the
standard-library checker. All four certificate files are accepted by certcheck, and each is
rejected once its claim is changed."""

import itertools
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import sympy

from headprompt.models.hmm.values import HMM
from headprompt.verify.studies.separation import CERTIFICATE_FILES

from tests import oracle


@pytest.fixture(scope="module")
def separation(tmp_path_factory):
    folder = tmp_path_factory.mktemp("separation")
    proc = subprocess.run([sys.executable, "-m", "headprompt.verify", "separate", "--certificate-dir", str(folder),
                           "--json"], capture_output=True, text=True, timeout=600)
    return proc.returncode, json.loads(proc.stdout), folder


def _certcheck(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "headprompt.certcheck", str(path)], capture_output=True, text=True,
                          timeout=300)


def test_every_half_is_proven_and_exit_0(separation):
    code, data, folder = separation
    assert code == 0 and data["proven"]
    halves = [data["vanilla"]["head"], data["vanilla"]["prompt"], data["memory"]["attention"], data["memory"]["linear"]]
    assert all(h["proven"] and h["certificate"] for h in halves)
    assert sorted(p.name for p in folder.iterdir()) == sorted(CERTIFICATE_FILES.values())


def _vanilla_model(folder: Path) -> HMM:
    inst = json.loads((folder / CERTIFICATE_FILES["prompt"]).read_text())["instance"]
    return HMM.create(inst["A"], inst["W"], inst["pi0"], inst["mu"])


def test_vanilla_assumptions_by_oracles(separation):
    hmm = _vanilla_model(separation[2])
    n = hmm.num_states
    assert oracle.sympy_rank([list(hmm.W[:, h]) for h in range(n)]) < n           # 3.1 fails
    assert oracle.is_ergodic_chain(oracle.as_lists(hmm.A), list(hmm.pi0))          # 3.2 holds
    assert oracle.assumption_35(hmm)                                                # 3.5 holds


def test_head_certificate_holds_by_path_sums(separation):
    hmm = _vanilla_model(separation[2])
    cert = json.loads((separation[2] / CERTIFICATE_FILES["head"]).read_text())
    seqs = cert["sequences"]
    assert max(map(len, seqs)) <= 4
    filler = [Fraction(1)] * hmm.num_states
    feats, labels = [], []
    for s in seqs:
        assert oracle.joint_probability(hmm, s) > 0
        post = oracle.path_posterior(hmm, s, 0)
        labels.append(int(sum(m * p for m, p in zip(hmm.mu, post)) >= 0))
        feats.append(oracle.path_gbar(hmm.A, hmm.W, hmm.pi0, [filler] + [list(hmm.W[z]) for z in s], 0))
    y = [Fraction(v) for v in cert["certificate"]["y"]]
    z = [Fraction(v) for v in cert["certificate"]["z"]]
    assert set(labels) == {0, 1} and all(v >= 0 for v in y + z) and any(y)
    assert all(not yk for yk, lab in zip(y, labels) if lab) and all(not zk for zk, lab in zip(z, labels) if not lab)
    assert all(sum((yk - zk) * g[x] for yk, zk, g in zip(y, z, feats)) == 0 for x in range(hmm.num_tokens))


def test_prompt_identity_in_sympy_and_agreement_by_path_sums(separation):
    hmm = _vanilla_model(separation[2])
    cert = json.loads((separation[2] / CERTIFICATE_FILES["prompt"]).read_text())
    R = lambda v: sympy.Rational(str(v))                                            # noqa: E731
    A = sympy.Matrix(oracle.as_lists(hmm.A)).applyfunc(R)
    W = sympy.Matrix(oracle.as_lists(hmm.W)).applyfunc(R)
    pi0 = sympy.Matrix([R(v) for v in hmm.pi0])
    u = sympy.Matrix([R(v) for v in cert["witness"]["u"]])
    b = sympy.Matrix([R(v) for v in cert["witness"]["b"]])
    pre = A * u.multiply_elementwise(A * pi0)
    lam = R(cert["identity"]["lambda"])
    assert lam > 0
    assert (b.T * W * sympy.diag(*pre)) == lam * sympy.Matrix([R(m) * p for m, p in zip(hmm.mu, pi0)]).T
    seqs = [[a] for a in range(hmm.num_tokens)] + [[a, c] for a in range(hmm.num_tokens) for c in range(hmm.num_tokens)]
    decisions = oracle.vanilla_decisions(hmm, "3.6", [Fraction(v) for v in cert["witness"]["b"]],
                                         [Fraction(v) for v in cert["witness"]["u"]], seqs)
    assert decisions and all(f_star == f for f_star, f in decisions.values())
    assert {f for f, _ in decisions.values()} == {0, 1}


def test_memory_halves(separation):
    data = separation[1]["memory"]
    assert data["assumptions"] == {"3.2": True, "4.2": True}
    assert "on every x in R" in data["attention"]["what"]
    cert = json.loads((separation[2] / CERTIFICATE_FILES["linear"]).read_text())
    assert set(cert["labels"]) == {0, 1} and cert["instance"]["kind"] == "memory-hmm"


@pytest.mark.parametrize("kind", sorted(CERTIFICATE_FILES))
def test_certcheck_accepts_each_file_and_rejects_a_changed_claim(separation, kind, tmp_path):
    path = separation[2] / CERTIFICATE_FILES[kind]
    ok = _certcheck(path)
    assert ok.returncode == 0 and ok.stdout.startswith("accepted"), ok.stdout + ok.stderr
    data = json.loads(path.read_text())
    if "certificate" in data:                         # a Motzkin certificate: drop its label-0 weights
        data["certificate"]["y"] = ["0"] * len(data["certificate"]["y"])
    else:                                             # a verified witness: change the head
        data["witness"]["b"] = ["0"] * len(data["witness"]["b"])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert _certcheck(bad).returncode == 1


def test_an_instance_where_head_tuning_works_is_not_a_separation(capsys, tmp_path):
    """|H| <= |X| with Assumption 3.1 holding: Theorem 3.3 verifies, so the head half is not shown
    and the command exits 5, no proof (never claims a separation it does not have, and never
    exits 1, which reads as a refutation)."""
    from headprompt.verify.cli.main import main
    from tests.cli import run_json

    inst = tmp_path / "v.json"
    assert main(["theorem", "3.3", "--hidden", "4", "--vocab", "5", "--samples", "20", "--out", str(inst)]) == 0
    capsys.readouterr()
    code, res, _ = run_json(capsys, ["separate", "--hmm", str(inst)])
    assert code == 5 and not res["proven"] and "memory" not in res
    assert not res["vanilla"]["head"]["proven"] and res["vanilla"]["assumptions"]["3.1"] is True
    assert res["vanilla"]["instance"]["source"] == str(inst)


def test_a_one_label_task_proves_no_prompt_half(tmp_path):
    """Found by an audit: on a task where F* takes one label (mu = (2, -1) with a posterior that
    never reaches 0, checked here by path sums), the prompt half was marked proven with no
    vacuity flag, while certcheck rejects its certificate as vacuous. A prompt that "works" there
    shows nothing; the half is not proven and no certificate is written."""
    inst = {"kind": "hmm", "A": [["1/3", "1/2"], ["2/3", "1/2"]], "W": [["1/2", "1/6"], ["1/3", "1/6"], ["1/6", "2/3"]],
            "pi0": ["1/4", "3/4"], "mu": ["2", "-1"]}
    hmm = HMM.create(inst["A"], inst["W"], inst["pi0"], inst["mu"])
    mu = [Fraction(v) for v in inst["mu"]]
    for t in (1, 2, 3):
        for s in itertools.product(range(3), repeat=t):
            post = oracle.path_posterior(hmm, list(s))
            assert sum(m * q for m, q in zip(mu, post)) < 0           # F* = 0 on every sequence tried
    path = tmp_path / "one.json"
    path.write_text(json.dumps(inst))
    folder = tmp_path / "certs"
    proc = subprocess.run([sys.executable, "-m", "headprompt.verify", "separate", "--hmm", str(path),
                           "--certificate-dir", str(folder), "--json"], capture_output=True, text=True, timeout=300)
    data = json.loads(proc.stdout)
    prompt = data["vanilla"]["prompt"]
    assert proc.returncode == 5 and not data["proven"]
    assert not prompt["proven"] and prompt["certificate"] is None and "vacuous" in prompt["what"]


def _cert(folder: Path, role: str) -> dict:
    return json.loads((folder / CERTIFICATE_FILES[role]).read_text())


def test_certcheck_checks_a_separation_as_one_claim(separation):
    """``certcheck --separation`` accepts the two halves ``verify separate`` writes (either order,
    both kinds), and rejects pairs that prove no separation: true certificates about two
    different instances (found by an audit: checked one file at a time, both passed), two halves
    of the same role, a vanilla half with a memory half, a half that is itself false."""
    from headprompt import certcheck

    folder = separation[2]
    head, prompt = _cert(folder, "head"), _cert(folder, "prompt")
    attention, linear = _cert(folder, "attention"), _cert(folder, "linear")
    for a, b in ((head, prompt), (prompt, head), (attention, linear)):
        assert certcheck.check_separation(a, b).startswith("accepted: separation on one instance")
    # a true Theorem 3.6 certificate of another instance: write one with verify
    other_dir = folder.parent / "other"
    other_dir.mkdir(exist_ok=True)
    other_path = other_dir / "p.json"
    subprocess.run([sys.executable, "-m", "headprompt.verify", "theorem", "3.6", "--hidden", "5", "--vocab", "3",
                    "--seed", "7", "--samples", "20", "--length", "2", "--certificate", str(other_path)],
                   capture_output=True, timeout=300, check=True)
    other = json.loads(other_path.read_text())
    assert certcheck.check(other).startswith("accepted")
    assert other["instance"]["A"] != prompt["instance"]["A"]          # independent: the files differ
    with pytest.raises(certcheck.Rejected, match="different instances"):
        certcheck.check_separation(head, other)
    with pytest.raises(certcheck.Rejected, match="needs one"):
        certcheck.check_separation(prompt, prompt)
    with pytest.raises(certcheck.Rejected, match="not one instance"):
        certcheck.check_separation(head, attention)
    false = json.loads(json.dumps(head))
    false["labels"] = [1 - v for v in false["labels"]]
    with pytest.raises(certcheck.Rejected, match="half 1"):
        certcheck.check_separation(false, prompt)
    # the command line: exit 0 on the pair, 1 on a mismatched pair, 2 on a wrong argument count
    run = lambda *a: subprocess.run([sys.executable, "-m", "headprompt.certcheck", "--separation", *map(str, a)],
                                    capture_output=True, text=True, timeout=300).returncode
    assert run(folder / CERTIFICATE_FILES["head"], folder / CERTIFICATE_FILES["prompt"]) == 0
    assert run(folder / CERTIFICATE_FILES["head"], other_path) == 1
    assert run(folder / CERTIFICATE_FILES["head"]) == 2
