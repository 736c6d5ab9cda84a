"""The automatic smoothness weight (graphcut.segmentation._smoothness): the histogram model's
collapse guard from a box, checked against independent cuts at the two fixed weights."""

import numpy as np
import pytest

import graphcut
from graphcut.models import GMM, Histogram, Learned
from graphcut.segmentation import Segmenter
from graphcut.segmentation._smoothness import GUARD_SHARE, guarded_lams, keep_heavier

LIGHT, HEAVY = guarded_lams(Histogram(), None)


def disk_image(seed, radius, contrast, noise, size=48):
    """A noisy grey image with a brighter disk at its centre, and a box 3 pixels around it."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:size, :size]
    centre = size // 2
    disk = (yy - centre) ** 2 + (xx - centre) ** 2 <= radius * radius
    image = np.clip(0.3 + contrast * disk + rng.normal(0, noise, (size, size)), 0, 1)
    box = (centre - radius - 3, centre - radius - 3, centre + radius + 4, centre + radius + 4)
    return image, box


# (seed, radius, contrast, noise): the heavier weight collapses the object in the first two,
# keeps (a slightly different) one in the last two
CASES = [(0, 5, 0.3, 0.12), (1, 10, 0.4, 0.2), (0, 10, 0.5, 0.25), (1, 12, 0.35, 0.15)]


def test_guard_applies_only_to_the_plain_histogram_without_a_given_lam():
    assert (LIGHT, HEAVY) == (10.0, 20.0)
    assert guarded_lams(Histogram(), 10.0) is None      # the user's lam wins
    assert guarded_lams(Histogram(), 0) is None
    assert guarded_lams(GMM(), None) is None
    assert guarded_lams(Learned(), None) is None
    own = Histogram()
    own.lam = 12.0                                       # a model object with its own lam
    assert guarded_lams(own, None) is None


def test_keep_heavier_compares_object_pixels():
    light = np.zeros((10, 10), np.uint8)
    light[:5] = 1                                        # 50 object pixels
    heavy = np.zeros_like(light)
    heavy[:4] = 3                                        # 40: exactly 0.8 of them, any label
    assert keep_heavier(light, heavy, share=0.8)
    heavy[3, 0] = 0                                      # 39
    assert not keep_heavier(light, heavy, share=0.8)
    assert keep_heavier(np.zeros_like(light), np.zeros_like(light))


@pytest.mark.parametrize("case", CASES)
def test_automatic_lam_from_a_box_is_the_guarded_choice(case):
    image, box = disk_image(*case)
    light = graphcut.segment(image, None, box=box, model="histogram", lam=LIGHT, device="cpu")
    heavy = graphcut.segment(image, None, box=box, model="histogram", lam=HEAVY, device="cpu")
    expected = heavy if heavy.sum() >= GUARD_SHARE * light.sum() else light
    chosen = HEAVY if expected is heavy else LIGHT
    auto, result = graphcut.segment(image, None, box=box, model="histogram", device="cpu",
                                    return_result=True)
    np.testing.assert_array_equal(auto, expected)
    assert result.stats["lam"] == chosen


def test_cases_take_both_branches_with_different_masks():
    """Guards the test above against being vacuous: each branch is taken at least once
    where the two weights' masks differ."""
    taken = set()
    for case in CASES:
        image, box = disk_image(*case)
        light = graphcut.segment(image, None, box=box, model="histogram", lam=LIGHT, device="cpu")
        heavy = graphcut.segment(image, None, box=box, model="histogram", lam=HEAVY, device="cpu")
        if (light != heavy).any():
            taken.add(bool(heavy.sum() >= GUARD_SHARE * light.sum()))
    assert taken == {True, False}


def test_given_lam_wins_over_the_guard():
    image, box = disk_image(*CASES[0])
    heavy = graphcut.segment(image, None, box=box, model="histogram", lam=HEAVY, device="cpu")
    guarded = graphcut.segment(image, None, box=box, model="histogram", device="cpu")
    assert heavy.sum() < GUARD_SHARE * guarded.sum()
    session = Segmenter(image, model="histogram", device="cpu")
    session.set_lam(HEAVY)                               # set_lam turns the guard off
    np.testing.assert_array_equal(session.update(None, box=box), heavy)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("case", CASES[:2])
def test_segmenter_equals_fresh_segment_with_the_automatic_lam(case, device):
    image, box = disk_image(*case)
    session = Segmenter(image, model="histogram", device=device)
    np.testing.assert_array_equal(session.update(None, box=box),
                                  graphcut.segment(image, None, box=box, model="histogram",
                                                   device=device))
    assert session.lam == LIGHT                          # the session's lam is restored
    seeds = np.zeros(image.shape, np.uint8)
    seeds[24, 22:27] = 1
    seeds[2, 2:40] = 2
    np.testing.assert_array_equal(session.update(seeds),
                                  graphcut.segment(image, seeds, model="histogram", device=device))
    np.testing.assert_array_equal(session.update(seeds, box=box),
                                  graphcut.segment(image, seeds, box=box, model="histogram",
                                                   device=device))


