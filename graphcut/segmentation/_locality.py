"""Strokes act locally: each label's fixed cost from the distance to its nearest seed
(:func:`_locality_priors`), for the pipeline (:mod:`._pipeline`).

A label's cost depends only on its seeds (on a live model's blocks: which blocks hold one) and
the constants, so the last few labels' costs are remembered (:data:`MEMO_SIZE`, blocks only):
after a stroke only the stroked label's distance transform is computed again; the others are
found equal and reused, the same numbers.
"""

from __future__ import annotations

import math

import numpy as np

from graphcut._arrays import to_host

from ._hold import blocks_holding

# Strokes act locally: near its seeds a label's cost is lowered by up to ``locality`` nats,
# fading with the distance d to the nearest seed as exp(-d^2 / (2 rho^2)), rho =
# LOCALITY_REACH * sqrt(H * W) (5 % of a square image's side; a volume's (D * H * W) ** (1/3)).
LOCALITY_REACH = 0.05
# Strokes only (no box or lasso): an object's cost rises with the distance d to its nearest
# seed as far_cost * (1 - exp(-d^2 / (2 R^2))), R = FAR_REACH * sqrt(H * W) (20 % of a square
# image's side), so that regions far from every object stroke do not turn object merely for
# sharing a colour with it (the box does this job when there is one). Chosen on
# bench/bench_quality.py's development set.
FAR_REACH = 0.2

#: how many labels' block costs are remembered (a live model's strokes; each a few MB at most;
#: 0: none)
MEMO_SIZE = 8
_memo: list = []  # (key, the label's seeded blocks, its device cost), the newest last

#: on the GPU a label's block costs come from one brute-force kernel over its seeded blocks
#: (``energy_kernels.cu``'s ``nearest_seed_cost``: exact integer distances, each looked up in
#: a table of the host's costs, so the same numbers) when blocks x seeded blocks is at most
#: this; else from SciPy's transform on the host. 0: always the host (the state before the
#: eighteenth session, for A/B runs)
DEVICE_PAIRS = 1 << 28
#: ... and when the table of every squared distance of the block grid, (rows - 1)^2 + (cols -
#: 1)^2 + 1 entries, has at most this many (a long thin grid's would not fit)
TABLE_ENTRIES = 1 << 22
_tables: dict = {}  # key -> the device's cost of every squared block distance


def _block_cost(chosen, block, strength, far, rho, reach, xp):
    """One label's cost per block (per pixel when ``block`` is 1) on ``xp``'s device, from
    the host bool array ``chosen`` (where its seeds are); remembered when ``block`` > 1."""
    device = xp.cuda.Device().id if xp is not np else None
    key = (chosen.shape, block, strength, far, rho, reach, xp.__name__, device)
    if block > 1:
        for cached_key, cached, cost in _memo:
            if cached_key == key and np.array_equal(cached, chosen):
                return cost
    if xp is not np and block > 1 and chosen.ndim == 2 and \
            chosen.size * int(np.count_nonzero(chosen)) <= DEVICE_PAIRS and \
            sum((n - 1) ** 2 for n in chosen.shape) < TABLE_ENTRIES:
        from graphcut._arrays import energy_kernels

        table = _distance_table(key, chosen.shape, block, strength, far, rho, reach, xp)
        cost = energy_kernels().nearest_seed_costs(chosen.shape, chosen, table)
    else:
        from scipy import ndimage

        squared = (ndimage.distance_transform_edt(~chosen) * block) ** 2
        cost = xp.asarray(_cost_of_squared(squared, strength, far, rho, reach))
    if block > 1 and MEMO_SIZE > 0:
        _memo.append((key, chosen.copy(), cost))
        del _memo[:-MEMO_SIZE]
    return cost


def _cost_of_squared(squared, strength, far, rho, reach):
    """The locality cost (host float64, nats) at squared distances ``squared`` (pixels^2)."""
    cost = np.zeros(squared.shape)
    if strength > 0:
        cost -= strength * np.exp(-squared / (2 * rho * rho))
    if far > 0:
        cost += far * -np.expm1(-squared / (2 * reach * reach))
    return cost


