"""Drawing the task ``mu`` of a generated instance so that it is never vacuous: both labels (or
every class) on a real share of screened sequences, with an exact tie at the threshold, each
claim checked as a fact (SPEC section 4: generated instances are never vacuous). The model
generators (:mod:`.generators`, :mod:`.memory`) call these with their own posteriors."""

from __future__ import annotations

import numpy as np

from ..hmm.values import HMM

__all__ = ["MIN_LABEL_SHARE", "task_with_tie", "draw_task", "class_share", "draw_class_task"]

MIN_LABEL_SHARE = 0.10
"""Each label of a generated task holds on at least this share of screened sequences
(SPEC section 4: generated instances are never vacuous)."""


def task_with_tie(hmm: HMM, support, *, rng: np.random.Generator, tie_sequence=None) -> np.ndarray:
    """A task ``mu`` supported on ``support`` (integers in -5..5, then one coordinate moved so
    that ``mu . P[H_0 | X = tie_sequence] = 0`` exactly): a real tie at the threshold, which
    float arithmetic alone cannot decide. No check of the labels' shares; generated theorem
    instances use :func:`draw_task`."""
    from fractions import Fraction

    from ..inference.exact import posterior_h0

    support = sorted(int(h) for h in support)
    mu = np.array([Fraction(0)] * hmm.num_states, dtype=object)
    for h in support:
        mu[h] = Fraction(int(rng.choice([-5, -4, -3, -2, -1, 1, 2, 3, 4, 5])))
    if tie_sequence is not None and support:
        post = posterior_h0(hmm, tie_sequence)
        k = max(support, key=lambda h: post[h])
        if post[k] != 0:
            mu[k] -= sum(mu[h] * post[h] for h in support) / post[k]
    return mu


def draw_task(size: int, support, *, rng: np.random.Generator, exact_posterior, float_posteriors,
              tie_candidates, screen, min_share: float = MIN_LABEL_SHARE, attempts: int = 40):
    """A task ``mu`` on ``support`` that gives both labels on a real share of sequences, with an
    exact tie, each claim checked as a fact.

    Each attempt draws integers in ``±1..5`` on ``support`` with both signs (when
    ``|support| >= 2``), then moves one coordinate so that ``mu . p = 0`` exactly for the
    posterior ``p = exact_posterior(x)`` of the first candidate ``x`` whose posterior has at
    least two nonzero entries on ``support`` (a tie where the task really weighs states
    against each other). The attempt is kept when, on the screening sequences ``screen``
    (posteriors ``float_posteriors(screen)``, ``[n, size]``), each label ``1(mu . p >= 0)``
    holds on at least ``min_share`` of them (float only screens; reports count labels exactly).

    Args:
        exact_posterior: ``x -> list[Fraction]`` (the posterior ``F*`` reads).
        float_posteriors: ``tokens [n, T] -> [n, size]`` float posteriors.
        tie_candidates: sequences to try for the tie, in order.
        screen: ``[n, T]`` token array of sequences that count.

    Returns:
        ``(mu, facts)``: ``facts`` holds ``tie_sequence`` (or None when no candidate allows a
        tie), ``label_shares`` ``{"0": share, "1": share}`` on the screen, ``balanced`` (both
        shares reached ``min_share``) and ``why`` when they did not.
    """
    from fractions import Fraction

    from ..hmm.task import labels as task_labels

    support = sorted(int(h) for h in support)
    posts = np.asarray(float_posteriors(screen), dtype=float) if len(screen) else np.zeros((0, size))
    exact_posts = []
    for x in tie_candidates:
        p = exact_posterior(list(x))
        if sum(1 for h in support if p[h] != 0) >= 2:
            exact_posts.append((list(x), p))
        if len(exact_posts) >= 8:
            break
    best = None
    for attempt in range(attempts):
        mu = [Fraction(0)] * size
        values = [int(v) for v in rng.integers(1, 6, size=len(support))]
        signs = [1 if v else -1 for v in rng.integers(0, 2, size=len(support))]
        if len(support) >= 2 and len(set(signs)) == 1:
            signs[int(rng.integers(len(support)))] *= -1
        for h, v, sg in zip(support, values, signs):
            mu[h] = Fraction(sg * v)
        tie = None
        if exact_posts:
            x, p = exact_posts[attempt % len(exact_posts)]
            k = max(support, key=lambda h: p[h])
            moved = mu[k] - sum(mu[h] * p[h] for h in support) / p[k]
            if moved != 0:
                mu[k] = moved
                if sum(m * q for m, q in zip(mu, p)) == 0:          # the claim, checked
                    tie = x
        n = len(posts)
        ones = int(task_labels(posts @ np.array([float(m) for m in mu])).sum()) if n else 0
        shares = {"0": (n - ones) / n if n else 0.0, "1": ones / n if n else 0.0}
        score = min(shares.values()) + (0.001 if tie is not None else 0.0)
        if best is None or score > best[0]:
            best = (score, mu, tie, shares)
        if min(shares.values()) >= min_share and (tie is not None or not exact_posts):
            break
    _, mu, tie, shares = best
    facts = {"tie_sequence": tie, "label_shares": {k: round(v, 4) for k, v in shares.items()},
             "balanced": min(shares.values()) >= min_share}
    if len(support) < 2:
        facts["why"] = (f"supp(mu) has {len(support)} entry, so F* = 1(mu . p >= 0) takes one label "
                        "wherever that state has positive posterior: the sizes make a two-label task impossible")
    elif not facts["balanced"]:
        facts["why"] = (f"no task drawn in {attempts} attempts gave each label on {min_share:.0%} of "
                        f"{len(posts)} screened sequences (best shares {facts['label_shares']})")
    return np.array(mu, dtype=object), facts


