"""The learned model's classifier: an L2-regularised logistic regression fitted by a fixed
number of Newton steps, on NumPy or CuPy arrays (:mod:`graphcut.models._learned`)."""

from __future__ import annotations

import numpy as np

from graphcut._arrays import array_module, to_host

#: L2 penalty of the logistic regression, per unit of total sample weight
DEFAULT_L2 = 0.1
#: Newton steps of the logistic regression
NEWTON_STEPS = 8


def _design(x, xp):
    """[1, x, x^2]: a quadratic (diagonal) logistic regression."""
    ones = xp.ones((x.shape[0], 1), dtype=x.dtype)
    return xp.concatenate([ones, x, x * x], axis=1)


def fit_logistic(x, y, w, *, l2=DEFAULT_L2, steps=NEWTON_STEPS):
    """Weights ``beta`` of an L2-regularised logistic regression by Newton's method.

    Parameters
    ----------
    x : array (n, d)
        Design matrix (include a column of ones for an intercept), NumPy or CuPy, float64.
    y : array (n,)
        Targets 0 / 1.
    w : array (n,)
        Sample weights >= 0.
    l2 : float
        Penalty ``l2 * sum(w) * |beta[1:]|^2 / 2`` (the intercept is not penalised).
    steps : int
        Newton steps (a fixed number: deterministic, and enough on standardised features).
        On a GPU the sums are reduced there and each step's small ``(d, d)`` system is solved
        on the host (one copy per step).

    Returns
    -------
    array (d,)
        ``p(y = 1 | x) = 1 / (1 + exp(-x @ beta))``.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.c_[np.ones(4), [-2.0, -1.0, 1.0, 2.0]]
    >>> beta = fit_logistic(x, np.array([0, 0, 1, 1.0]), np.ones(4))
    >>> bool(beta[1] > 0)
    True
    """
    xp = array_module(x)
    on_host = xp is np
    d = x.shape[1]
    beta = xp.zeros(d, dtype=xp.float64)
    penalty = xp.full(d, l2 * float(w.sum()), dtype=xp.float64)
    penalty[0] = 1e-9
    for _ in range(steps):
        z = xp.clip(x @ beta, -30.0, 30.0)
        p = 1.0 / (1.0 + xp.exp(-z))
        gradient = x.T @ (w * (p - y)) + penalty * beta
        curvature = w * xp.maximum(p * (1.0 - p), 1e-6)
        hessian = (x * curvature[:, None]).T @ x + xp.diag(penalty)
        if on_host:
            beta = beta - np.linalg.solve(hessian, gradient)
        else:  # the tiny (d, d) system solved on the host: one copy, no cuSOLVER launches
            system = to_host(xp.concatenate([hessian, gradient[:, None]], axis=1))
            beta = beta - xp.asarray(np.linalg.solve(system[:, :d], system[:, d]))
    return beta


__all__ = ["DEFAULT_L2", "NEWTON_STEPS", "fit_logistic"]