def _distance_table(key, shape, block, strength, far, rho, reach, xp):
    """On ``xp``'s device: entry ``d`` is the cost of a block at squared distance ``d``
    (blocks^2) from its label's nearest seeded block, for every ``d`` of a ``shape`` grid,
    computed as the host path computes it from SciPy's distance (the square root of that
    integer, times ``block``, squared). Kept for the last two keys."""
    table = _tables.get(key)
    if table is None:
        largest = (shape[0] - 1) ** 2 + (shape[1] - 1) ** 2
        distance = np.sqrt(np.arange(largest + 1, dtype=np.float64))
        table = xp.asarray(_cost_of_squared((distance * block) ** 2, strength, far, rho, reach))
        _tables[key] = table
        while len(_tables) > 2:
            _tables.pop(next(iter(_tables)))
    return table


def _locality_priors(seeds, labels, strength, xp, *, far_cost=0.0, objects=(), block=1):
    """Per label (in ``labels`` order): None, or a fixed cost (H, W) in nats added to its
    colour model's, from the distance d (pixels) to the label's nearest seed:

    - ``-strength * exp(-d^2 / (2 rho^2))``, ``rho = LOCALITY_REACH * sqrt(H * W)``: a bonus
      for every label near its strokes;
    - for the labels in ``objects`` also ``far_cost * (1 - exp(-d^2 / (2 R^2)))``, ``R =
      FAR_REACH * sqrt(H * W)``: a cost for an object far from its strokes.

    The distances are exact Euclidean distance transforms of the host seeds (SciPy), so the
    CPU and GPU paths add the same numbers; the costs are then moved to ``xp``'s device. (On
    the GPU with ``block`` > 1 one kernel finds each block's exact integer squared distance
    and looks its cost up in a table the host computed the same way: :data:`DEVICE_PAIRS`.)
    ``block`` > 1 (a live model's strokes, see :mod:`._coarse`): the distances are those
    between ``block x block`` blocks holding a seed (times ``block``), each block's cost is
    given to its pixels: a transform of ``block^2`` times fewer pixels, within ``block *
    sqrt(2)`` pixels of the exact distance."""
    if strength <= 0 and far_cost <= 0:
        return None
    shape = tuple(seeds.shape)
    # blocks: the seeds' labels pooled on their device, only the blocks copied to the host
    # (NumPy: from the seeded pixels' coordinates, found once)
    host = to_host(seeds) if block == 1 else None
    seeded = _seeded_blocks(seeds, block) if block > 1 and xp is np else None
    # the mean side: sqrt(H * W); for a volume the cube root of D * H * W
    count = math.prod(shape)
    size = math.sqrt(count) if len(shape) == 2 else count ** (1 / len(shape))
    rho, reach = LOCALITY_REACH * size, FAR_REACH * size
    priors = [None] * len(labels)
    for index, label in enumerate(labels):
        chosen = host == label if block == 1 else seeded(label) if seeded is not None else \
            to_host(blocks_holding(seeds == label, block))
        far = far_cost if label in objects else 0.0
        if chosen.any() and (strength > 0 or far > 0):
            cost = _block_cost(chosen, block, strength, far, rho, reach, xp)
            if block > 1:  # each block's cost given to its pixels, in one copy
                rows, cols = cost.shape
                cost = xp.broadcast_to(cost[:, None, :, None], (rows, block, cols, block))
                cost = xp.ascontiguousarray(
                    cost.reshape(rows * block, cols * block)[:shape[0], :shape[1]])
            priors[index] = cost
    return priors if any(p is not None for p in priors) else None


def _seeded_blocks(seeds, block):
    """For host ``seeds`` (H, W): a function of a label giving bool (ceil(H / block),
    ceil(W / block)), whether each block holds a seed of that label (as
    :func:`~._hold.blocks_holding`), from the seeded pixels' coordinates found once."""
    rows, cols = np.nonzero(seeds)
    values = seeds[rows, cols]
    shape = (-(-seeds.shape[0] // block), -(-seeds.shape[1] // block))

    def blocks(label):
        chosen = np.zeros(shape, bool)
        mine = values == label
        chosen[rows[mine] // block, cols[mine] // block] = True
        return chosen
    return blocks
