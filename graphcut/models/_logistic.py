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


def training_rows(samples, priors, prior_weight, xp):
    """The rows of the learned model's training (:class:`~._learned.LearnedModel`): each
    label's sample weighing 1 in all, each label's prior sample ``prior_weight`` in all (when
    given and > 0), every weight times the labels' pixel count.

    Parameters
    ----------
    samples : list of (x (n, F), w (n,))
        Each label's sample rows and weights.
    priors : list of (x, w) or None
        Each label's prior sample, or None.
    prior_weight : float
    xp : module
        NumPy or CuPy.

    Returns
    -------
    tuple
        ``(x (N, F), labels (N,), weights (N,))``, on ``xp``'s device.
    """
    parts = [(i, x, w / float(w.sum())) for i, (x, w) in enumerate(samples)]
    parts += [(i, p[0], p[1] * (prior_weight / float(p[1].sum())))
              for i, p in enumerate(priors)
              if p is not None and p[0].shape[0] and prior_weight > 0]
    x = xp.concatenate([x for _, x, _ in parts])
    w = xp.concatenate([w for _, _, w in parts]) * float(sum(s[0].shape[0] for s in samples))
    labels = xp.concatenate([xp.full(x.shape[0], i) for i, x, _ in parts])
    return x, labels, w


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
        On a GPU each step's terms are one kernel and one matrix product there, and the
        small ``(d, d)`` system is solved on the host (one copy per step).

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
    d = x.shape[1]
    if xp is not np:
        return _fit_on_device(x, y, w, l2, steps)
    beta = np.zeros(d, dtype=np.float64)
    penalty = np.full(d, l2 * float(w.sum()), dtype=np.float64)
    penalty[0] = 1e-9
    for _ in range(steps):
        z = np.clip(x @ beta, -30.0, 30.0)
        p = 1.0 / (1.0 + np.exp(-z))
        gradient = x.T @ (w * (p - y)) + penalty * beta
        curvature = w * np.maximum(p * (1.0 - p), 1e-6)
        hessian = (x * curvature[:, None]).T @ x + np.diag(penalty)
        beta = beta - np.linalg.solve(hessian, gradient)
    return beta


def _fit_on_device(x, y, w, l2, steps):
    """:func:`fit_logistic` for CuPy arrays: per Newton step one kernel writes every row's
    Hessian and gradient terms (:func:`~._learned_kernels.logistic_step_terms`), one matrix
    product sums them, and the small ``(d + 1, d)`` result comes to the host, where the
    penalty is added and the ``(d, d)`` system solved (the weights go back as ``d`` numbers):
    four device calls and one read per step instead of two dozen element-wise launches."""
    import cupy

    from ._learned_kernels import logistic_step_terms

    x = cupy.ascontiguousarray(x, dtype=cupy.float64)
    y = cupy.ascontiguousarray(y, dtype=cupy.float64)
    w = cupy.ascontiguousarray(w, dtype=cupy.float64)
    n, d = x.shape
    beta = np.zeros(d, dtype=np.float64)
    penalty = np.full(d, l2 * float(w.sum()), dtype=np.float64)
    penalty[0] = 1e-9
    terms = cupy.empty((n, d + 1), dtype=cupy.float64)
    for _ in range(steps):
        logistic_step_terms(x, cupy.asarray(beta), y, w, terms)
        sums = to_host(terms.T @ x)                          # (d + 1, d)
        hessian = sums[:d] + np.diag(penalty)
        gradient = sums[d] + penalty * beta
        beta = beta - np.linalg.solve(hessian, gradient)
    return cupy.asarray(beta)


__all__ = ["DEFAULT_L2", "NEWTON_STEPS", "fit_logistic"]
