"""The one definition of ``F*`` for tasks with several classes (SPEC section 1): argmax with ties
to the largest class, exact; two rows are the binary rule with ``mu_1 - mu_0``."""

from __future__ import annotations

from fractions import Fraction as Fr

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headprompt.models.exceptions import ValidationError
from headprompt.models.generate.strategies import hmms
from headprompt.models.hmm.task import (class_label, class_labels, is_multiclass, label, num_classes,
                                        task_label, task_margin)
from headprompt.models.hmm.values import HMM
from tests import oracle

fractions = st.fractions(min_value=-5, max_value=5, max_denominator=7)


def _last_argmax(values):
    """The oracle: the largest index among the maxima, by a plain scan from the end."""
    top = max(values)
    return max(c for c, v in enumerate(values) if v == top)


@settings(max_examples=200, deadline=None)
@given(st.lists(fractions, min_size=1, max_size=6))
def test_class_label_is_the_last_maximum(scores):
    assert class_label(scores) == _last_argmax(scores)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(-3, 3), min_size=4, max_size=4), min_size=1, max_size=20))
def test_class_labels_rowwise_agree_with_the_scan(rows):
    arr = np.array(rows, dtype=float)
    assert class_labels(arr).tolist() == [_last_argmax(r) for r in rows]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(fractions, fractions, fractions), min_size=1, max_size=5))
def test_two_rows_are_the_binary_rule_with_the_difference(entries):
    mu0 = [e[0] for e in entries]
    mu1 = [e[1] for e in entries]
    p = [abs(e[2]) for e in entries]
    diff = [b - a for a, b in zip(mu0, mu1)]
    # by hand: 1(sum (mu1 - mu0) p >= 0), ties (difference 0) are label 1 = the larger class
    expected = int(sum(d * q for d, q in zip(diff, p)) >= 0)
    assert task_label([mu0, mu1], p) == expected == task_label(diff, p)


@settings(max_examples=25, deadline=None)
@given(hmms(num_states=st.integers(1, 3), num_tokens=st.integers(1, 2), classes=2),
       st.lists(st.integers(0, 1), min_size=1, max_size=2))
def test_two_row_task_on_path_sum_posteriors_is_the_binary_difference(hmm, tokens):
    tokens = [z % hmm.num_tokens for z in tokens]
    post = oracle.path_posterior(hmm, tokens, 0)          # brute-force path sums
    mu0, mu1 = hmm.mu
    assert hmm.mu.shape == (2, hmm.num_states)
    assert task_label(hmm.mu, post) == label(task_margin(mu1 - mu0, post))


@settings(max_examples=20, deadline=None)
@given(hmms(theorem="3.6", classes=3))
def test_strategy_classes_keep_the_family_support(hmm):
    assert hmm.mu.shape == (3, hmm.num_states)
    row0 = {h for h in range(hmm.num_states) if hmm.mu[0][h] != 0}
    union = {h for row in hmm.mu for h in range(hmm.num_states) if row[h] != 0}
    assert union == row0                     # the assumptions read supp(mu): unchanged


def test_ties_go_to_the_largest_class_exactly():
    # scores 1/3, 1/3, 1/3 - 10^-30: classes 0 and 1 tie at the top; floats could not see the gap
    tiny = Fr(1, 10**30)
    assert class_label([Fr(1, 3), Fr(1, 3), Fr(1, 3) - tiny]) == 1
    assert class_label([Fr(1, 3), Fr(1, 3) - tiny, Fr(1, 3)]) == 2


def test_matrix_mu_is_accepted_and_a_one_row_matrix_refused():
    A, W, pi0 = [[1, 0], [0, 1]], [["3/4", "1/4"], ["1/4", "3/4"]], ["1/2", "1/2"]
    h = HMM.create(A, W, pi0, [[1, -1], [0, 2], [0, 0]])
    assert is_multiclass(h.mu) and num_classes(h.mu) == 3 and num_classes([1, 2]) == 2
    with pytest.raises(ValidationError, match=r"k >= 2"):
        HMM.create(A, W, pi0, [[1, -1]])
    with pytest.raises(ValidationError, match="mu"):
        HMM.create(A, W, pi0, [[1, -1, 0], [0, 0, 1]])
