"""The robustness block reuses the certified check's backward contractions: the same report as
a fresh backward pass (which is the reference here), on sequences of two lengths."""

import numpy as np

from headprompt.constructions.vanilla import theorem_36_witness
from headprompt.models.generate.generators import prompt_friendly_hmm
from headprompt.verify.evidence import sequences as seqs
from headprompt.verify.evidence.robustness import robustness_block
from headprompt.verify.checks.vanilla.check import check_sequences, identity_check


def test_reused_messages_give_the_same_robustness_block():
    hmm, _ = prompt_friendly_hmm(40, 12, rng=np.random.default_rng(0))
    w = theorem_36_witness(hmm)
    lam = identity_check(hmm, "3.6", w.b, w.u)["lambda"]
    pool = seqs.sampled(hmm, 300, 6, rng=np.random.default_rng(1)) + seqs.sampled(hmm, 100, 3,
                                                                                   rng=np.random.default_rng(2))
    res = check_sequences(hmm, "3.6", w.b, w.u, pool, mode="certified", lam=lam)
    assert [m[1] for m in res.messages] == [3, 6]            # one contraction per length group
    reused = robustness_block(hmm, "3.6", w.b, w.u, pool, messages=res.messages)
    fresh = robustness_block(hmm, "3.6", w.b, w.u, pool)
    assert reused == fresh and reused["counted_sequences"] == res.checked
