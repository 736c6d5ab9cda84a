"""The box tightness prior: the object crosses every row and column of its box.

Lempitsky, Kohli, Rother and Sharp ("Image segmentation with a bounding box prior", ICCV
2009): a box drawn around an object is tight, so every line of it (each row and each column,
allowing for the user's margin) holds at least one object pixel. A cut that leaves a line
empty has usually smoothed a thin part away (a blade, a handle, a small nucleus's rim).
Their "pinpointing" enforces the prior greedily: after a cut, pin (hard-label as object) one
pixel of a line the mask does not cross, re-cut, repeat until every line is crossed. Here:

- the lines: the box's rows and columns shrunk by :data:`MARGIN` of its larger side at each
  end (the user's margin: :func:`tight_lines`), inside the box's span;
- each line's candidate: its pixel (in the box, not pinned to the background) of lowest
  ``cost_object - cost_background`` (not smoothed: a part one pixel thin counts); a line
  whose candidate costs more than :data:`THRESHOLD` nats is left alone (its colours say
  background everywhere: a loose box's margin, not a part smoothed away), as is a line
  with no candidate;
- each round pins the middle line of every run of consecutive uncrossed lines (rows and
  columns alike), then re-cuts (through ``cut``, incremental in a :class:`~graphcut.Segmenter`);
  a pinned pixel pulls its neighbours in, so a run of ``n`` lines takes about ``log2(n)``
  rounds; after :data:`MAX_ROUNDS` rounds every line still uncrossed is pinned at once.

The pipeline applies it after the cut(s) of one object with a box (an image's box, not a
lasso), for every model but the live GMM's box (``warm=True``: measured no gain on the photo
cut-outs, +0.004 box IoU, for 28 ms more a box at 4 MP on a GPU). Every cut is exact for its
constraints; pins only add object constraints, so a box's
constraints (outside = background) and the seeds hold exactly. The pins depend on the
costs, the box and the constraints only, so an incremental answer equals a fresh one.

Since the seventeenth session the pins' costs (candidates and re-cuts) add the model's
``neighbours`` nats (default :data:`~._box_neighbours.NEIGHBOUR_COST`) to the object's cost
at the box's pixels a neighbour crossing its side brings in (:mod:`._box_neighbours`: they
depend on the image's values and the box only): the pins had pulled such bridges into the
small dev nuclei's masks (bench/RESULTS.md, seventeenth session, box17). The first cut is
unchanged, and nothing is computed when every line is crossed.
"""

from __future__ import annotations

import math
import time

import numpy as np

from graphcut._arrays import array_module, to_host
from graphcut._labels import BACKGROUND, FOREGROUND

from . import _box_neighbours
from ._box_neighbours import image_values, with_neighbour_cost
from ._problems import binary_problem

#: the margin left at each end of the box's lines, a fraction of the box's larger side
#: (bench/bench_quality.py's robot draws the truth's box grown by 5 % of the truth's larger
#: side, about 4.5 % of the box's)
MARGIN = 0.05
#: nats: a line whose best candidate's object cost exceeds its background cost by more
#: than this is not pinned (None: every uncrossed line is pinned)
THRESHOLD = 0.0
#: rounds of middle-of-run pins before every remaining line is pinned at once (8 until the
#: nineteenth session: the dev boxes and photo cut-outs are the same with 8, 2 or 1, and one
#: round re-cuts at most twice; bench/RESULTS.md, eighteenth and nineteenth sessions)
MAX_ROUNDS = 1
#: the prior is applied (False: the cut's mask as it is; for measuring)
ENABLED = True


def tight_box(o):
    """The box the prior applies to for the checked options ``o``: ``o["box"]`` (an image's
    box without a lasso) when :data:`ENABLED` and the model's ``box_tightness`` is set (the
    learned model; the histogram's and the GMM's masks stay those of settings files written
    before the prior), else None."""
    box = o.get("box")
    if not ENABLED or box is None or o.get("lasso") is not None or len(box) != 4 \
            or not getattr(o.get("appearance"), "box_tightness", False):
        return None
    return tuple(int(v) for v in box)


def pinned_binary(binary, pins):
    """``binary`` (0 free, 1 object, 2 background) with the free pixels of the host bool
    ``pins`` made object (``pins`` None or without a pin: ``binary`` itself)."""
    if pins is None or not pins.any():
        return binary
    xp = array_module(binary)
    return xp.where(xp.asarray(pins) & (binary == 0), xp.uint8(FOREGROUND),
                    binary).astype(xp.uint8)