def test_keep_heavier_on_the_cupy_stand_in():
    """The guard's comparison takes device arrays (CuPy on the GPU) without a host copy."""
    import fake_cupy

    cupy = fake_cupy.fake_cupy_module(None)
    light = np.zeros((8, 8), bool)
    light[:5] = True                                     # 40 pixels
    heavy = light.copy()
    heavy[:2] = False                                    # 24: 0.6 of them
    on_device = cupy.asarray(light), cupy.asarray(heavy)
    assert type(on_device[0]).__module__.split(".")[0] == "cupy"
    assert keep_heavier(*on_device, share=0.6) and not keep_heavier(*on_device, share=0.61)
    assert keep_heavier(*on_device, share=0.6) == keep_heavier(light, heavy, share=0.6)


def test_the_guards_two_lams_keep_their_cpu_solvers_and_flows():
    """With a box, every update cuts at both automatic lams; on the CPU each lam's solver is
    kept with its flow (GridCuts.set_nlinks with a key), so later strokes re-solve
    incrementally, and every mask still equals a fresh segment()."""
    image, box = disk_image(*CASES[2])
    session = Segmenter(image, model="histogram", device="cpu")
    seeds = np.zeros(image.shape, np.uint8)
    solvers = []
    for step in range(4):
        seeds[24 + step, 22:27] = 1
        seeds[2 + step, 2:40] = 2
        np.testing.assert_array_equal(session.update(seeds.copy(), box=box),
                                      graphcut.segment(image, seeds, box=box, model="histogram",
                                                       device="cpu"))
        cuts = session._solver
        solvers.append({id(cuts._solver), *map(id, cuts._kept.values())})
        assert len(cuts._kept) == 1 and session.lam == LIGHT
    assert solvers[1] == solvers[2] == solvers[3]  # the same two solvers from then on
    session.set_lam(7.0)  # a lam of the user's: the kept solver is closed
    assert session._solver._kept == {}


def test_grid_cuts_alternating_keyed_nlinks_equal_fresh_cuts():
    from graphcut.segmentation import GridCuts
    from graphcut.solver import GridNetwork, min_cut
    rng = np.random.default_rng(3)
    shape = (12, 15)
    sets = {key: tuple(rng.integers(0, 30, s).astype(np.int32)
                       for s in ((12, 14), (11, 15))) for key in ("a", "b", "c")}
    cuts = GridCuts(shape, sets["a"], "cpu")
    for key in ("a", "b", "a", "b", "c", "a", "b", "a"):
        cuts.set_nlinks(sets[key], key=key)
        source = rng.integers(0, 60, shape).astype(np.int32)
        sink = rng.integers(0, 60, shape).astype(np.int32)
        got = cuts.solve(source, sink)
        right, down = sets[key]
        expected = min_cut(GridNetwork(source, sink, right=right, down=down), device="cpu")
        assert got.flow == expected.flow
        np.testing.assert_array_equal(got.source_side, expected.source_side)
        assert len(cuts._kept) <= 1
    cuts.close()
    assert cuts._kept == {} and cuts._solver is None


def test_grid_cuts_give_up_the_kept_graph_when_memory_runs_short(monkeypatch):
    from graphcut.segmentation import GridCuts, _solving
    from graphcut.solver import GridNetwork, HostMemoryError, min_cut
    right, down = np.full((4, 4), 3, np.int32), np.full((3, 5), 3, np.int32)
    cuts = GridCuts((4, 5), (right, down), "cpu")
    cuts.set_nlinks((right, down), key="a")
    cuts.solve(np.full((4, 5), 2, np.int32), np.zeros((4, 5), np.int32))
    opened = _solving.open_grid_solver
    refusals = []

    def short_of_memory(network, device):
        if not refusals:  # the second graph does not fit while the first is kept
            refusals.append(device)
            raise HostMemoryError("no room for a second graph", 2, 1)
        return opened(network, device=device)

    monkeypatch.setattr(_solving, "open_grid_solver", short_of_memory)
    cuts.set_nlinks((right * 2, down * 2), key="b")
    source, sink = np.zeros((4, 5), np.int32), np.zeros((4, 5), np.int32)
    source[:, 0], sink[:, -1] = 50, 50
    result = cuts.solve(source, sink)
    expected = min_cut(GridNetwork(source, sink, right=right * 2, down=down * 2), device="cpu")
    assert refusals == ["cpu"] and cuts._kept == {} and result.flow == expected.flow > 0
