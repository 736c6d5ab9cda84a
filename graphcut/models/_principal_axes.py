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
    clusters = xp.zeros(x.shape[0], dtype=xp.int64)
    everyone = xp.ones(x.shape[0], dtype=bool)
    spread = [_principal_axis(x, weight, everyone)]  # per cluster: (eigenvalue, vector, mean)
    while len(spread) < components:
        target = max(range(len(spread)), key=lambda c: spread[c][0])
        eigenvalue, vector, mean = spread[target]
        if eigenvalue <= 0.0:
            break  # every cluster is a single colour
        members = clusters == target
        upper = members & ((x - xp.asarray(mean)) @ xp.asarray(vector) > 0)
        clusters = xp.where(upper, len(spread), clusters)
        spread[target] = _principal_axis(x, weight, members & ~upper)
        spread.append(_principal_axis(x, weight, upper))
    return clusters, len(spread)


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