def tight_lines(box, margin: float = MARGIN):
    """The rows and columns of ``box`` that the object should cross: ``(row0, col0, row1,
    col1)`` half-open, the box shrunk at each end by ``ceil(margin * larger side)`` pixels
    (an empty range on an axis when the box is too thin for it).

    Parameters
    ----------
    box : tuple of int
        ``(row0, col0, row1, col1)``, half-open.
    margin : float
        The fraction of the box's larger side left out at each end (0: every line).

    Returns
    -------
    tuple of int

    Examples
    --------
    >>> tight_lines((10, 20, 110, 60))
    (15, 25, 105, 55)
    """
    r0, c0, r1, c1 = (int(v) for v in box)
    m = math.ceil(margin * max(r1 - r0, c1 - c0))
    return r0 + m, c0 + m, max(r0 + m, r1 - m), max(c0 + m, c1 - m)


def line_candidates(cost_object, cost_background, binary, box):
    """Each line's best pixel to pin, inside ``box``: per row of the box the column (and
    per column the row) of the lowest ``cost_object - cost_background`` among its pixels not
    pinned to the background (``binary`` 2), and that score (nats; +inf when the line has
    none). Host NumPy arrays, indexed from the box's first row / column.

    Returns
    -------
    tuple
        ``(row_best_col, row_score, col_best_row, col_score)``; columns / rows absolute.
    """
    r0, c0, r1, c1 = (int(v) for v in box)
    # the box's part comes to the host (on a GPU: two copies, no reduction to compile)
    diff = np.asarray(to_host(cost_object[r0:r1, c0:c1] - cost_background[r0:r1, c0:c1]),
                      dtype=np.float64)
    score = np.where(to_host(binary[r0:r1, c0:c1]) == BACKGROUND, np.inf, diff)
    row_col, col_row = np.argmin(score, axis=1), np.argmin(score, axis=0)
    row_score, col_score = score.min(axis=1), score.min(axis=0)
    return row_col + c0, row_score, col_row + r0, col_score


def _middles(uncrossed):
    """The middle index of every run of consecutive True entries of a host bool vector."""
    padded = np.concatenate([[False], uncrossed, [False]]).astype(np.int8)
    starts = np.flatnonzero(np.diff(padded) == 1)
    stops = np.flatnonzero(np.diff(padded) == -1)
    return (starts + stops - 1) // 2


def pinpoint(cost_object, cost_background, nlinks, binary, mask, box, *, cut, scale,
             weights=None, margin=MARGIN, threshold=THRESHOLD, max_rounds=None,
             result=None):
    """The tightness prior's pinpointing (see the module's notes) from the cut ``mask``.

    Parameters
    ----------
    cost_object, cost_background : arrays (H, W)
        The labels' costs (nats) the cut was made with (priors included).
    nlinks : tuple of arrays
        The quantised n-link capacities.
    binary : array (H, W) of uint8
        The cut's constraints: 0 free, 1 object, 2 background.
    mask : array (H, W) of bool
        The cut's mask (on the costs' device).
    box : tuple of int
        ``(row0, col0, row1, col1)``, half-open.
    cut : callable
        ``cut(network) -> CutResult``.
    scale : float
        The problems' scale (:func:`~._problems.binary_problem`).
    weights : array (H, W) or None
        The pixels' sample weights (the problems' offsets).
    margin, threshold, max_rounds :
        :data:`MARGIN`, :data:`THRESHOLD` (None: no threshold), the rounds of middle-of-run
        pins (None: :data:`MAX_ROUNDS`, read at the call).
    result : CutResult, optional
        The cut that gave ``mask`` (returned when no line needs a pin).

    Returns
    -------
    tuple
        ``(mask, pins, result, problem, rounds)``: the final mask, the pinned pixels (host
        bool (H, W); all False when none), the last CutResult and BinaryProblem (None when
        no cut was made) and the number of re-cuts.
    """
    xp = array_module(cost_object)
    max_rounds = MAX_ROUNDS if max_rounds is None else int(max_rounds)
    shape = tuple(mask.shape)
    pins = np.zeros(shape, dtype=bool)
    lines = tight_lines(box, margin)
    r0, c0, r1, c1 = (int(v) for v in box)
    if lines[2] <= lines[0] or lines[3] <= lines[1]:
        return mask, pins, result, None, 0
    row_col, row_score, col_row, col_score = line_candidates(cost_object, cost_background,
                                                             binary, box)
    limit = np.inf if threshold is None else float(threshold)
    # lines that may be pinned, indexed within the tight lines
    rows = slice(lines[0] - r0, lines[2] - r0)
    cols = slice(lines[1] - c0, lines[3] - c0)
    row_ok = np.isfinite(row_score[rows]) & (row_score[rows] <= limit)
    col_ok = np.isfinite(col_score[cols]) & (col_score[cols] <= limit)
    problem, rounds = None, 0
    while True:
        crossed_rows, crossed_cols = _crossed(mask, lines, box)
        want_rows, want_cols = row_ok & ~crossed_rows, col_ok & ~crossed_cols
        if not (want_rows.any() or want_cols.any()):
            break
        if rounds < max_rounds:
            rows_now, cols_now = _middles(want_rows), _middles(want_cols)
        else:
            rows_now, cols_now = np.flatnonzero(want_rows), np.flatnonzero(want_cols)
        r_index = rows_now + lines[0]
        c_index = cols_now + lines[1]
        pin_r = np.concatenate([r_index, col_row[cols_now + (lines[1] - c0)]])
        pin_c = np.concatenate([row_col[rows_now + (lines[0] - r0)], c_index])
        pins[pin_r, pin_c] = True
        constraints = pinned_binary(binary, pins)
        problem = binary_problem(cost_object, cost_background, nlinks, constraints, scale=scale,
                                 weights=weights)
        result = cut(problem.network)
        mask = xp.asarray(result.source_side, dtype=bool)
        rounds += 1
        if rounds > max_rounds:
            break  # every wanted line was pinned at once: all crossed
    return mask, pins, result, problem, rounds


