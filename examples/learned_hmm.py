"""A learned HMM, end to end: hmmlearn fit -> explicit rationalization -> exact Theorem 3.6 check.

A "true" chain with a sparse transition matrix generates data; hmmlearn fits a
CategoricalHMM to it. The fitted model has no exact zeros (EM leaves about 1e-3 where the truth
has 0) and columns that sum to 1 only up to float rounding, so exact mode refuses it and
Assumption 3.5 (a condition on the zero pattern of A) would fail trivially. `rationalize`
prunes entries below a threshold to exact zeros, rounds the rest to a bounded denominator,
renormalises exactly and reports how far the model moved; `headprompt.check` then proves
Theorem 3.6 on the exact model, and the report says what the verdict means for the learned
one: the witness's smallest margin, its robustness radius, and on how many checked sequences
the verdict provably carries over (the change bound stays inside the margins).

Run:  python examples/learned_hmm.py      (about 10 s)
"""

from fractions import Fraction

import numpy as np
from hmmlearn.hmm import CategoricalHMM

import headprompt
from headprompt.models.inference import floats as iff
from headprompt.models.hmm.rationalize import rationalize

# ---------------------------------------------------------------- the truth and its data
# A[h2, h1] = Pr(H_i = h2 | H_{i-1} = h1). Column 0 reaches only states {0, 1}, whose emission
# columns are independent: Assumption 3.5 with B = {0}, H* = {0, 1}. mu lives on H*.
A_true = np.array([[0.7, 0.0, 0.5],
                   [0.3, 0.6, 0.0],
                   [0.0, 0.4, 0.5]])
W_true = np.array([[0.80, 0.10, 0.05],
                   [0.10, 0.80, 0.05],
                   [0.05, 0.05, 0.80],
                   [0.05, 0.05, 0.10]])
mu_true = np.array([1.0, -1.0, 0.0])

stationary = np.linalg.solve(np.vstack([A_true - np.eye(3), np.ones(3)])[1:], np.r_[np.zeros(2), 1.0])
truth = headprompt.HMM.create(A_true, W_true, stationary, exact=False).to_hmmlearn(random_state=0)
X, _ = truth.sample(8000, random_state=0)               # one long run observed at stationarity

# ---------------------------------------------------------------- fit with hmmlearn
# a generic start for EM: uniform transitions, each state leaning towards a different token
fitted = CategoricalHMM(n_components=3, n_features=4, n_iter=80, tol=1e-9, params="te", init_params="",
                        implementation="scaling")
fitted.startprob_ = np.full(3, 1 / 3)
fitted.transmat_ = np.full((3, 3), 1 / 3)
fitted.emissionprob_ = np.array([[0.4, 0.2, 0.2, 0.2], [0.2, 0.4, 0.2, 0.2], [0.2, 0.2, 0.4, 0.2]])
fitted.fit(X, [100] * 80)
# hmmlearn's start law is our P[H_1] = A pi0. The data are observed at stationarity, so the start
# law is the stationary law of the fitted chain, which pi0 = that law reaches (A pi0 = pi0).
A_fit = fitted.transmat_.T
fitted.startprob_ = np.linalg.lstsq(np.vstack([A_fit - np.eye(3), np.ones(3)]), np.r_[np.zeros(3), 1.0],
                                    rcond=None)[0]
# EM labels states in its own order: name each learned state by the token it emits most
order = np.argmax(fitted.emissionprob_[:, :3], axis=1)     # learned state k ~ true state order[k]
assert sorted(order) == [0, 1, 2], f"EM did not separate the states: {order}"
learned = headprompt.HMM.from_hmmlearn(fitted, mu=mu_true[order])
print(f"learned model: |H| = {learned.num_states}, |X| = {learned.num_tokens}; smallest entry of A: "
      f"{learned.A.min():.2e} (the truth has exact zeros)")

try:
    headprompt.check(learned, "3.6")
except headprompt.InputError as exc:
    print(f"as it is, the learned model is refused by exact mode:\n  {exc}")
else:
    raise AssertionError("a float model must not be checked exactly without an explicit conversion")

# ---------------------------------------------------------------- rationalize and check
threshold = 0.02
conversion = rationalize(learned, prune_below=threshold)
print(conversion.describe())
report = headprompt.check(learned, "3.6", rationalize=threshold, samples=2000, length=6, seed=0)
data = report.to_dict()
print(f"\nTheorem 3.6 on the rationalized model: {report.verdict} (exit code {report.exit_code}); "
      f"H* = {data['witness']['H_star']}, B = {data['witness']['B']}, "
      f"{data['sequences']['agree']}/{data['sequences']['checked']} sequences agree with F*")
assert report.verdict == "verified" and report.exit_code == 0
assert data["instance"]["rationalized"]["pruned_entries"] == conversion.pruned >= 3

rob = data["robustness"]
print(f"smallest margin |b . g| = {rob['min_margin']:.3g}; robustness radius (sup norm) = {rob['radius']:.3g}: "
      "the prompt and head keep every verdict on any model whose Gbar_2(ehat(x)) moves less than that")
t = rob["transfer"]
print(f"the rationalization moves the path law by at most delta_L = {float(conversion.path_tv(8)):.3g} "
      f"(L = 8); its per-sequence change bound stays inside the margins on {t['agreement_carries']} of "
      f"{t['sequences']} checked sequences: there the learned model's head agrees with its F* too, proven"
      + ("" if t["agreement_carries"] else " (pruning moved the chain too much for the margins; the proof "
                                           "covers the rationalized model)"))
assert 0 <= t["agreement_carries"] <= t["sequences"] == data["sequences"]["checked"]

# ---------------------------------------------------------------- what the exact verdict is about
print("\nThe exact verdict is about the rationalized model. On the learned float model itself, "
      "float arithmetic (uncertified) with the same prompt and head gives:")
u = np.array([float(v) for v in data["witness"]["u"]])
b = np.array([float(Fraction(v)) for v in data["witness"]["b"]])
rng = np.random.default_rng(1)
seqs = rng.integers(4, size=(500, 6))
agree = 0
for x in seqs:
    emb = np.vstack([u, np.ones(3), learned.W[x]])                      # ehat(x) = (u, e(empty), e(x))
    g = iff.gbar(learned, emb[None], 1)[0]
    post = iff.posterior_h0(learned, [list(x)])[0]
    agree += int(b @ g >= 0) == int(learned.mu @ post >= 0)
print(f"  agreement with F* on {agree}/{len(seqs)} random sequences of length 6 (uncertified)")
