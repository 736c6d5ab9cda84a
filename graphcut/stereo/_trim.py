"""Foreground trimming: a depth edge that lies inside the background's colour moves back to the
colour edge, along rows and then columns.

Aggregated matching costs make a foreground object "fatten": the pixels of the background just
beside it take the foreground's disparity, because their census windows and supports still see
the foreground's texture. Beside a dark or textureless background nothing in the data term pulls
them back, and they pass the left-right check (the right view's cheapest disparities fatten the
same way), so neither the energy nor the occlusion fill repairs them. Walking from a depth edge
into the nearer side, those pixels still have the background's colour, and the object's own
edge, a strong colour change, follows within a few pixels: they take the background's disparity.
Only the nearer side is ever shortened, so an edge moves towards the object and never away from
it. Runs on the host with NumPy after either backend, so it is the same on every backend.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import checked_int, checked_number, unpacked

__all__ = ["ForegroundTrim", "check_foreground_trim", "trim_foreground"]


class ForegroundTrim(NamedTuple):
    """Settings of :func:`trim_foreground` as :func:`~graphcut.stereo.disparity` applies it
    (``foreground_trim=ForegroundTrim()``, the default). Chosen on the development pairs of
    bench/bench_stereo.py only (docs/stereo.md, "Foreground trimming").

    reach: at most this many pixels of the nearer side are given back (pixels); colour_tolerance:
    each of them differs from the background pixel beside the depth edge by at most this much
    in every channel (grey levels, 0..255); edge_contrast: the run ends at the first pair of
    neighbours differing by more than this in some channel (grey levels), the object's edge;
    flatness: the background is flat there, the background pixel beside the depth edge and the
    next one beyond it differ by at most this much in every channel (grey levels); jump: a
    depth edge is a step of more than this many labels between neighbours; plateau: a step of
    one label only counts where both sides are level, the ``plateau`` pixels beyond the
    background pixel carry its label and the ``plateau`` pixels beyond the object's colour
    edge the nearer side's (pixels; a slanted surface's staircase has no such plateaus).
    """

    reach: int = 7
    colour_tolerance: float = 20.0
    edge_contrast: float = 20.0
    flatness: float = 12.0
    jump: int = 0
    plateau: int = 5


def check_foreground_trim(settings) -> ForegroundTrim:
    """``settings`` as a :class:`ForegroundTrim` after checking its values (ValueError)."""
    reach, colour_tolerance, edge_contrast, flatness, jump, plateau = unpacked(
        settings, "foreground_trim", "ForegroundTrim", ForegroundTrim._fields)
    owner = "foreground trim"
    levels = {name: checked_number(owner, name, value, 0, 255, "0..255 (grey levels)")
              for name, value in (("colour_tolerance", colour_tolerance),
                                  ("edge_contrast", edge_contrast), ("flatness", flatness))}
    return ForegroundTrim(checked_int(owner, "reach", reach, 1, 256, " pixels"), **levels,
                          jump=checked_int(owner, "jump", jump, 0, 1 << 16, " labels"),
                          plateau=checked_int(owner, "plateau", plateau, 0, 256, " pixels"))


def _channel_max(difference: np.ndarray) -> np.ndarray:
    """Largest absolute value over the last axis (the channels), one channel at a time (a
    reduction over a short last axis is slow in NumPy)."""
    out = np.abs(difference[..., 0])
    for channel in range(1, difference.shape[-1]):
        np.maximum(out, np.abs(difference[..., channel]), out=out)
    return out


def _level_sides(labels, ys, a, b, end, sign: int, plateau: int) -> np.ndarray:
    """Per depth edge (rows ``ys``, pixels ``a``, ``b`` and the run's last pixel ``end``): True
    where the step is more than one label, or the ``plateau`` pixels beyond ``a`` (away from
    ``b``) all carry ``a``'s label and the ``plateau`` pixels beyond ``end`` all carry ``b``'s
    (clipped at the line's ends)."""
    w = labels.shape[1]
    offsets = sign * np.arange(1, plateau + 1)[np.newaxis, :]
    rows = ys[:, np.newaxis]
    before = labels[rows, np.clip(a[:, np.newaxis] - offsets, 0, w - 1)]
    beyond = labels[rows, np.clip(end[:, np.newaxis] + offsets, 0, w - 1)]
    level = (np.all(before == labels[ys, a][:, np.newaxis], axis=1)
             & np.all(beyond == labels[ys, b][:, np.newaxis], axis=1))
    return level | (np.abs(labels[ys, b] - labels[ys, a]) > 1)


def _trim_rows(labels: np.ndarray, levels: np.ndarray, settings: ForegroundTrim) -> np.ndarray:
    """One pass of :func:`trim_foreground` along the rows of int64 ``labels`` (H, W) with
    float (H, W, C) ``levels``; the new labels (a copy)."""
    h, w = labels.shape
    reach = settings.reach
    out = labels.copy()
    # contrast[y, x]: largest channel difference between (y, x) and (y, x + 1)
    contrast = _channel_max(levels[:, 1:] - levels[:, :-1])
    step = labels[:, 1:] - labels[:, :-1]
    for sign in (1, -1):
        # the background pixel a and the first foreground pixel b = a + sign of each depth edge
        ys, xs = np.nonzero(sign * step > settings.jump)
        if ys.size == 0:
            continue
        a = xs if sign == 1 else xs + 1
        b = a + sign
        # the background pixel beyond a (a itself at the line's end) is like a: a flat
        # background; and the walk's first pixel b is like a (else it stops at once)
        beyond = np.clip(a - sign, 0, w - 1)
        keep = ((_channel_max(levels[ys, beyond] - levels[ys, a]) <= settings.flatness)
                & (_channel_max(levels[ys, b] - levels[ys, a]) <= settings.colour_tolerance))
        ys, a, b = ys[keep], a[keep], b[keep]
        walk = b[:, None] + sign * np.arange(reach)[None, :]       # p_j, j = 0 .. reach - 1
        after = walk + sign                                        # the pixel beyond p_j
        inside = (after >= 0) & (after < w)
        p = np.clip(walk, 0, w - 1)
        rows = ys[:, None]
        near = np.abs(labels[rows, p] - labels[ys, b][:, None]) <= 1
        similar = (_channel_max(levels[rows, p] - levels[ys, a][:, None, :])
                   <= settings.colour_tolerance)
        edge = contrast[rows, np.clip(np.minimum(p, after), 0, w - 2)] > settings.edge_contrast
        usable = inside & near & similar
        # the walk goes on past p_j while p_j is usable and no edge follows it
        goes_on = np.cumprod(usable & ~edge, axis=1)
        reached = np.ones_like(usable)
        reached[:, 1:] = goes_on[:, :-1].astype(bool)
        found = reached & usable & edge
        hit = found.any(axis=1)
        if not hit.any():
            continue
        length = found.argmax(axis=1) + 1                          # pixels given back
        if settings.plateau:
            hit &= _level_sides(labels, ys, a, b, b + sign * (length - 1), sign,
                                settings.plateau)
        length = length[hit]
        if length.size == 0:
            continue
        starts, rows_hit, backgrounds = b[hit], ys[hit], labels[ys[hit], a[hit]]
        offsets = np.arange(length.sum()) - np.repeat(np.cumsum(length) - length, length)
        out[np.repeat(rows_hit, length), np.repeat(starts, length) + sign * offsets] = \
            np.repeat(backgrounds, length)
    return out


def trim_foreground(labels, levels, *, reach: int = 7, colour_tolerance: float = 20.0,
                    edge_contrast: float = 20.0, flatness: float = 12.0, jump: int = 0,
                    plateau: int = 5) -> np.ndarray:
    """Give the background back the pixels a foreground object "fattened" over.

    Along every row (then every column of the result), at each depth edge, a step of more than
    ``jump`` labels between neighbours ``a`` (the farther side) and ``b`` (the nearer), walk from
    ``b`` into the nearer side over ``p_0 = b, p_1, ...`` for at most ``reach`` pixels while each
    ``p_j`` lies within 1 label of ``b`` and within ``colour_tolerance`` grey levels of ``a`` in
    every channel; only where the background is flat there (``a`` and the pixel beyond it,
    away from ``b``, within ``flatness`` grey levels in every channel; ``a`` itself at the
    line's end). If the contrast between some ``p_j`` and the next pixel exceeds
    ``edge_contrast`` before the walk stops, ``p_0 .. p_j`` (the first such ``j``) take ``a``'s
    label: the depth edge moves to that colour edge. Otherwise nothing changes. A step of one
    label counts only between plateaus: the ``plateau`` pixels beyond ``a`` carry ``a``'s label
    and the ``plateau`` pixels beyond ``p_j`` carry ``b``'s (a slanted surface's staircase
    is left alone). All edges of a
    pass read the pass's input labels; where two runs overlap, the later of the walks to higher
    and then to lower indices writes last.

    Parameters
    ----------
    labels
        (H, W) integer disparities (pixels).
    levels
        the left image, (H, W) or (H, W, C) grey levels (0..255 scale).
    reach, colour_tolerance, edge_contrast, flatness, jump, plateau
        as in :class:`ForegroundTrim` (pixels, grey levels, grey levels, grey levels,
        labels, pixels).

    Returns
    -------
    numpy.ndarray
        int32 (H, W) disparities.

    Examples
    --------
    A bright object (columns 6..) at disparity 5 before a dark background at 1, its disparity
    fattened by two pixels over the background:

    >>> import numpy as np
    >>> image = np.zeros((1, 10)); image[0, 6:] = 200
    >>> labels = np.array([[1, 1, 1, 1, 5, 5, 5, 5, 5, 5]])
    >>> trim_foreground(labels, image)
    array([[1, 1, 1, 1, 1, 1, 5, 5, 5, 5]], dtype=int32)
    """
    settings = check_foreground_trim(ForegroundTrim(reach, colour_tolerance, edge_contrast,
                                                    flatness, jump, plateau))
    labels = np.asarray(labels)
    levels = np.asarray(levels, dtype=np.float32)
    if levels.ndim == 2:
        levels = levels[..., np.newaxis]
    if labels.ndim != 2 or levels.ndim != 3 or levels.shape[:2] != labels.shape:
        raise ValueError(f"labels (H, W) and levels (H, W[, C]) must match, got {labels.shape} "
                         f"and {levels.shape}")
    if not np.issubdtype(labels.dtype, np.integer):
        raise TypeError(f"labels must be integers, got {labels.dtype}")
    out = labels.astype(np.int64)
    if labels.shape[1] > 1:
        out = _trim_rows(out, levels, settings)
    if labels.shape[0] > 1:
        out = _trim_rows(np.ascontiguousarray(out.T),
                         np.ascontiguousarray(levels.transpose(1, 0, 2)), settings).T
    return np.ascontiguousarray(out, dtype=np.int32)
