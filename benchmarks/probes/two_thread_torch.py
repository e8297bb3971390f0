import os, sys, time, threading
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads=2"
import numpy as np, torch
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
from dynamax.hidden_markov_model import hmm_smoother
from threadpoolctl import threadpool_limits
from headprompt.models.generate.generators import appendix_d_hmm
from headprompt.models.generate.sampling import sample
from headprompt.models.inference import floats as iff
torch.set_num_threads(1)
T = 129
def med(f, r):
    ts = []
    for _ in range(r):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
    return float(np.median(ts))
for H, X, n in [(400, 10, 64), (1000, 100, 16), (2048, 100, 8), (4096, 100, 4)]:
    rng = np.random.default_rng([0, H]); hmm = appendix_d_hmm(H, X, rng=rng); tok, _ = sample(hmm, n, T, rng=rng)
    A, AT, W, pi0 = iff.float_arrays(hmm); start = A @ pi0
    i_, t_, lw = jnp.asarray(start), jnp.asarray(AT), jnp.asarray(np.log(W))
    sm = jax.jit(jax.vmap(lambda x: hmm_smoother(i_, t_, lw[x]).smoothed_probs))
    fd = lambda: sm(jnp.asarray(tok)).block_until_ready(); fd()
    E = np.ascontiguousarray(W.T) if W.shape[0] == H else np.ascontiguousarray(W)
    tA, tAT = torch.from_numpy(A), torch.from_numpy(AT)
    for rows in (H, 64, 32):
      def fwd():
        a = torch.from_numpy(np.repeat(pi0[:, None], n, 1).copy()); p = torch.empty((H, n), dtype=torch.float64)
        for j in range(T):
            for i in range(0, H, rows): torch.mm(tA[i:i+rows], a, out=p[i:i+rows])
            a = torch.from_numpy(E[tok[:, j]].T.copy()) * p; a /= a.sum(0)
      def bwd():
        b = torch.ones((H, n), dtype=torch.float64)
        for j in range(T - 1, -1, -1):
            y = torch.from_numpy(E[tok[:, j]].T.copy()) * b
            b = torch.empty((H, n), dtype=torch.float64)
            for i in range(0, H, rows): torch.mm(tAT[i:i+rows], y, out=b[i:i+rows])
            b /= b.sum(0)
      def two():
        th = threading.Thread(target=bwd); th.start(); fwd(); th.join()
      def one():
        fwd(); bwd()
      two()
      r = 5 if H < 2048 else 3
      td, t2, t1 = med(fd, r), med(two, r), med(one, r)
      print(f"H={H} n={n} rows={rows}: dynamax {td*1e3:.0f} ms, torch 1thr {t1*1e3:.0f}, 2thr {t2*1e3:.0f} ({td/t2:.2f}x)", flush=True)