def class_share(classes: int) -> float:
    """The share each class of a generated ``k``-class task must reach: the binary 10% rule,
    lowered to ``1 / (2k)`` when ``k`` classes cannot all have 10%."""
    return min(MIN_LABEL_SHARE, 1.0 / (2 * classes))


def draw_class_task(size: int, support, classes: int, *, rng: np.random.Generator, exact_posterior,
                    float_posteriors, tie_candidates, screen, attempts: int = 40, rounds: int = 60):
    """A ``classes x size`` task ``mu`` on ``support`` (``F* = argmax_c mu_c . p``, ties to the
    largest class) under which every class holds on a real share (:func:`class_share`) of the
    screening sequences, with an exact tie between the two best classes, each claim checked.

    Each attempt draws integer rows in ``-20..20`` on ``support``, then up to ``rounds`` times
    adds 1 on ``support`` to the row of the rarest class (raising its score by the posterior
    mass on ``support``, so it wins more sequences). For a tie it takes the first candidate
    ``x`` (exact posterior ``p``) whose two best classes ``c1, c2`` differ and moves one
    coordinate of ``mu_{c2}`` so that ``mu_{c2} . p = mu_{c1} . p`` exactly. Floats only
    screen; reports count labels exactly. Arguments as :func:`draw_task`.

    Returns:
        ``(mu, facts)``: ``facts`` holds ``tie_sequence`` (or None), ``label_shares``
        ``{"0": share, ..., "k-1": share}``, ``balanced`` and ``why`` when unbalanced.
    """
    from fractions import Fraction

    from ..hmm.task import class_label, class_labels, task_scores

    support = sorted(int(h) for h in support)
    k, need = int(classes), class_share(classes)
    posts = np.asarray(float_posteriors(screen), dtype=float) if len(screen) else np.zeros((0, size))
    on = np.zeros(size)
    on[support] = 1.0
    n = len(posts)

    def shares_of(M: np.ndarray) -> np.ndarray:
        if not n:
            return np.zeros(k)
        return np.bincount(class_labels(posts @ M.T), minlength=k)[:k] / n

    best = None
    for _ in range(attempts):
        M = np.zeros((k, size))
        M[:, support] = rng.integers(-20, 21, size=(k, len(support)))
        sh = shares_of(M)
        for _ in range(rounds):
            if sh.min() >= need:
                break
            M[int(np.argmin(sh))] += on
            sh = shares_of(M)
        if best is None or sh.min() > best[0]:
            best = (float(sh.min()), M.copy(), sh)
        if sh.min() >= need:
            break
    _, M, sh = best
    mu = [[Fraction(int(v)) for v in row] for row in M]
    tie = None
    for x in tie_candidates:
        p = exact_posterior(list(x))
        scores = task_scores(mu, p)
        order = sorted(range(k), key=lambda c: (scores[c], c))
        c1, c2 = order[-1], order[-2]
        j = max(support, key=lambda h: p[h]) if support else None
        if j is None or p[j] == 0 or scores[c1] == scores[c2]:
            continue
        trial = [row[:] for row in mu]
        trial[c2][j] += (scores[c1] - scores[c2]) / p[j]
        ts = task_scores(trial, p)
        if ts[c1] == ts[c2] == max(ts) and class_label(ts) == max(c1, c2):      # the claim, checked
            trial_sh = shares_of(np.array([[float(v) for v in row] for row in trial]))
            if trial_sh.min() >= min(need, sh.min()):
                mu, sh, tie = trial, trial_sh, list(x)
                break
    facts = {"tie_sequence": tie, "label_shares": {str(c): round(float(v), 4) for c, v in enumerate(sh)},
             "balanced": bool(sh.min() >= need), "classes": k}
    if len(support) < 2:
        facts["why"] = (f"supp(mu) has {len(support)} entry, so argmax_c mu_c . p is the same class wherever "
                        "that state has positive posterior: the sizes make a several-class task impossible")
    elif not facts["balanced"]:
        facts["why"] = (f"no task drawn in {attempts} attempts gave each of the {k} classes {need:.0%} of "
                        f"{n} screened sequences (best shares {facts['label_shares']})")
    return np.array(mu, dtype=object), facts


def _task_text(facts: dict) -> str:
    """What the report may say about a drawn task: only the checked facts of :func:`draw_task`."""
    shares = facts["label_shares"]
    if facts.get("classes"):
        text = (f"mu with {facts['classes']} rows (F* = argmax_c mu_c . p), classes "
                + "/".join(shares) + " on " + "/".join(f"{v:.0%}" for v in shares.values())
                + " of 400 screened sampled sequences")
    else:
        text = (f"mu with both signs, labels 0/1 on {shares['0']:.0%}/{shares['1']:.0%} of 400 screened "
                "sampled sequences")
    if facts.get("tie_sequence") is not None:
        text += (f", and an exact tie {'between the two best classes' if facts.get('classes') else 'mu . p = 0'} "
                 f"on {list(facts['tie_sequence'])} (checked exactly)")
    else:
        text += " (no exact tie was found among the candidate sequences)"
    if facts.get("why"):
        text += "; " + facts["why"]
    return text
