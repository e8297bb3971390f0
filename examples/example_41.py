"""Example 4.1 of the paper, runnable: sentences like "the cow in the pasture rolled on the grass
happily ." from a hand-built memory-augmented HMM, and a sentiment task solved by the attention
head of Theorem 4.3, verified exactly.

Memory cells (each with two values): subject (cow | dog), location (pasture | park) and
sentiment (happy | sad). Each cell has three syntax states, ``h = j * 3 + s``:

    subject:   0 article "the",  1 noun (cow / dog),        2 verb (rolled, ran, slept)
    location:  3 preposition,    4 noun (pasture, park, grass, bench),  5 article "the"
    sentiment: 6 adverb (happily / sadly),  7 full stop ".",  8 adjective (cheerful / gloomy)

A sentence runs ``the [adj] noun in the NOUN verb on the NOUN adverb .``, with variations
(the verb phrase or the second location phrase may be skipped). The task is sentiment
analysis: ``F*(x) = 1(P[happy | x] - P[sad | x] >= 0)`` (``j* = 2``, ``mu = (1, -1)``).

Assumption 4.2 holds with ``S* = {adverb, adjective}``: their emission columns are independent
and use words no other state emits, while the full stop's columns are equal (so Assumption
3.1 fails for this model). A sentence is in ``R`` when some position is surely an adverb or an
adjective given the other words, e.g. the word before "." (only the adverb precedes the full
stop). The attention head then attends exactly to those positions.

Run: ``python examples/example_41.py`` (exit code 0 when everything verifies).
"""

from __future__ import annotations

import sys
from fractions import Fraction as F
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from headprompt.constructions.memory import theorem_43_witness  # noqa: E402
from headprompt.models.inference.attention import attention, softmax_attention  # noqa: E402
from headprompt.models.inference import exact as ie  # noqa: E402
from headprompt.models.hmm.values import MemoryHMM  # noqa: E402
from headprompt.models.generate.sampling import sample  # noqa: E402
from headprompt.verify.checks.memory import assumptions as masm  # noqa: E402
from headprompt.verify.checks.memory.check import check_sequences, identity_check  # noqa: E402

VOCAB = ["the", "cow", "dog", "rolled", "ran", "slept", "in", "on", "pasture", "park", "grass",
         "bench", "happily", "sadly", ".", "cheerful", "gloomy"]
CELLS = ["subject", "location", "sentiment"]
VALUES = [["cow", "dog"], ["pasture", "park"], ["happy", "sad"]]
STATES = ["subj:article", "subj:noun", "subj:verb", "loc:prep", "loc:noun", "loc:article",
          "sent:adverb", "sent:stop", "sent:adjective"]
SENTENCE = "the cow in the pasture rolled on the grass happily ."

# emissions per state: {memory value: {word: probability}} (the same for both values when
# the state ignores its cell)
_EMIT = {
    0: [{"the": 1}, {"the": 1}],
    1: [{"cow": 1}, {"dog": 1}],
    2: [{"rolled": F(3, 5), "slept": F(2, 5)}, {"ran": F(3, 5), "rolled": F(1, 5), "slept": F(1, 5)}],
    3: [{"in": F(1, 2), "on": F(1, 2)}] * 2,
    4: [{"pasture": F(3, 5), "grass": F(2, 5)}, {"park": F(1, 2), "grass": F(1, 5), "bench": F(3, 10)}],
    5: [{"the": 1}, {"the": 1}],
    6: [{"happily": F(4, 5), "sadly": F(1, 5)}, {"sadly": F(7, 10), "happily": F(3, 10)}],
    7: [{".": 1}, {".": 1}],
    8: [{"cheerful": F(9, 10), "gloomy": F(1, 10)}, {"gloomy": F(4, 5), "cheerful": F(1, 5)}],
}
# transitions: {from: {to: probability}}
_NEXT = {
    0: {1: F(3, 4), 8: F(1, 4)},        # the -> [adjective] noun
    8: {1: 1},
    1: {3: F(3, 4), 2: F(1, 4)},        # noun -> "in the NOUN" or straight to the verb
    3: {5: 1},
    5: {4: 1},
    4: {2: F(1, 2), 6: F(1, 2)},        # location noun -> verb, or -> adverb (end of sentence)
    2: {3: F(2, 3), 6: F(1, 3)},        # verb -> "on the NOUN", or -> adverb
    6: {7: 1},
    7: {0: 1},                          # "." -> next sentence
}


