"""Write ``examples/tour.ipynb`` from the cells below (nbformat 4.5, with cell ids); then run
``python examples/tools/execute_notebooks.py`` to execute it in place with its outputs.

Run:  python examples/tools/build_tour.py
"""

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

PATH = Path(__file__).resolve().parents[1] / "tour.ipynb"

CELLS = [
    ("md", """# A tour of headprompt

Wei, Xie and Ma (NeurIPS 2021) prove that on data from a hidden Markov model a linear head on a
pretrained masked LM's conditionals solves a downstream task under an assumption that is strong
(Theorem 3.3), and that prompt tuning weakens it (Theorem 3.6). This notebook uses the toolkit the
three ways it is meant for, all in exact arithmetic unless it says otherwise:

1. **a theorem on a generated instance** (a proof, with its report, rows and plot);
2. **a property test over random HMMs** (Hypothesis draws the instances);
3. **a counterexample when an assumption fails** (a certificate you can check by hand);

then **an hmmlearn fit checked end to end**, and **your own instance**, with why its verdict is what it is."""),
    ("code", """import headprompt

report = headprompt.check(None, "3.6", hidden=8, vocab=4, samples=500, length=5, seed=0)
report          # in a notebook: the report as a table"""),
    ("md", """`report.verdict == "verified"` is a proof here (exact rational arithmetic); `report.to_dict()`
is exactly what `verify theorem 3.6 --hidden 8 --vocab 4 --samples 500 --length 5 --json` prints, and
`print(report)` is the command's readable report. A verdict is evidence only when the task took both
labels on the sequences checked: on a one-label task any constant head agrees with `F*`. The report
says so in `vacuous`, which every check below asserts is false beside its verdict."""),
    ("code", """assert report.verdict == "verified" and report.exit_code == 0
assert not report.vacuous, report.to_dict()["labels"]   # both labels of F* occurred
print(report)"""),
    ("md", """## Rows and margins

One row per checked sequence: `F*(x)` (the task), the witness's `F(x)`, and the two margins whose
signs they are: the task margin `mu . P[H_0 | x]` and the head margin `b . Gbar_2(ehat(x))`.
By default the margins are floats with a certified error bound; `exact=True` gives the exact
values, shown as decimals with the exact fraction a column away."""),
    ("code", """rows = report.rows()
print(len(rows), "rows; the first:", rows[0])
frame = report.to_frame(exact=True)
frame[["sequence", "F_star", "F", "task_margin", "task_margin_exact", "head_margin"]].head()"""),
    ("md", """The generated instance contains an exact tie (`mu . P[H_0 | x] = 0`, a sequence on the threshold:
`F* = 1(0 >= 0) = 1`), marked in the plot; the shaded band is the smallest head margin the report
guarantees (its robustness radius times `||b||_1`)."""),
    ("code", """fig = report.plot()"""),
    ("md", """## A property test over random HMMs

`headprompt.strategies` holds Hypothesis strategies: `hmms(theorem="3.6")` draws instances on which
every assumption of Theorem 3.6 holds by construction, with a task `mu` that takes both labels on
the short sequences every check reads (`allow_one_label=True` keeps one-label tasks too). The
property: the paper's prompt and head agree with `F*` on every sequence of length at most 3,
exactly, and the check was not vacuous."""),
    ("code", """from hypothesis import given, settings

from headprompt.strategies import hmms

seen = []


@settings(max_examples=12, deadline=None, database=None)
@given(hmms(theorem="3.6"))
def prompt_tuning_works(hmm):
    r = headprompt.check(hmm, "3.6", exhaustive=True, length=3)
    labels = r.to_dict()["labels"]
    seen.append((hmm.num_states, hmm.num_tokens, labels["0"], labels["1"]))
    assert r.verdict == "verified", r
    assert not r.vacuous, labels          # both labels occurred: the check could have failed


prompt_tuning_works()
print(f"{len(seen)} random instances, all verified, none vacuous; (|H|, |X|, sequences with F* = 0, with F* = 1):")
print(seen)"""),
    ("md", """## A counterexample when an assumption fails

With `|H| = 8 > |X| = 4`, the emission matrix cannot have full column rank: Assumption 3.1 fails,
and the report carries a **Motzkin certificate** that *no* linear head on `G_1` computes the task
on a handful of sequences: nonnegative weights `y` on label-0 rows and `z` on label-1 rows with
`sum y_k g_k = sum z_k g_k` exactly. (JSON calls it `kind: "no-linear-head"`.)"""),
    ("code", """broken = headprompt.check(None, "3.3", hidden=8, vocab=4, samples=500, length=5, seed=0)
assert broken.verdict == "assumptions-fail" and broken.exit_code == 3
print(broken)"""),
    ("md", """Checking the certificate by hand, with nothing but fractions: if some `b` gave `b . g_k >= 0` on
the label-1 rows and `< 0` on the label-0 rows, then `b . (sum z g) >= 0 > b . (sum y g)` (some `y`
is positive), contradicting `sum y g = sum z g`."""),
    ("code", """from fractions import Fraction

ce = broken.to_dict()["counterexample"]
g = [[Fraction(v) for v in row] for row in ce["features"]]
y = [Fraction(v) for v in ce["certificate"]["y"]]
z = [Fraction(v) for v in ce["certificate"]["z"]]
labels = ce["labels"]                                   # y lives on label-0 rows, z on label-1 rows
assert all(w == 0 for w, lab in zip(y, labels) if lab == 1) and all(w == 0 for w, lab in zip(z, labels) if lab == 0)
left = [sum(w * row[j] for w, row in zip(y, g)) for j in range(len(g[0]))]
right = [sum(w * row[j] for w, row in zip(z, g)) for j in range(len(g[0]))]
assert left == right and min(y + z) >= 0 and any(y)
print(f"{len(ce['sequences'])} sequences, labels {ce['labels']}: sum y g = sum z g holds exactly")"""),
    ("md", """## An hmmlearn fit, checked end to end

A true 3-state chain (with exact zeros in `A`) generates data; hmmlearn fits a `CategoricalHMM`.
The fit has no exact zeros and sums that are 1 only up to rounding, so exact mode refuses it;
`rationalize=` prunes tiny entries to exact zeros, rounds, renormalises exactly and reports how far
the model moved, and the verdict is proven on that exact model. (`HMM.from_hmmlearn` and
`HMM.from_dynamax` also take float32 fits: they renormalise and warn with the distance moved.)"""),
    ("code", """import numpy as np
from hmmlearn.hmm import CategoricalHMM

A_true = np.array([[0.7, 0.0, 0.5], [0.3, 0.6, 0.0], [0.0, 0.4, 0.5]])     # A[to, from]
W_true = np.array([[0.80, 0.10, 0.05], [0.10, 0.80, 0.05], [0.05, 0.05, 0.80], [0.05, 0.05, 0.10]])
stationary = np.linalg.solve(np.vstack([A_true - np.eye(3), np.ones(3)])[1:], np.r_[0.0, 0.0, 1.0])
truth = headprompt.HMM.create(A_true, W_true, stationary, exact=False).to_hmmlearn(random_state=0)
X, _ = truth.sample(6000, random_state=0)

fit = CategoricalHMM(n_components=3, n_features=4, n_iter=60, tol=1e-9, params="te", init_params="",
                     implementation="scaling")
fit.startprob_ = np.full(3, 1 / 3)
fit.transmat_ = np.full((3, 3), 1 / 3)
fit.emissionprob_ = np.array([[0.4, 0.2, 0.2, 0.2], [0.2, 0.4, 0.2, 0.2], [0.2, 0.2, 0.4, 0.2]])
fit.fit(X, [100] * 60)
A_fit = fit.transmat_.T                                  # observed at stationarity: start law = stationary law
fit.startprob_ = np.linalg.lstsq(np.vstack([A_fit - np.eye(3), np.ones(3)]), np.r_[0.0, 0.0, 0.0, 1.0],
                                 rcond=None)[0]
order = np.argmax(fit.emissionprob_[:, :3], axis=1)      # name each learned state by its main token
learned = headprompt.HMM.from_hmmlearn(fit, mu=np.array([1.0, -1.0, 0.0])[order])
print("smallest fitted transition:", f"{learned.A.min():.1e}", "(the truth has exact zeros)")

learned_report = headprompt.check(learned, "3.6", rationalize=0.02, samples=2000, length=6, seed=0)
print(learned_report)"""),
    ("code", """assert learned_report.verdict == "verified" and not learned_report.vacuous
conv = learned_report.to_dict()["instance"]["rationalized"]
rob = learned_report.to_dict()["robustness"]
print(f"verdict {learned_report.verdict}; pruned {conv['pruned_entries']} entries; column distances "
      f"tv_A = {conv['column_tv']['A']['approx']:.2g}, tv_W = {conv['column_tv']['W']['approx']:.2g}")
carries = rob["transfer"]["agreement_carries"]
print(f"robustness radius {rob['radius']:.3g}; the verdict carries over to the float fit, proven, on "
      f"{carries} of {rob['transfer']['sequences']} checked sequences")
if not carries:
    print("pruning moved the chain (tv_A above) by more than the head's margins can absorb: the proof is "
          "about the rationalized model; a smaller threshold moves it less")"""),
    ("md", """## Your own instance

Instances are plain values: column-stochastic `A` (`|H| x |H|`, `A[to, from]`) and `W` (`|X| x |H|`),
`pi0` and the task `mu`; entries may be fractions given as strings. Below, every transition is
positive, so the chain is irreducible and **aperiodic** (Assumption 3.2), and `W`'s two columns are
independent (Assumption 3.1): Theorem 3.3 applies, and the check proves it on every sequence up to
length 6."""),
    ("code", """hmm = headprompt.HMM.create([["1/2", "1/3"], ["1/2", "2/3"]],       # A: every transition positive
                            [["3/4", "1/4"], ["1/4", "3/4"]],       # W: independent columns
                            ["1/2", "1/2"], mu=[1, -1])
mine = headprompt.check(hmm, "3.3", exhaustive=True, length=6)
assert mine.verdict == "verified" and not mine.vacuous
print(mine)"""),
    ("md", """Why a verdict is what it is: the assumptions table says which hypothesis holds and why. A chain
that alternates deterministically (`A = [[0, 1], [1, 0]]`) has period 2, so Assumption 3.2
(aperiodicity) fails; the theorem then says nothing about it, and the report's verdict is
`assumptions-fail` (exit 3): not a refutation, an honest "the theorem does not apply here"."""),
    ("code", """periodic = hmm.create([[0, 1], [1, 0]], hmm.W, hmm.pi0, mu=[1, -1])
why = headprompt.check(periodic, "3.3", exhaustive=True, length=4)
print(why.verdict, "-", why.to_dict()["assumptions"]["3.2"]["why"])"""),
]


def main() -> None:
    cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src) for kind, src in CELLS]
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"display_name": "Python 3", "language": "python",
                                                            "name": "python3"},
                                             "language_info": {"name": "python"}})
    nb.nbformat, nb.nbformat_minor = 4, 5
    for k, cell in enumerate(nb.cells):
        cell["id"] = f"tour-{k:02d}"                     # stable ids: diffs stay small
    nbformat.validate(nb)
    nbformat.write(nb, PATH)
    print(f"wrote {PATH} ({len(cells)} cells)")


if __name__ == "__main__":
    main()
