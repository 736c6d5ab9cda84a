"""NumPy: a Gaussian mixture's per-pixel costs ``-log p(x)`` alone, without the
responsibilities.

:class:`~graphcut.models.GMMModel` evaluates every pixel's ``K`` log densities through its
linear form (``features @ linear + constant``, :meth:`GMMModel._linear_form`) and keeps the
``(N, K)`` exponentials so that an EM step on the same image reuses them. A live stroke's
full-size costs are never followed by an EM step on that image (the stroke re-estimates the
mixtures on the coarse grid's blocks), so on the CPU the costs of an image the model did not
learn from are computed here: the same operations in the same order, chunk by chunk, in
buffers of one chunk reused for the whole image. The result equals the costs of the full
evaluation bit for bit; what is saved is writing, and first faulting in, the ``(N, K)``
float64 array (160 MB for two labels' five Gaussians at 4 MP) and the per-chunk
temporaries.
"""

from __future__ import annotations

import numpy as np


def mixture_costs(features, linear, constant, chunk_rows: int) -> np.ndarray:
    """``-log p`` (nats, float64 (N,)) of every row of ``features`` (N, F) under the linear
    form ``(linear (F, K), constant (K,))``.

    Parameters
    ----------
    features
        float64 (N, F): the pixels' ``[x_c, x_i x_j (i <= j)]``.
    linear, constant
        ``log pi_k N_k(x) = features @ linear[:, k] + constant[k]``.
    chunk_rows
        rows per chunk; the same as the full evaluation's (its matrix products then see the
        same operands, which keeps the two paths' costs equal bit for bit).

    Returns
    -------
    numpy.ndarray
        float64 (N,): ``-(top + log(sum_k exp(log_part_k - top)))`` with ``top`` the
        largest log part, summed over the components in order (as
        :func:`graphcut.models._gmm._log_densities_in_chunks`).
    """
    n, count = features.shape[0], linear.shape[1]
    costs = np.empty(n)
    rows = max(1, min(int(chunk_rows), n))
    log_parts = np.empty((rows, count))
    top, total = np.empty(rows), np.empty(rows)
    for start in range(0, n, rows):
        size = min(rows, n - start)
        parts, chunk_top, chunk_total = log_parts[:size], top[:size], total[:size]
        np.matmul(features[start:start + size], linear, out=parts)
        parts += constant
        _across(np.maximum, parts, chunk_top)
        parts -= chunk_top[:, None]
        np.exp(parts, out=parts)
        _across(np.add, parts, chunk_total)
        np.log(chunk_total, out=chunk_total)
        chunk_total += chunk_top
        np.negative(chunk_total, out=costs[start:start + size])
    return costs


def _across(ufunc, parts, out) -> None:
    """``out[:] = parts.max(axis=1)`` (``np.maximum``) or ``parts.sum(axis=1)`` (``np.add``)
    as :func:`graphcut.models._gmm._across_components` computes them: the columns combined
    one after the other below 8 components (NumPy's own reduction above)."""
    if parts.shape[1] >= 8:
        out[:] = parts.max(axis=1) if ufunc is np.maximum else parts.sum(axis=1)
        return
    np.copyto(out, parts[:, 0])
    for k in range(1, parts.shape[1]):
        ufunc(out, parts[:, k], out=out)