def build_model() -> MemoryHMM:
    """The hand-built memory HMM (exact), with the sentiment task."""
    n, X = 9, len(VOCAB)
    A = [[F(0)] * n for _ in range(n)]
    for h, succ in _NEXT.items():
        for g, p in succ.items():
            A[g][h] = F(p)
    W = [[[F(0)] * n for _ in range(2)] for _ in range(X)]
    for h, per_value in _EMIT.items():
        for m, words in enumerate(per_value):
            for word, p in words.items():
                W[VOCAB.index(word)][m][h] = F(p)
    pi0 = [F(1, 80)] * n
    pi0[7] = 1 - F(8, 80)                  # mostly "just after a full stop"
    return MemoryHMM.create(3, 2, 3, A, W, pi0, pM_cells=[[F(1, 2)] * 2] * 3, mu=[1, -1], target_cell=2)


def words(tokens) -> str:
    return " ".join(VOCAB[z] for z in tokens)


def tokens_of(text: str) -> list[int]:
    return [VOCAB.index(w) for w in text.split()]


def show(model, witness, tokens, out) -> None:
    """Print the sentence with the attended positions in brackets, the posterior and F, F*."""
    emb = [list(model.emission_matrix()[z]) for z in tokens]
    G = [ie.memory_gbar(model, emb, i) for i in range(len(tokens))]
    res = attention(witness, G, emb)
    marked = " ".join(f"[{VOCAB[z]}]" if i in res.attended else VOCAB[z] for i, z in enumerate(tokens))
    post = ie.memory_posterior(model, tokens)
    f_star = int(post[0] - post[1] >= 0)
    d = check_sequences(model, witness, list(witness.H_star), [tokens], keep=True).decisions[0]
    where = (f"in R: positions {list(d.Z)} are surely in H* given the other words" if d.in_R
             else "not in R (no position is surely in H*): the theorem promises nothing here")
    out(f"  {marked}")
    out(f"    {where}")
    out(f"    attends to positions {list(res.attended)} ({', '.join(VOCAB[tokens[i]] for i in res.attended)}); "
        f"P[happy | x] = {float(post[0]):.4f}; F* = {f_star}, head F = {int(res.output >= 0)}")
    soft = [softmax_attention(witness, G, emb, query_scale=s) for s in (1, 10, 100)]
    out(f"    softmax head at query scale 1, 10, 100: {', '.join(f'{v:+.4f}' for v in soft)} "
        f"-> argmax head {float(res.output):+.4f}")


def main(argv=None, out=print) -> int:
    model = build_model()
    witness = theorem_43_witness(model)
    H_star = list(witness.H_star)
    checks = masm.check_all(model, "4.3")
    out("Example 4.1: memory cells " + ", ".join(f"{c} {v}" for c, v in zip(CELLS, VALUES))
        + f"; {len(VOCAB)} words; task: sentiment (cell {model.target_cell})")
    for name, res in checks.items():
        out(f"Assumption {name}: {'holds' if res['holds'] else 'FAILS'}: {res['why']}")
    out(f"recoverable states H* = {[STATES[h] for h in H_star]}")
    out("sentences (attended words in brackets):")
    main_sentence = tokens_of(SENTENCE)
    for text in (SENTENCE, "the dog ran on the park sadly .", "the gloomy cow slept happily . the",
                 "the cow in the pasture rolled on the grass"):
        show(model, witness, tokens_of(text), out)
    rng = np.random.default_rng(0)
    drawn, _, _ = sample(model.to_float(), 300, 11, rng=rng)
    seqs = [tuple(main_sentence)] + [tuple(int(z) for z in row) for row in drawn]
    out(f"a sampled sentence: {words(seqs[1])}")
    res = check_sequences(model, witness, H_star, seqs)
    idt = identity_check(model, witness, H_star)
    out(f"verified exactly on {res.checked} sequences: {res.in_R} in R, {res.agree} agree with F*, "
        f"{res.outside_R} outside R (not counted); attended set = Z on {res.attended_is_Z}")
    out(f"identity: {'holds' if idt['holds'] else 'fails'}: {idt['what']}")
    ok = all(c["holds"] for c in checks.values()) and res.agree == res.in_R > 0 and idt["holds"]
    out("verdict: " + ("verified" if ok else "NOT verified"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