def _crossed(mask, lines, box):
    """Host bool vectors: whether each tight row / column holds an object pixel in ``box``
    (the mask lies in the box: outside is background; the box's part of the mask is copied
    to the host)."""
    r0, c0, r1, c1 = lines
    b0, d0, b1, d1 = (int(v) for v in box)
    part = np.asarray(to_host(mask[b0:b1, d0:d1]), dtype=bool)
    return part[r0 - b0:r1 - b0].any(axis=1), part[:, c0 - d0:c1 - d0].any(axis=0)


def neighbour_cost(model) -> float:
    """Nats added to the object's cost at a neighbour's pixels in the pins' cuts: the model's
    ``neighbours`` (None or absent: :data:`~._box_neighbours.NEIGHBOUR_COST`)."""
    value = getattr(model, "neighbours", None)
    return _box_neighbours.NEIGHBOUR_COST if value is None else float(value)


def tighten_run(values, nlinks, binary, model, run, box, *, priors, weights, scale, cut,
                margin=MARGIN, threshold=THRESHOLD):
    """:func:`pinpoint` after GrabCut's iterations (or one cut): the costs under the fitted
    ``model`` (plus ``priors``), and the :class:`~._grabcut.Iterated` ``run`` updated when a
    pin was needed.

    Returns
    -------
    tuple
        ``(run, pins)``: the (possibly new) Iterated and the pinned pixels (host bool), or
        None when every line was crossed already (the costs are then not computed).
    """
    import dataclasses

    from ._grabcut import _costs

    started = time.perf_counter()
    lines = tight_lines(box, margin)
    if lines[2] <= lines[0] or lines[3] <= lines[1] or all(
            bool(c.all()) for c in _crossed(run.labels, lines, box)):
        return run, None  # every line crossed: no costs to compute, nothing to pin
    cost_object, cost_background = _costs(values, model, priors)
    # a neighbour crossing the box's side is not the object (:mod:`._box_neighbours`)
    cost_object = with_neighbour_cost(cost_object, image_values(values, model), box,
                                      neighbour_cost(model))
    mask, pins, result, problem, rounds = pinpoint(
        cost_object, cost_background, nlinks, binary, run.labels, box, cut=cut, scale=scale,
        weights=weights, margin=margin, threshold=threshold, result=run.last)
    seconds = dict(run.seconds)
    seconds["tightness"] = time.perf_counter() - started
    if rounds == 0:
        return dataclasses.replace(run, seconds=seconds), pins
    energy = result.flow / scale + problem.offset  # under more constraints: not in history
    return dataclasses.replace(
        run, labels=mask, energy=energy, flow=result.flow,
        cut_seconds=run.cut_seconds + result.seconds, seconds=seconds, last=result), pins
