"""Cut problems from per-label colour costs: the binary network and the K-label Potts problem.

Energy of a labelling L of the pixels under colour models theta (nats):

    E(L, theta) = sum_p D_p(L_p; theta) + sum_{p~q, L_p != L_q} lam w_pq

with ``D_p(l) = costs of label l's model at p`` (``-log p(I_p | l)``) and ``w_pq`` the
contrast weights of :func:`graphcut.segmentation.nlink_weights`. Hard constraints (seeds, pixels
outside a box or lasso) pin pixels to a label.

The solvers see integers: per pixel, every label's cost is lowered by the same ``shift_p``
(binary: ``min(0, D_p(object), D_p(background))``, so non-negative costs such as the
histogram's are used as they are; K labels: the smallest of the pixel's costs), then multiplied
by ``scale`` and rounded. The energy these problems report is

    E_q(L, theta) = [integer energy of L] / scale + offset(theta),
    offset = sum over free pixels of shift_p + sum over pinned pixels of w_p D_p(their label),

which a minimum cut (or an accepted expansion move) minimises exactly over L for fixed theta,
and which is within 0.5 / scale per term of E(L, theta). ``w_p`` is the pixel's weight in the
colour models' samples (1, or more for a seed, see :mod:`._segment`): a pinned pixel's colour
term does not change with L, but it does with theta, and counting it as the models' fits do
keeps each re-estimation from raising the energy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphcut._arrays import array_module
from graphcut._arrays import energy_kernels as _gpu
from graphcut._labels import BACKGROUND, FOREGROUND
from graphcut.solver import GridNetwork

from ._boundary import check_positive
from ._capacities import (INT32_MAX, TERMINAL_NAMES, check_scaled, checked_grid, pin_seeds,
                          quantize, terminal_capacities)

#: pixels per chunk of the host path's capacities (:func:`_shift_and_capacities`)
CHUNK_PIXELS = 1 << 15


def _sum(array) -> float:
    return float(array.sum())


@dataclass
class BinaryProblem:
    """One object against the background: a :class:`GridNetwork` (source side = object)."""

    network: GridNetwork
    offset: float
    scale: float

    def energy(self, mask) -> float:
        """E_q of the bool mask (True = object) that meets the constraints."""
        return cut_capacity(self.network, mask) / self.scale + self.offset


def binary_problem(cost_object, cost_background, nlinks, constraints, *, scale,
                   weights=None) -> BinaryProblem:
    """The network of the binary energy; ``constraints`` (H, W): 0 free, 1 object, 2
    background (on the costs' device); ``nlinks`` the quantised ``(right, down)``;
    ``weights`` the pixels' sample weights (None: all 1)."""
    xp = array_module(cost_object)
    if xp is np and cost_object.dtype == cost_background.dtype == np.float64:
        return _binary_on_host(cost_object, cost_background, nlinks, constraints, scale,
                               weights)
    if _fused_on_device(cost_object, cost_background, nlinks, constraints, weights):
        fused = _binary_on_device(cost_object, cost_background, nlinks, constraints, scale,
                                  weights)
        if fused is not None:
            return fused
    shift = xp.minimum(xp.minimum(cost_object, cost_background), 0.0)
    source, sink = terminal_capacities(cost_object - shift, cost_background - shift, nlinks,
                                       constraints, scale=scale)
    is_object = constraints == FOREGROUND
    is_background = constraints == BACKGROUND
    free = ~(is_object | is_background)
    pinned_cost = xp.where(is_object, cost_object, xp.where(is_background, cost_background, 0.0))
    if weights is not None:
        pinned_cost = pinned_cost * weights
    offset = _sum(xp.where(free, shift, 0.0)) + _sum(pinned_cost)
    forward = tuple(nlinks)[::-1]  # nlinks: last axis first, (right, down[, across slices])
    return BinaryProblem(GridNetwork(source, sink, forward=forward), offset, float(scale))


def _binary_on_host(cost_object, cost_background, nlinks, constraints, scale,
                    weights) -> BinaryProblem:
    """:func:`binary_problem` on NumPy float64 costs: the same network and offset (the same
    arrays summed in the same order), in one float64 buffer for both capacities and with the
    seeds' pins and costs read at the pinned pixels only (the generic path makes a dozen
    image-sized temporaries: on the CPU their page faults cost more than the arithmetic)."""
    shape = tuple(cost_object.shape)
    constraints, links = checked_grid(cost_object, cost_background, nlinks, constraints)
    check_positive("scale", scale)
    shift, (source, sink) = _shift_and_capacities(cost_object, cost_background, scale)
    pinned, is_object = pin_seeds(source, sink, links, constraints)
    pinned_cost = np.zeros(shape)  # as the generic path's: 0 but at the pinned pixels
    chosen = np.where(is_object, cost_object.flat[pinned], cost_background.flat[pinned])
    if weights is not None:
        chosen = chosen * np.broadcast_to(weights, shape).flat[pinned]
    pinned_cost.reshape(-1)[pinned] = chosen
    shift.reshape(-1)[pinned] = 0.0  # the free pixels' shifts
    offset = _sum(shift) + _sum(pinned_cost)
    forward = links[::-1]
    return BinaryProblem(GridNetwork(source, sink, forward=forward), offset, float(scale))


def _fused_on_device(cost_object, cost_background, nlinks, constraints, weights) -> bool:
    """Whether :func:`_binary_on_device` takes these arrays: a 2-D grid on the device, every
    array C-contiguous and of the kernel's dtype and the grid's shape (else the generic
    path runs, with its checks and messages)."""
    if array_module(cost_object) is np or cost_object.ndim != 2:
        return False
    shape = tuple(cost_object.shape)
    links = tuple(nlinks)
    expected = ((np.float64, shape), (np.float64, shape), (np.uint8, shape),
                (np.int32, (shape[0], shape[1] - 1)), (np.int32, (shape[0] - 1, shape[1])))
    arrays = (cost_object, cost_background, constraints, *links)
    if weights is not None:
        arrays, expected = arrays + (weights,), expected + ((np.float64, shape),)
    return len(links) == 2 and all(
        array_module(a) is not np and a.dtype == dtype and tuple(a.shape) == want
        and a.flags.c_contiguous for a, (dtype, want) in zip(arrays, expected))


def _binary_on_device(cost_object, cost_background, nlinks, constraints, scale,
                      weights) -> BinaryProblem | None:
    """:func:`binary_problem` on the GPU in one kernel launch and one read (the generic
    path's dozen launches and a dozen reads: the checks of ``GridNetwork`` and of the seeds,
    two quantizations, the pins, two sums): the same capacities, and the offset's two sums
    added in another order (so within rounding of the generic path's). None when a value is
    out of range or a constraint is not 0 / 1 / 2: the generic path then raises its message."""
    check_positive("scale", scale)
    right, down = tuple(nlinks)
    source, sink, fits, offset = _gpu().binary_capacities(
        cost_object, cost_background, constraints, weights, right, down, float(scale))
    if not fits:
        return None
    network = GridNetwork.from_checked(source, sink, forward=(down, right))
    return BinaryProblem(network, offset, float(scale))


def _shift_and_capacities(cost_object, cost_background, scale):
    """The shift ``min(0, cost_object, cost_background)`` (float64, shaped like the costs)
    and ``(quantize(cost_background - shift), quantize(cost_object - shift))`` with their
    messages, :data:`CHUNK_PIXELS` pixels at a time in one float64 buffer that stays in the
    cache (the same float64 operations per pixel, so the same numbers); a chunk out of range
    sends both arrays through :func:`check_scaled` whole, which raises the generic path's
    error (the source's first)."""
    shape = tuple(cost_object.shape)
    n = cost_object.size
    costs = (np.ravel(cost_background), np.ravel(cost_object))
    shift = np.empty(shape)
    shifts = shift.reshape(-1)
    out = (np.empty(shape, np.int32), np.empty(shape, np.int32))
    flat = tuple(o.reshape(-1) for o in out)
    buffer = np.empty(max(1, min(CHUNK_PIXELS, n)))
    for start in range(0, n, CHUNK_PIXELS):
        stop = min(start + CHUNK_PIXELS, n)
        work = buffer[:stop - start]
        np.minimum(costs[1][start:stop], costs[0][start:stop], out=shifts[start:stop])
        np.minimum(shifts[start:stop], 0.0, out=shifts[start:stop])
        for index in (0, 1):
            np.subtract(costs[index][start:stop], shifts[start:stop], out=work)
            work *= scale
            np.rint(work, out=work)
            if not (work.min() >= 0 and work.max() <= INT32_MAX):  # NaN fails too
                for whole, what in zip(costs, TERMINAL_NAMES):
                    check_scaled(np.rint((whole - shifts) * scale), scale, what)
            flat[index][start:stop] = work
    return shift, out


def cut_capacity(network: GridNetwork, source_side) -> int:
    """Capacity of the cut whose source side is ``source_side`` (bool (H, W) or (D, H, W)), on the
    network's device (an exact int)."""
    xp = array_module(network.source)
    s = xp.asarray(source_side, dtype=bool)
    if xp is not np and s.ndim == 2 and s.flags.c_contiguous and all(
            a.dtype == np.int32 and a.flags.c_contiguous
            for a in (network.source, network.sink, *network.forward, *network.backward)):
        return _gpu().cut_capacity(s, network.source, network.sink, network.forward,
                                   network.backward)  # one launch, one read
    t = ~s

    def cut(capacities, chosen):
        return xp.where(chosen, capacities, 0).sum(dtype=xp.int64)

    total = cut(network.source, t) + cut(network.sink, s)
    for axis in range(s.ndim):  # forward arcs p -> p + e_axis, backward p + e_axis -> p
        head = tuple(slice(None, -1) if a == axis else slice(None) for a in range(s.ndim))
        tail = tuple(slice(1, None) if a == axis else slice(None) for a in range(s.ndim))
        total = (total + cut(network.forward[axis], s[head] & t[tail])
                 + cut(network.backward[axis], t[head] & s[tail]))
    return int(total)


@dataclass
class LabelProblem:
    """K labels (index 0 = background, 1.. = objects) with Potts smoothness: integer costs
    (L, H, W) and weights for :func:`alpha_expansion`."""

    costs: object          # int32 (L, H, W)
    weights: tuple         # (horizontal (H, W-1), vertical (H-1, W)) int32
    offset: float
    scale: float

    def energy(self, labels) -> float:
        from graphcut.labeling import labeling_energy
        return labeling_energy(self.costs, self.weights, labels) / self.scale + self.offset


def label_problem(costs, nlinks, pinned, *, scale, weights=None) -> LabelProblem:
    """``costs`` float (L, H, W) in nats; ``pinned`` int (H, W): -1 free, else the label
    index the pixel must take. A pinned pixel's other labels cost ``1 + the sum of its
    n-link capacities``, which no expansion move can afford to pay (each move would lower
    the energy by dropping it)."""
    xp = array_module(costs)
    right, down = nlinks
    shift = costs.min(axis=0)
    quantised = xp.empty(costs.shape, dtype=xp.int32)
    what = "colour costs (relative to each pixel's cheapest label)"
    work = np.empty(shift.shape) if xp is np else None
    for index in range(costs.shape[0]):  # label by label: no (L, H, W) float temporaries
        if work is None:
            quantised[index] = quantize(costs[index] - shift, scale=scale, what=what)
            continue
        # on the host quantize's arithmetic in one buffer: rint((costs - shift) * scale)
        np.subtract(costs[index], shift, out=work)
        work *= check_positive("scale", scale)
        np.rint(work, out=work)
        check_scaled(work, scale, what)
        quantised[index] = work
    h, w = shift.shape
    incident = xp.zeros((h, w), dtype=xp.int64)
    incident[:, :-1] += right
    incident[:, 1:] += right
    incident[:-1, :] += down
    incident[1:, :] += down
    pin = (incident + 1).astype(xp.int32)
    is_pinned = pinned >= 0
    if xp is np:  # the same values, reading and writing only the pinned pixels
        return _pinned_on_host(costs, quantised, shift, pin, pinned, is_pinned, weights,
                               (right, down), scale)
    for index in range(costs.shape[0]):  # elementwise: no boolean indexing (a read each)
        quantised[index] = xp.where(pinned == index, 0,
                                    xp.where(is_pinned, pin, quantised[index]))
    pinned_cost = xp.take_along_axis(costs, xp.maximum(pinned, 0)[None].astype(xp.int64),
                                     axis=0)[0]
    if weights is not None:
        pinned_cost = pinned_cost * weights
    offset = _sum(xp.where(is_pinned, pinned_cost, shift))
    return LabelProblem(quantised, (right, down), offset, float(scale))


def _pinned_on_host(costs, quantised, shift, pin, pinned, is_pinned, weights, nlinks, scale):
    """:func:`label_problem`'s pins and offset on the host: every label's pinned pixels cost
    ``pin``, their own label 0; the offset sums the same array as on the GPU (the pinned
    pixels' costs, the others' shifts) in the same order."""
    where = np.flatnonzero(is_pinned)
    index = pinned.reshape(-1)[where]
    pins = pin.reshape(-1)[where]
    for label in range(costs.shape[0]):
        layer = quantised[label].reshape(-1)
        layer[where] = pins
        layer[where[index == label]] = 0
    summed = shift.copy()
    cost = costs.reshape(costs.shape[0], -1)[index, where]
    summed.reshape(-1)[where] = cost if weights is None else cost * weights.reshape(-1)[where]
    return LabelProblem(quantised, nlinks, _sum(summed), float(scale))
