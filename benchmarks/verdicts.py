"""Benchmark: verdicts per second (exact, certified, float) and float smoothing beside the peers.

Run by hand (peers from the ``bench`` extra: ``pip install -e ".[bench]"``):

    python benchmarks/verdicts.py [--batch 1000] [--verdicts 20000] [--repeat 3]

Part 1, the verdict kernel of ``verify theorem 3.6`` (``verify.vanilla.check_sequences`` on a
generated |H| = 25, |X| = 10 instance, sequences sampled from it, T in {16, 129}): sequences
per second for ``exact`` (python-flint integers, on a subset), ``certified`` (the float
kernel with the a priori rounding-error bound, exact fallbacks included) and ``float``
(uncertified), and certified / float.

Part 2, float smoothing (``P[H_i | X_{1:T}]`` at every position, batch of sequences, |X| = 10,
|H|, T in {10, 25} x {10, 129}): ``models.inference_float.posterior_marginals`` beside
hmmlearn's ``predict_proba``, dynamax's ``hmm_smoother`` (JAX, jit + vmap, float64) and
pomegranate's ``DenseHMM.predict_proba`` (torch, float32), all in this run, with ratios
ours / peer. A missing peer is named and skipped. Each figure is the best of ``--repeat``
timed runs after one warm-up (compilation excluded).
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from benchmarks.timing import best_time


def verdict_rates(count: int, exact_count: int, repeat: int) -> None:
    from headprompt.constructions.vanilla import theorem_36_witness
    from headprompt.models.generate.generators import prompt_friendly_hmm
    from headprompt.models.generate.sampling import sample
    from headprompt.verify.checks.vanilla.check import check_sequences, identity_check

    hmm, _ = prompt_friendly_hmm(25, 10, rng=np.random.default_rng(0))
    w = theorem_36_witness(hmm)
    lam = identity_check(hmm, "3.6", w.b, w.u)["lambda"]
    print(f"verdicts, Theorem 3.6, |H| = 25, |X| = 10 (sequences/s; exact on {exact_count} sequences)")
    print(f"{'T':>5} {'exact':>10} {'certified':>10} {'float':>10} {'cert/float':>10}  certified decided by")
    for T in (16, 129):
        tokens, _ = sample(hmm.to_float(), count, T, rng=np.random.default_rng(T))
        rates, paths = {}, None
        for mode in ("certified", "float"):
            def run(mode=mode):
                return check_sequences(hmm, "3.6", w.b, w.u, tokens, mode=mode, lam=lam)
            rates[mode] = count / best_time(run, repeat)
            if mode == "certified":
                paths = run().decided_by
        sub = [tuple(r) for r in tokens[:exact_count].tolist()]
        rates["exact"] = len(sub) / best_time(lambda: check_sequences(hmm, "3.6", w.b, w.u, sub, lam=lam), 1)
        print(f"{T:>5} {rates['exact']:>10.0f} {rates['certified']:>10.0f} {rates['float']:>10.0f} "
              f"{rates['certified'] / rates['float']:>9.2f}x  {paths}")
    print("targets: certified >= 0.5x float; >= 100,000/s at T = 16 and >= 20,000/s at T = 129")


def _peers(hmm, tokens: np.ndarray):
    """``{name: (callable or None, note)}`` for the peers, each computing the smoothed
    marginals of every sequence in ``tokens``."""
    H, T = hmm.num_states, tokens.shape[1]
    A, W, pi0 = np.asarray(hmm.A), np.asarray(hmm.W), np.asarray(hmm.pi0)
    p1 = A @ pi0                                           # P[H_1], every peer's start
    peers = {}
    try:
        from hmmlearn.hmm import CategoricalHMM

        hmml = CategoricalHMM(n_components=H, init_params="", params="")
        hmml.startprob_, hmml.transmat_, hmml.emissionprob_ = p1, A.T, W.T
        flat, lengths = tokens.reshape(-1, 1), [T] * len(tokens)
        peers["hmmlearn"] = (lambda: hmml.predict_proba(flat, lengths), "")
    except ImportError as exc:
        peers["hmmlearn"] = (None, f"not installed ({exc.name})")
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        from dynamax.hidden_markov_model import hmm_smoother

        init, trans = jnp.asarray(p1), jnp.asarray(A.T)
        loglik = jnp.asarray(np.log(np.maximum(W, 1e-300))[tokens])       # [n, T, H]
        smooth = jax.jit(jax.vmap(lambda ll: hmm_smoother(init, trans, ll).smoothed_probs))
        peers["dynamax"] = (lambda: smooth(loglik).block_until_ready(), "")
    except ImportError as exc:
        peers["dynamax"] = (None, f"not installed ({exc.name})")
    try:
        import torch
        from pomegranate.distributions import Categorical
        from pomegranate.hmm import DenseHMM

        dists = [Categorical(torch.tensor(W[:, h][None, :], dtype=torch.float32)) for h in range(H)]
        pomm = DenseHMM(dists, edges=torch.tensor(A.T, dtype=torch.float32),
                        starts=torch.tensor(p1, dtype=torch.float32))
        X = torch.tensor(tokens[:, :, None])

        def pom():
            with torch.no_grad():
                return pomm.predict_proba(X)
        peers["pomegranate"] = (pom, "")
    except ImportError as exc:
        peers["pomegranate"] = (None, f"not installed ({exc.name})")
    return peers


def smoothing_rates(batch: int, repeat: int) -> None:
    from headprompt.models.inference import floats as iff
    from headprompt.models.generate.generators import appendix_d_hmm
    from headprompt.models.generate.sampling import sample

    names = ("hmmlearn", "dynamax", "pomegranate")
    print(f"\nfloat smoothing, every position, |X| = 10, batch {batch} (sequences/s; ratio = ours / peer)")
    print(f"{'|H|':>4} {'T':>4} {'headprompt':>11} " + " ".join(f"{n:>12} {'ratio':>6}" for n in names))
    notes = {}
    for H in (10, 25):
        for T in (10, 129):
            rng = np.random.default_rng(H * 1000 + T)
            hmm = appendix_d_hmm(H, 10, rng=rng)
            tokens, _ = sample(hmm, batch, T, rng=rng)
            ours = batch / best_time(lambda: iff.posterior_marginals(hmm, tokens), repeat)
            peers = _peers(hmm, tokens)
            ref = iff.posterior_marginals(hmm, tokens)
            cells = []
            for name in names:
                fn, note = peers[name]
                if fn is None:
                    notes[name] = note
                    cells.append(f"{'-':>12} {'-':>6}")
                    continue
                try:
                    got = np.asarray(fn())
                    if not np.allclose(got.reshape(ref.shape), ref, atol=1e-3):
                        notes[name] = "its marginals differ from ours (check the parameter mapping)"
                    rate = batch / best_time(fn, repeat)
                    cells.append(f"{rate:>12.0f} {ours / rate:>5.2f}x")
                except Exception as exc:                   # a peer's own failure: say so, go on
                    notes[name] = f"failed: {type(exc).__name__}: {exc}"[:120]
                    cells.append(f"{'-':>12} {'-':>6}")
            print(f"{H:>4} {T:>4} {ours:>11.0f} " + " ".join(cells))
    for name, note in notes.items():
        print(f"note: {name}: {note}")
    print("target: headprompt >= 1.0x dynamax at every size")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1000, help="sequences per smoothing call")
    parser.add_argument("--verdicts", type=int, default=20000, help="sequences per verdict run")
    parser.add_argument("--exact", type=int, default=500, help="sequences for the exact rate")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (shared machines "
          "inflate every figure; compare columns of one run)")
    verdict_rates(args.verdicts, args.exact, args.repeat)
    smoothing_rates(args.batch, args.repeat)


if __name__ == "__main__":
    main()
