"""The host path of the binary network (``binary_problem`` on NumPy float64 costs, the seeds'
pins at the seeded pixels only) against the formulas written out here: the whole-grid K_p
(1 + the sum of a pixel's n-link capacities), ``rint(scale * (cost - shift))`` and the offset
of the generic (CuPy-shaped) code."""

import numpy as np
import pytest

from graphcut.segmentation._capacities import pin_seeds, terminal_capacities
from graphcut.segmentation._problems import binary_problem


def _reference_pins(links, shape):
    """K_p over the whole grid, by summing shifted copies (links last axis first)."""
    total = np.ones(shape, np.int64)
    for axis, link in zip(reversed(range(len(shape))), links):
        lead = [slice(None)] * len(shape)
        lag = [slice(None)] * len(shape)
        lead[axis], lag[axis] = slice(0, -1), slice(1, None)
        total[tuple(lead)] += link
        total[tuple(lag)] += link
    return total


def _reference(cost_object, cost_background, links, seeds, scale, weights=None):
    """(source, sink, offset) as binary_problem defined them before the host path."""
    shift = np.minimum(np.minimum(cost_object, cost_background), 0.0)
    source = np.rint((cost_background - shift) * scale).astype(np.int32)
    sink = np.rint((cost_object - shift) * scale).astype(np.int32)
    pins = _reference_pins(links, seeds.shape).astype(np.int32)
    source = np.where(seeds == 1, pins, np.where(seeds == 2, 0, source))
    sink = np.where(seeds == 2, pins, np.where(seeds == 1, 0, sink))
    pinned_cost = np.where(seeds == 1, cost_object, np.where(seeds == 2, cost_background, 0.0))
    if weights is not None:
        pinned_cost = pinned_cost * weights
    offset = float(np.where(seeds == 0, shift, 0.0).sum()) + float(pinned_cost.sum())
    return source, sink, offset


def _scene(shape, rng, seed_share=0.05):
    costs = rng.normal(1.0, 2.0, (2, *shape))          # some negative: a shift < 0
    links = tuple(rng.integers(0, 3000, tuple(n - (a == axis) for a, n in enumerate(shape)),
                               dtype=np.int64).astype(np.int32)
                  for axis in reversed(range(len(shape))))
    seeds = np.where(rng.random(shape) < seed_share, rng.integers(1, 3, shape),
                     0).astype(np.uint8)
    seeds.flat[0], seeds.flat[-1] = 1, 2               # corners: pins with fewer links
    return costs[0], costs[1], links, seeds


@pytest.mark.parametrize("shape", [(37, 53), (1, 40), (40, 1), (6, 7, 9)])
@pytest.mark.parametrize("with_weights", [False, True])
def test_host_binary_problem_equals_the_formulas(shape, with_weights):
    rng = np.random.default_rng(len(shape) * 100 + shape[-1] + with_weights)
    cost_object, cost_background, links, seeds = _scene(shape, rng)
    weights = rng.uniform(1.0, 3.0, shape) if with_weights else None
    problem = binary_problem(cost_object, cost_background, links, seeds, scale=1000.0,
                             weights=weights)
    source, sink, offset = _reference(cost_object, cost_background, links, seeds, 1000.0,
                                      weights)
    assert problem.network.source.dtype == np.int32
    np.testing.assert_array_equal(problem.network.source, source)
    np.testing.assert_array_equal(problem.network.sink, sink)
    assert problem.offset == offset                    # the same arrays summed alike
    for mine, theirs in zip(problem.network.forward, links[::-1]):
        np.testing.assert_array_equal(mine, theirs)


def test_no_seeds_and_all_seeds():
    rng = np.random.default_rng(5)
    cost_object, cost_background, links, _ = _scene((12, 15), rng)
    for seeds in (np.zeros((12, 15), np.uint8), np.full((12, 15), 2, np.uint8)):
        problem = binary_problem(cost_object, cost_background, links, seeds, scale=10.0)
        source, sink, offset = _reference(cost_object, cost_background, links, seeds, 10.0)
        np.testing.assert_array_equal(problem.network.source, source)
        np.testing.assert_array_equal(problem.network.sink, sink)
        assert problem.offset == offset


