import os, sys, time, threading
nthr = int(sys.argv[1])
os.environ["XLA_FLAGS"] = f"--xla_cpu_multi_thread_eigen={'true' if nthr > 1 else 'false'} intra_op_parallelism_threads={nthr}"
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"): os.environ[v] = str(nthr)
import numpy as np
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
from dynamax.hidden_markov_model import hmm_smoother
from threadpoolctl import threadpool_limits
from headprompt.models.generate.generators import appendix_d_hmm
from headprompt.models.generate.sampling import sample
from headprompt.models.inference import floats as iff
T = 129
def med(f, r):
    ts = []
    for _ in range(r):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
    return float(np.median(ts))
for H, X, n in [(400, 10, 64), (1000, 100, 16), (2048, 100, 8), (4096, 100, 4)]:
    if len(sys.argv) > 2 and str(H) not in sys.argv[2].split(","): continue
    rng = np.random.default_rng([0, H]); hmm = appendix_d_hmm(H, X, rng=rng); tok, _ = sample(hmm, n, T, rng=rng)
    A, AT, W, pi0 = iff.float_arrays(hmm); start = A @ pi0
    i_, t_, lw = jnp.asarray(start), jnp.asarray(AT), jnp.asarray(np.log(W))
    sm = jax.jit(jax.vmap(lambda x: hmm_smoother(i_, t_, lw[x]).smoothed_probs))
    fd = lambda: sm(jnp.asarray(tok)).block_until_ready(); fd()
    fo = lambda: iff.posterior_marginals(hmm, tok); fo()
    # two-thread prototype: forward and backward passes concurrently, single-thread BLAS each
    Wt = np.ascontiguousarray(W.T)  # [K,H]? W is [H,K]? 
    E = np.ascontiguousarray(W.T) if W.shape[0] == H else np.ascontiguousarray(W)
    def fwd(out):
        a = np.repeat(pi0[:, None], n, 1); p = np.empty((H, n))
        for j in range(T):
            np.dot(A, a, out=p); a = E[tok[:, j]].T * p; a /= a.sum(0)
        out.append(a)
    def bwd(out):
        b = np.ones((H, n)); y = np.empty((H, n))
        for j in range(T - 1, -1, -1):
            y = E[tok[:, j]].T * b; b = AT @ y; b /= b.sum(0)
        out.append(b)
    def two():
        o1, o2 = [], []
        with threadpool_limits(1):
            th = threading.Thread(target=bwd, args=(o2,)); th.start(); fwd(o1); th.join()
    def one():
        o1, o2 = [], []
        with threadpool_limits(1):
            fwd(o1); bwd(o2)
    two(); one()
    r = 5 if H < 2048 else 3
    td, to, t2, t1 = med(fd, r), med(fo, r), med(two, r), med(one, r)
    print(f"threads={nthr} H={H} n={n}: dynamax {td*1e3:.0f} ms, ours fused {to*1e3:.0f} ms ({td/to:.2f}x), proto 1thr {t1*1e3:.0f} ms, proto 2thr {t2*1e3:.0f} ms ({td/t2:.2f}x vs dynamax)", flush=True)
