"""The learned model's ``"gaussian"`` classifier: naive Bayes, one diagonal Gaussian per
label in feature space, fitted in closed form (:mod:`graphcut.models._learned`)."""

from __future__ import annotations

#: added to every variance (standardised features): no zero variance from a tiny sample
VARIANCE_FLOOR = 1e-2


def fit_gaussian(x, w, xp):
    """The weighted mean and variance (float32 (F,) each, ``+ VARIANCE_FLOOR``) of the
    feature rows ``x`` (n, F) with weights ``w`` (n,) > 0, on their device (module ``xp``)."""
    total = float(w.sum())
    mean = (w[:, None] * x).sum(axis=0) / total
    var = (w[:, None] * (x - mean) ** 2).sum(axis=0) / total + VARIANCE_FLOOR
    return mean.astype(xp.float32), var.astype(xp.float32)


def gaussian_log_likelihood(flat, params, xp):
    """The log-likelihood (n,) of the rows ``flat`` (n, F) under a diagonal Gaussian
    ``params = (mean, var)`` (:func:`fit_gaussian`), up to the constant ``-F/2 log(2 pi)``."""
    mean, var = params
    return -0.5 * (((flat - mean) ** 2) / var).sum(axis=1) - 0.5 * float(xp.log(var).sum())


__all__ = ["VARIANCE_FLOOR", "fit_gaussian", "gaussian_log_likelihood"]