def test_terminal_capacities_pins_at_the_seeds_only():
    rng = np.random.default_rng(9)
    cost_object, cost_background, links, seeds = _scene((8, 9, 10), rng, seed_share=0.2)
    cost_object, cost_background = np.abs(cost_object), np.abs(cost_background)
    source, sink = terminal_capacities(cost_object, cost_background, links, seeds, scale=50)
    expected = _reference(cost_object, cost_background, links, seeds, 50.0)
    np.testing.assert_array_equal(source, expected[0])
    np.testing.assert_array_equal(sink, expected[1])


def test_the_int32_check_still_covers_unseeded_pixels():
    """A pixel without a seed whose K_p would leave int32 is refused, as seed_pins does."""
    shape = (4, 5)
    right = np.zeros((4, 4), np.int32)
    down = np.zeros((3, 5), np.int32)
    right[2, 1] = right[2, 2] = 2 ** 30                # pixel (2, 2): K_p = 2^31 + 1
    seeds = np.zeros(shape, np.uint8)
    seeds[0, 0], seeds[3, 4] = 1, 2
    costs = np.ones(shape)
    with pytest.raises(ValueError, match="hard-constraint capacity"):
        binary_problem(costs, costs, (right, down), seeds, scale=1.0)
    right[2, 2] = 2 ** 29                              # the bound exceeds, no pixel does
    problem = binary_problem(costs, costs, (right, down), seeds, scale=1.0)
    np.testing.assert_array_equal(problem.network.source,
                                  _reference(costs, costs, (right, down), seeds, 1.0)[0])


def test_pin_seeds_refuses_views_it_cannot_write():
    source = np.zeros((6, 8), np.int32)[:, ::2]
    links = (np.zeros((6, 3), np.int32), np.zeros((5, 4), np.int32))
    with pytest.raises(ValueError, match="C-contiguous"):
        pin_seeds(source, np.zeros((6, 4), np.int32), links, np.ones((6, 4), np.uint8))


@pytest.mark.parametrize("where, value, message", [
    ("object", np.nan, r"background costs \(source capacities\) must be finite"),  # shift
    ("background", np.inf, r"background costs \(source capacities\) must be finite"),
    ("background", 3e6, r"background costs \(source capacities\) reach 3000000000 "),
    ("object", 3e6, r"object costs \(sink capacities\) reach"),
])
def test_out_of_range_costs_name_their_capacities(where, value, message):
    """A cost the capacities cannot hold, in any chunk: the generic path's message."""
    rng = np.random.default_rng(11)
    cost_object, cost_background, links, seeds = _scene((300, 250), rng)
    cost_object, cost_background = np.abs(cost_object), np.abs(cost_background)
    (cost_object if where == "object" else cost_background)[290, 7] = value
    with pytest.raises(ValueError, match=message):
        binary_problem(cost_object, cost_background, links, seeds, scale=1000.0)
    generic = (cost_object.astype(np.float32), cost_background.astype(np.float32))
    with pytest.raises(ValueError, match=message):         # the generic path says the same
        binary_problem(*generic, links, seeds, scale=1000.0)


def test_several_chunks_equal_the_formulas(monkeypatch):
    from graphcut.segmentation import _problems
    monkeypatch.setattr(_problems, "CHUNK_PIXELS", 1000)   # 75 chunks, the last one short
    rng = np.random.default_rng(13)
    cost_object, cost_background, links, seeds = _scene((300, 249), rng)
    problem = binary_problem(cost_object, cost_background, links, seeds, scale=1000.0)
    source, sink, offset = _reference(cost_object, cost_background, links, seeds, 1000.0)
    np.testing.assert_array_equal(problem.network.source, source)
    np.testing.assert_array_equal(problem.network.sink, sink)
    assert problem.offset == offset
