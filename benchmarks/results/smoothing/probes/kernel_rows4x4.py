import numpy as np, time, numba
from threadpoolctl import threadpool_limits
H, n = 4096, 4
rng = np.random.default_rng(0)
A = rng.random((H, H)); a = rng.random((H, n)); y = rng.random((H, n))

@numba.njit(fastmath=True, boundscheck=False)
def pair7(A, aT, y, pT, bT):
    n, H = aT.shape
    bT[:, :] = 0.0
    x0 = aT[0]; x1 = aT[1]; x2 = aT[2]; x3 = aT[3]
    b0 = bT[0]; b1 = bT[1]; b2 = bT[2]; b3 = bT[3]
    for i in range(0, H, 4):
        r0 = A[i]; r1 = A[i + 1]; r2 = A[i + 2]; r3 = A[i + 3]
        s00 = 0.0; s01 = 0.0; s02 = 0.0; s03 = 0.0
        s10 = 0.0; s11 = 0.0; s12 = 0.0; s13 = 0.0
        s20 = 0.0; s21 = 0.0; s22 = 0.0; s23 = 0.0
        s30 = 0.0; s31 = 0.0; s32 = 0.0; s33 = 0.0
        y00 = y[i, 0]; y01 = y[i, 1]; y02 = y[i, 2]; y03 = y[i, 3]
        y10 = y[i+1, 0]; y11 = y[i+1, 1]; y12 = y[i+1, 2]; y13 = y[i+1, 3]
        y20 = y[i+2, 0]; y21 = y[i+2, 1]; y22 = y[i+2, 2]; y23 = y[i+2, 3]
        y30 = y[i+3, 0]; y31 = y[i+3, 1]; y32 = y[i+3, 2]; y33 = y[i+3, 3]
        for k in range(H):
            w0 = r0[k]; w1 = r1[k]; w2 = r2[k]; w3 = r3[k]
            c0 = x0[k]; c1 = x1[k]; c2 = x2[k]; c3 = x3[k]
            s00 += w0 * c0; s01 += w0 * c1; s02 += w0 * c2; s03 += w0 * c3
            s10 += w1 * c0; s11 += w1 * c1; s12 += w1 * c2; s13 += w1 * c3
            s20 += w2 * c0; s21 += w2 * c1; s22 += w2 * c2; s23 += w2 * c3
            s30 += w3 * c0; s31 += w3 * c1; s32 += w3 * c2; s33 += w3 * c3
            b0[k] += w0 * y00 + w1 * y10 + w2 * y20 + w3 * y30
            b1[k] += w0 * y01 + w1 * y11 + w2 * y21 + w3 * y31
            b2[k] += w0 * y02 + w1 * y12 + w2 * y22 + w3 * y32
            b3[k] += w0 * y03 + w1 * y13 + w2 * y23 + w3 * y33
        pT[0, i] = s00; pT[1, i] = s01; pT[2, i] = s02; pT[3, i] = s03
        pT[0, i+1] = s10; pT[1, i+1] = s11; pT[2, i+1] = s12; pT[3, i+1] = s13
        pT[0, i+2] = s20; pT[1, i+2] = s21; pT[2, i+2] = s22; pT[3, i+2] = s23
        pT[0, i+3] = s30; pT[1, i+3] = s31; pT[2, i+3] = s32; pT[3, i+3] = s33

ref_p = A @ a; ref_b = A.T @ y
aT = np.ascontiguousarray(a.T); pT = np.empty((n, H)); bT = np.empty((n, H))
pair7(A, aT, y, pT, bT); print(np.abs(pT.T-ref_p).max(), np.abs(bT.T-ref_b).max())
with threadpool_limits(1):
    for name, fn in [("pair7", lambda: pair7(A, aT, y, pT, bT)), ("A.sum", lambda: A.sum())]:
        ts = []
        for _ in range(15):
            t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
        print(f"{name:16s} {np.median(ts)*1e3:7.2f} ms")
