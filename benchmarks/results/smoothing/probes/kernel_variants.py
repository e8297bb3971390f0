import numpy as np, time, numba
from threadpoolctl import threadpool_limits
H, n = 4096, 4
rng = np.random.default_rng(0)
A = rng.random((H, H)); a = rng.random((H, n)); y = rng.random((H, n))

@numba.njit(fastmath=True, boundscheck=False)
def pair4(A, aT, y, pT, bT, R, KC):
    n, H = aT.shape
    bT[:, :] = 0.0
    acc = np.zeros((R, 4))
    for i0 in range(0, H, R):
        i1 = min(i0 + R, H)
        acc[:, :] = 0.0
        for k0 in range(0, H, KC):
            k1 = min(k0 + KC, H)
            for i in range(i0, i1):
                row = A[i]
                y0 = y[i, 0]; y1 = y[i, 1]; y2 = y[i, 2]; y3 = y[i, 3]
                s0 = 0.0; s1 = 0.0; s2 = 0.0; s3 = 0.0
                for k in range(k0, k1):
                    w = row[k]
                    s0 += w * aT[0, k]; s1 += w * aT[1, k]; s2 += w * aT[2, k]; s3 += w * aT[3, k]
                    bT[0, k] += w * y0; bT[1, k] += w * y1; bT[2, k] += w * y2; bT[3, k] += w * y3
                acc[i - i0, 0] += s0; acc[i - i0, 1] += s1; acc[i - i0, 2] += s2; acc[i - i0, 3] += s3
        for i in range(i0, i1):
            for c in range(4):
                pT[c, i] = acc[i - i0, c]

@numba.njit(fastmath=True, boundscheck=False)
def pair5(A, aT, y, pT, bT, KC):
    # two rows at a time per k-chunk: halves the aT/bT chunk traffic per A element
    n, H = aT.shape
    bT[:, :] = 0.0
    for i in range(0, H, 2):
        ra = A[i]; rb = A[i + 1]
        ya0 = y[i, 0]; ya1 = y[i, 1]; ya2 = y[i, 2]; ya3 = y[i, 3]
        yb0 = y[i+1, 0]; yb1 = y[i+1, 1]; yb2 = y[i+1, 2]; yb3 = y[i+1, 3]
        sa0 = 0.0; sa1 = 0.0; sa2 = 0.0; sa3 = 0.0
        sb0 = 0.0; sb1 = 0.0; sb2 = 0.0; sb3 = 0.0
        for k in range(H):
            wa = ra[k]; wb = rb[k]
            x0 = aT[0, k]; x1 = aT[1, k]; x2 = aT[2, k]; x3 = aT[3, k]
            sa0 += wa * x0; sa1 += wa * x1; sa2 += wa * x2; sa3 += wa * x3
            sb0 += wb * x0; sb1 += wb * x1; sb2 += wb * x2; sb3 += wb * x3
            bT[0, k] += wa * ya0 + wb * yb0; bT[1, k] += wa * ya1 + wb * yb1
            bT[2, k] += wa * ya2 + wb * yb2; bT[3, k] += wa * ya3 + wb * yb3
        pT[0, i] = sa0; pT[1, i] = sa1; pT[2, i] = sa2; pT[3, i] = sa3
        pT[0, i+1] = sb0; pT[1, i+1] = sb1; pT[2, i+1] = sb2; pT[3, i+1] = sb3

@numba.njit(fastmath=True, boundscheck=False)
def pair6(A, aT, y, pT, bT):
    # four rows at a time
    n, H = aT.shape
    bT[:, :] = 0.0
    for i in range(0, H, 4):
        r0 = A[i]; r1 = A[i + 1]; r2 = A[i + 2]; r3 = A[i + 3]
        s = np.zeros((4, 4))
        for c in range(4):
            x = aT[c]
            t0 = 0.0; t1 = 0.0; t2 = 0.0; t3 = 0.0
            for k in range(H):
                xk = x[k]
                t0 += r0[k] * xk; t1 += r1[k] * xk; t2 += r2[k] * xk; t3 += r3[k] * xk
            pT[c, i] = t0; pT[c, i+1] = t1; pT[c, i+2] = t2; pT[c, i+3] = t3
            y0 = y[i, c]; y1 = y[i+1, c]; y2 = y[i+2, c]; y3 = y[i+3, c]
            bc = bT[c]
            for k in range(H):
                bc[k] += r0[k] * y0 + r1[k] * y1 + r2[k] * y2 + r3[k] * y3

ref_p = A @ a; ref_b = A.T @ y
aT = np.ascontiguousarray(a.T); pT = np.empty((n, H)); bT = np.empty((n, H))
for f, args in [(pair4, (8, 512)), (pair5, (0,)), (pair6, ())]:
    if f is pair5: f(A, aT, y, pT, bT, 0)
    else: f(A, aT, y, pT, bT, *args)
    print(f.__name__, np.abs(pT.T-ref_p).max(), np.abs(bT.T-ref_b).max())
with threadpool_limits(1):
    for name, fn in [("pair4 R8 KC512", lambda: pair4(A, aT, y, pT, bT, 8, 512)), ("pair4 R16 KC256", lambda: pair4(A, aT, y, pT, bT, 16, 256)),
                     ("pair4 R4 KC1024", lambda: pair4(A, aT, y, pT, bT, 4, 1024)),
                     ("pair5", lambda: pair5(A, aT, y, pT, bT, 0)), ("pair6", lambda: pair6(A, aT, y, pT, bT))]:
        ts = []
        for _ in range(11):
            t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
        print(f"{name:16s} {np.median(ts)*1e3:7.2f} ms")
