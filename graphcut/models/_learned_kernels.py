"""The learned model's scoring on the GPU as one launch of ``models/learned_kernels.cu``
(shipped precompiled): both labels' costs of a two-label logistic classifier for every pixel,
read once from the float32 features and written straight into the (2, H, W) costs."""

from __future__ import annotations

import numpy as np

SOURCE = "models/learned_kernels.cu"
#: the kernel keeps at most this many features' weights in shared memory
MAX_FEATURES = 64


def fused_binary_costs(values, beta, max_cost):
    """Costs ``(2, H, W)`` float64 (nats) of a two-label quadratic logistic regression on CuPy
    features, in one kernel launch; None where the kernel does not apply (not CuPy, too many
    features).

    Parameters
    ----------
    values : cupy.ndarray (H, W, F)
        Per-pixel features (float32; other dtypes are converted).
    beta : array (2 F + 1,)
        The regression's weights ``[b0, b1 (F), b2 (F)]``: ``z = b0 + b1 . x + b2 . x^2``,
        ``p(label 0 | x) = 1 / (1 + exp(-z))``.
    max_cost : float
        Costs are capped at this many nats.

    Returns
    -------
    cupy.ndarray (2, H, W) or None
        ``[-log sigmoid(z), -log sigmoid(-z)]``, computed in float32 (z clipped to
        [-30, 30]) and stored as float64.

    Examples
    --------
    >>> costs = fused_binary_costs(features, beta, 9.2)  # doctest: +SKIP
    """
    import cupy

    from graphcut.solver.kernels import kernel, launch_grid

    features = int(values.shape[-1])
    if not 0 < features <= MAX_FEATURES:
        return None
    shape = tuple(values.shape[:-1])
    n = int(np.prod(shape, dtype=np.int64))
    flat = cupy.ascontiguousarray(values.reshape(n, features))
    if flat.dtype != cupy.float32:
        flat = flat.astype(cupy.float32)
    weights = cupy.ascontiguousarray(cupy.asarray(beta, dtype=cupy.float64))
    costs = cupy.empty((2, n), dtype=cupy.float64)
    if n:
        kernel(SOURCE, "learned_binary_costs")(
            *launch_grid(n), (np.int64(n), np.int32(features), flat, weights,
                              np.float64(max_cost), costs))
    return costs.reshape((2,) + shape)


def logistic_step_terms(x, beta, y, w, out) -> None:
    """One Newton step's per-row terms of the logistic regression in one launch
    (``logistic_step_terms`` in the .cu file): ``out`` (n, d + 1) gets ``x * curvature``
    and the gradient's residuals ``w (p - y)`` (see :func:`graphcut.models._logistic.fit_logistic`).

    Parameters
    ----------
    x : cupy.ndarray (n, d) float64, C-contiguous
    beta : cupy.ndarray (d,) float64
    y, w : cupy.ndarray (n,) float64
        Targets 0 / 1 and sample weights.
    out : cupy.ndarray (n, d + 1) float64, written.
    """
    from graphcut.solver.kernels import kernel, launch_grid

    n, d = (int(v) for v in x.shape)
    if n:
        kernel(SOURCE, "logistic_step_terms")(
            *launch_grid(n), (np.int64(n), np.int32(d), x, beta, y, w, out))


__all__ = ["MAX_FEATURES", "SOURCE", "fused_binary_costs", "logistic_step_terms"]
