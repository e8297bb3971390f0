"""Benchmark: posteriors P[H_0 | X] and conditionals, sequences per second, per backend, with
hmmlearn's ``predict_proba`` measured in the same run as the peer.

Run by hand:  python benchmarks/posterior.py [--batch 1000] [--repeat 3]

Rows: |H| in {10, 25}, |X| = 10, T in {10, 129}. Columns: sequences/s of
  float   - models.inference_float.posterior_h0 (numpy, batched, scaled; a backward pass)
  float-all - models.inference_float.conditionals: every position's smoothed marginal and
            G_i, the same work as predict_proba (full forward-backward)
  torch   - the torch backend on CPU (conditionals, differentiable path)
  hmmlearn- CategoricalHMM.predict_proba, one call per sequence (its API is per sequence set;
            we pass all sequences with `lengths`, its fastest use)
  exact   - models.inference_exact.posterior_h0 and .conditionals (python-flint), on a subset
and the ratios float/hmmlearn and float-all/hmmlearn (targets: >= 10x at T = 10, >= 3x at T = 129) and exact
conditionals against the reference 1,400 seq/s (|H| = 25, T = 10).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from headprompt.models.inference import exact as ie
from headprompt.models.inference import floats as iff
from headprompt.models.inference import torch_backend as it
from headprompt.models.generate.generators import appendix_d_hmm
from headprompt.models.generate.sampling import sample


def _rate(fn, count: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return count / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--exact-batch", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from hmmlearn.hmm import CategoricalHMM

    torch.set_num_threads(max(1, torch.get_num_threads()))
    header = f"{'|H|':>4} {'T':>4} {'float':>10} {'torch':>10} {'hmmlearn':>10} {'exact-post':>10} {'exact-G':>10} {'float-all':>10} {'post/hmml':>10} {'all/hmml':>9}"
    print(header)
    for H in (10, 25):
        for T in (10, 129):
            rng = np.random.default_rng(H * 1000 + T)
            hmm = appendix_d_hmm(H, 10, rng=rng)
            tokens, _ = sample(hmm, args.batch, T, rng=rng)
            float_rate = _rate(lambda: iff.posterior_h0(hmm, tokens), args.batch, args.repeat)
            # like predict_proba: the smoothed marginal of every position (full forward-backward)
            all_rate = _rate(lambda: iff.conditionals(hmm, tokens), args.batch, args.repeat)
            A, W, pi0 = it.hmm_tensors(hmm)
            tt = torch.tensor(tokens)
            with torch.no_grad():
                torch_rate = _rate(lambda: it.conditionals(A, W, pi0, tt), args.batch, args.repeat)
            model = CategoricalHMM(n_components=H, init_params="", params="")
            model.startprob_ = hmm.A @ hmm.pi0
            model.transmat_ = hmm.A.T
            model.emissionprob_ = hmm.W.T
            flat = tokens.reshape(-1, 1)
            lengths = [T] * args.batch
            hmml_rate = _rate(lambda: model.predict_proba(flat, lengths), args.batch, args.repeat)
            exact = appendix_d_hmm(H, 10, rng=np.random.default_rng(H), exact=True, max_denominator=1000)
            sub = tokens[: args.exact_batch].tolist()
            exact_post = _rate(lambda: [ie.posterior_h0(exact, s) for s in sub], len(sub), 1)
            exact_G = _rate(lambda: [ie.conditionals(exact, s) for s in sub], len(sub), 1)
            print(f"{H:>4} {T:>4} {float_rate:>10.0f} {torch_rate:>10.0f} {hmml_rate:>10.0f} "
                  f"{exact_post:>10.0f} {exact_G:>10.0f} {all_rate:>10.0f} {float_rate / hmml_rate:>9.1f}x "
                  f"{all_rate / hmml_rate:>8.1f}x")
    print("note: hmmlearn's predict_proba gives P[H_k | X] for k = 1..T (a smoothing pass, as ours).")
    print("reference for exact conditionals: 1,400 seq/s at |H| = 25, T = 10 (target >= 700).")


if __name__ == "__main__":
    main()
