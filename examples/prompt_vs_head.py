"""Theorem 3.3 vs Theorem 3.6 on one hand-made HMM, through the Python API.

Four hidden states, three tokens. States 0 and 1 are "essential": the task asks which of them
H_0 is more likely to be. W's four columns in R^3 are dependent (so Assumption 3.1 fails and
no linear head on G_1 is guaranteed), but state 3 moves only to states 0 and 1, whose emission
columns are independent (Assumption 3.5 with B = {3}, H* = {0, 1}). The prompt u = 1_B
conditions the chain on having passed through state 3, which removes the non-essential states
from Gbar_2, and a linear head then reads the task off exactly.

Run:  python examples/prompt_vs_head.py
"""

from fractions import Fraction as F

from headprompt.constructions.vanilla import find_essential_sets, theorem_36_witness
from headprompt.models.hmm.values import HMM
from headprompt.verify.checks.vanilla import assumptions
from headprompt.verify.evidence.certificates import check_no_linear_head_certificate, find_no_linear_head_certificate
from headprompt.verify.evidence.sequences import exhaustive
from headprompt.verify.checks.vanilla.check import check_sequences, identity_check

# A[h2, h1] = Pr(H_i = h2 | H_{i-1} = h1): columns are "from" states
A = [[0, F(1, 2), F(1, 3), F(1, 2)],
     [0, 0, F(1, 3), F(1, 2)],
     [F(1, 2), F(1, 2), 0, 0],
     [F(1, 2), 0, F(1, 3), 0]]
W = [[F(7, 10), F(1, 10), F(1, 3), F(1, 2)],
     [F(2, 10), F(8, 10), F(1, 3), F(1, 4)],
     [F(1, 10), F(1, 10), F(1, 3), F(1, 4)]]
pi0 = [F(1, 4)] * 4
mu = [1, -1, 0, 0]                       # F*(x) = 1(P[H_0 = 0 | x] >= P[H_0 = 1 | x])

hmm = HMM.create(A, W, pi0, mu)
print("Assumption 3.1:", assumptions.check_31(hmm)["why"])
print("Assumption 3.2:", assumptions.check_32(hmm)["why"])
sets = find_essential_sets(hmm)
print(f"Assumption 3.5: H* = {list(sets.H_star)}, B = {list(sets.B)}")

witness = theorem_36_witness(hmm, sets)
print("prompt u =", [str(v) for v in witness.u])
print("head   b =", [str(v) for v in witness.b])
print("identity:", identity_check(hmm, "3.6", witness.b, witness.u)["what"])

sequences = exhaustive(3, 6)
result = check_sequences(hmm, "3.6", witness.b, witness.u, sequences)
print(f"Theorem 3.6: {result.agree}/{result.checked} sequences of length <= 6 agree with F* "
      f"(exact; {result.ties} ties at mu.p = 0, {result.outside_support} impossible sequences skipped)")
assert result.agree == result.checked

cert = find_no_linear_head_certificate(hmm, exhaustive(3, 5))
if cert is None:
    print("Theorem 3.3's conclusion is not refuted on sequences of length <= 5 (a linear head may fit them)")
else:
    ok, why = check_no_linear_head_certificate(hmm, cert)
    print(f"Theorem 3.3: no linear head on G_1(x') fits F* on {cert['sequences']}: {why} (checked: {ok})")
