"""Orchard and Bouman's principal-axis splitting: a sample's rows cut into clusters, the
first fit of a Gaussian mixture (:class:`~graphcut.models.GMMModel`; GrabCut's
initialisation). Runs on the sample's device; a GPU sample of at most
:data:`HOST_SPLIT_ROWS` rows is split on the host."""

from __future__ import annotations

import numpy as np

from graphcut._arrays import array_module, to_host

#: a GPU sample of at most this many rows is split into components on the host
#: (:func:`principal_axis_split`)
HOST_SPLIT_ROWS = 1 << 17
#: a cluster whose largest weighted covariance eigenvalue (squared [0, 1] units) is at most
#: this has no spread and is not split: a single colour's eigenvalue is rounding, about 1e-29
#: for colours near 0.5 (it used to be split on the sign of that rounding into empty or
#: arbitrary halves); the smallest real spread, one 16-bit step on one pixel in a million,
#: is about 1e-16
NO_SPREAD = 1e-20


def principal_axis_split(x, weight, components: int):
    """Orchard-Bouman: cluster index (N,) of every row of ``x`` (N, C) and the number of
    clusters (at most ``components``), by repeatedly splitting the cluster of largest
    (``weight``-weighted) covariance eigenvalue through its mean across the corresponding
    eigenvector. A GPU sample of at most :data:`HOST_SPLIT_ROWS` rows (the live model's
    coarse grid) is split on the host: the split's few small reductions per cluster, each
    waited for, cost more on the GPU than the copy (the clusters go back to the GPU)."""
    xp = array_module(x)
    if xp is not np and x.shape[0] <= HOST_SPLIT_ROWS:
        clusters, count = principal_axis_split(to_host(x), to_host(weight), components)
        return xp.asarray(clusters), count
    if xp is np:
        return _split_on_host(np.asarray(x, dtype=np.float64), np.asarray(weight), components)
    clusters = xp.zeros(x.shape[0], dtype=xp.int64)
    everyone = xp.ones(x.shape[0], dtype=bool)
    spread = [_principal_axis(x, weight, everyone)]  # per cluster: (eigenvalue, vector, mean)
    while len(spread) < components:
        target = max(range(len(spread)), key=lambda c: spread[c][0])
        eigenvalue, vector, mean = spread[target]
        if eigenvalue <= NO_SPREAD:
            break  # every cluster is a single colour
        members = clusters == target
        upper = members & ((x - xp.asarray(mean)) @ xp.asarray(vector) > 0)
        clusters = xp.where(upper, len(spread), clusters)
        spread[target] = _principal_axis(x, weight, members & ~upper)
        spread.append(_principal_axis(x, weight, upper))
    return clusters, len(spread)


def _split_on_host(x, weight, components):
    """:func:`principal_axis_split` on the host, each step reading only the rows of the
    cluster it splits (kept per cluster, gathered with ``take``) instead of masking every
    row, and with the channels as rows of a (C, n) array (NumPy's element-wise loops run
    along the n samples, not along C = 3 or 4 channels): the same clusters, several times
    faster on a coarse grid's 65 536 rows (a cluster's sums are taken over its own rows, so
    they may round their last bit otherwise)."""
    clusters = np.zeros(x.shape[0], dtype=np.int64)
    channels_first = np.ascontiguousarray(x.T)
    # per cluster: (its row numbers, its (C, n) values, their weights)
    parts = [(np.arange(x.shape[0]), channels_first, weight)]
    spread = [_axis_of_columns(channels_first, weight)]
    while len(spread) < components:
        target = max(range(len(spread)), key=lambda c: spread[c][0])
        eigenvalue, vector, mean = spread[target]
        if eigenvalue <= NO_SPREAD:
            break  # every cluster is a single colour
        rows, values, weights = parts[target]
        upper = vector @ (values - mean[:, None]) > 0
        halves = [(rows.take(i), values.take(i, axis=1), weights.take(i))
                  for i in (np.flatnonzero(~upper), np.flatnonzero(upper))]
        clusters[halves[1][0]] = len(spread)
        parts[target] = halves[0]
        parts.append(halves[1])
        spread[target] = _axis_of_columns(*halves[0][1:])
        spread.append(_axis_of_columns(*halves[1][1:]))
    return clusters, len(spread)


def _axis_of_columns(values, w):
    """:func:`_principal_axis` of every column of a host ``values`` (C, n), weighted ``w``
    (n,)."""
    total = float(w.sum())
    if values.shape[1] < 2 or total <= 0:
        return -1.0, None, None
    mean = (values @ w) / total
    centred = values - mean[:, None]
    covariance = ((centred * w) @ centred.T) / total
    eigenvalues, eigenvectors = np.linalg.eigh(covariance)
    return float(eigenvalues[-1]), eigenvectors[:, -1], mean


def _principal_axis(x, weight, members):
    """(largest weighted covariance eigenvalue, its eigenvector, mean) of the rows
    ``members`` of ``x``, on the host; eigenvalue -1 for fewer than two rows."""
    xp = array_module(x)
    w = xp.where(members, weight, 0.0)
    total = float(w.sum())
    if int(members.sum()) < 2 or total <= 0:
        return -1.0, None, None
    mean = to_host((w[:, None] * x).sum(axis=0)) / total
    centred = x - xp.asarray(mean)
    covariance = to_host((centred * w[:, None]).T @ centred) / total
    eigenvalues, eigenvectors = np.linalg.eigh(covariance)
    return float(eigenvalues[-1]), eigenvectors[:, -1], mean
