import time, numpy as np, cupy
from graphcut.models._learned import fit_logistic, _design
rng = np.random.default_rng(0)
for n, f in ((32000, 17), (32000, 27)):
    x = cupy.asarray(rng.standard_normal((n, f)))
    X = _design(x, cupy); y = cupy.asarray((rng.random(n) > 0.5).astype(np.float64)); w = cupy.ones(n)
    def host_solve(x, y, w, l2=0.1, steps=8):
        xp = cupy; d = x.shape[1]
        beta = xp.zeros(d); pen = np.full(d, l2 * float(w.sum())); pen[0] = 1e-9
        penalty = xp.asarray(pen)
        for _ in range(steps):
            z = xp.clip(x @ beta, -30.0, 30.0); p = 1.0 / (1.0 + xp.exp(-z))
            g = x.T @ (w * (p - y)) + penalty * beta
            c = w * xp.maximum(p * (1.0 - p), 1e-6)
            h = (x * c[:, None]).T @ x
            hh = h.get() + np.diag(pen)
            beta = beta - xp.asarray(np.linalg.solve(hh, g.get()))
        return beta
    for name, fn in (("cusolver", fit_logistic), ("host solve", host_solve)):
        for _ in range(3): fn(X, y, w)
        cupy.cuda.Device().synchronize()
        ts = []
        for _ in range(20):
            t = time.perf_counter(); b = fn(X, y, w); cupy.cuda.Device().synchronize(); ts.append(time.perf_counter() - t)
        print(n, f, name, f"{np.median(ts)*1e3:.2f} ms", float(b[1]))
