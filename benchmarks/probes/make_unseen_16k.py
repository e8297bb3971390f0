# Writes /tmp/u16k.npz, the hand-made 16,384-state model of unseen.md (numpy and scipy only).
import numpy as np
from scipy import sparse
rng = np.random.default_rng(7)
H, X, C = 16384, 10000, 128
per = H // C; tok = X // C
rows, cols = [], []
for h in range(H):
    succ = set(rng.integers(0, H, 6).tolist()) | {h, (h + 1) % H}
    rows += sorted(succ); cols += [h] * len(succ)
A = sparse.csc_array((np.ones(len(rows), dtype=np.int64), (rows, cols)), shape=(H, H)); A.sum_duplicates()
dA = np.asarray(A.sum(axis=0)).ravel().astype(np.int64)
wr, wc, wv = [], [], []
for h in range(H):
    c = h // per
    t = rng.choice(np.arange(c * tok, (c + 1) * tok), 2, replace=False)
    wr += t.tolist(); wc += [h, h]; wv += [3, 1]
W = sparse.csc_array((np.array(wv, dtype=np.int64), (wr, wc)), shape=(X, H)); W.sum_duplicates()
mu = np.zeros(H, dtype=np.int64); idx = rng.choice(H, 40, replace=False); mu[idx] = rng.choice([-1, 1], 40)
ent = {"kind": np.array("hmm"), "pi0": np.ones(H, dtype=np.int64), "pi0.den": np.array([H]), "mu": mu, "mu.den": np.array([1])}
for name, m, den in (("A", A, dA), ("W", W, np.full(H, 4, dtype=np.int64))):
    ent.update({f"{name}.data": m.data, f"{name}.indices": m.indices.astype(np.int64), f"{name}.indptr": m.indptr.astype(np.int64),
                f"{name}.format": np.array("csc"), f"{name}.shape": np.array(m.shape, dtype=np.int64), f"{name}.den": den})
np.savez("/tmp/u16k.npz", **ent)
print("written", A.nnz, W.nnz)
