"""The earlier mask's hold (``Learned(hold=...)``, graphcut/segmentation/_hold.py): a click far
from an object does not flip it (on a constructed image where, without the hold, the
retrained classifier does flip it); the new click still corrects its own region; the
incremental answer equals a fresh ``segment`` given the same seeds, options and previous
update (``previous=``; without it neither holds); the hold's costs follow their formula, and
the CPU and the GPU stand-in give the same numbers."""

import sys

import numpy as np
import pytest
from scipy import ndimage

import fake_cupy
from session_oracle import assert_session_updates_are_fresh_segments
import graphcut
from graphcut.models import Learned, model_from_settings
from graphcut.segmentation._hold import (check_previous, hold_costs, stroke_count,
                                         thickness)


def _look_alike():
    """Two nuclei A (bright, left) and B (dim, right) and, between them, a gap G that looks
    exactly like B (same brightness and size) but is background; uint8 image and the three
    regions."""
    rng = np.random.default_rng(0)
    shape = (80, 200)
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    image = 20 + 4 * rng.standard_normal(shape)

    def disk(row, col):
        return (yy - row) ** 2 + (xx - col) ** 2 < 9 ** 2 if col != 100 else \
            (yy - row) ** 2 + (xx - col) ** 2 < 7 ** 2
    a, b, g = disk(40, 20), disk(40, 180), disk(40, 100)
    image[a], image[b], image[g] = 200, 110, 110
    image = ndimage.gaussian_filter(image, 1)
    return np.clip(image, 0, 255).astype(np.uint8), a, b, g


def _first_seeds(shape):
    seeds = np.zeros(shape, np.uint8)
    seeds[38:43, 18:23] = 1          # A
    seeds[38:43, 178:183] = 1        # B
    seeds[5:10, 100:105] = 2         # background
    seeds[70:75, 50:55] = 2
    return seeds


def outline_band(mask):
    """The pixels with a pixel of the other side of ``mask`` in their 3 x 3 square (the band
    where the learned model's rim weights act: graphcut/models/_rim.py)."""
    square = np.ones((3, 3), bool)
    return ndimage.binary_dilation(mask, square) & \
        ~ndimage.binary_erosion(mask, square, border_value=1)


@pytest.mark.parametrize("hold", [0.0, 8.0])
def test_a_click_far_from_an_object_does_not_flip_it(hold):
    # prior=0: the classifier alone (its intensity prior damps this case on its own); the
    # ungated hold (from hold_after strokes) weighs as much more as the classifier near the
    # previous outline (graphcut/models/_rim.py), so the outline holds too
    image, a, b, g = _look_alike()
    seeds = _first_seeds(image.shape)
    session = graphcut.Segmenter(image, model=Learned(prior=0, hold=hold, hold_after=0),
                                 device="cpu")
    before = session.update(seeds)
    assert before[a].mean() > 0.9 and before[b].mean() > 0.5 and before[g].mean() > 0.5
    previous = (seeds.copy(), before)
    seeds[g] = 2                     # the gap marked background: it looks like B
    after = session.update(seeds, previous=previous)
    assert not after[g].any()        # the click corrects its own region exactly
    if hold == 0:                    # the scenario is real: A and B, 80 px away, flip
        lost = (before & ~after & (a | b)).sum() / (before & (a | b)).sum()
        assert lost > 0.3
    else:                            # with the hold they stand
        np.testing.assert_array_equal(after[a | b], before[a | b])


def _nuclei(seed=3, shape=(72, 90)):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    image = 30 + 10 * rng.standard_normal(shape)
    truth = np.zeros(shape, bool)
    for row, col, level in [(15, 15, 200), (20, 60, 120), (50, 30, 160), (55, 75, 90)]:
        blob = (yy - row) ** 2 + (xx - col) ** 2 < 7 ** 2
        truth |= blob
        image[blob] += level
    return np.clip(ndimage.gaussian_filter(image, 1), 0, 255).astype(np.uint8), truth


def _clicks(truth, count, seed):
    """Seeds after each of ``count`` clicks (disks of radius 3 labelled by the truth)."""
    rng = np.random.default_rng(seed)
    seeds = np.zeros(truth.shape, np.uint8)
    yy, xx = np.mgrid[:truth.shape[0], :truth.shape[1]]
    states = []
    inside, outside = np.argwhere(truth), np.argwhere(~truth)
    for k in range(count):
        pool = inside if k == 0 or (k > 1 and rng.random() < 0.5) else outside
        row, col = pool[rng.integers(len(pool))]
        disk = (yy - row) ** 2 + (xx - col) ** 2 <= 9
        label = 1 if truth[row, col] else 2
        seeds[disk & (truth == (label == 1))] = label
        if k >= 1:
            states.append(seeds.copy())
    return states


@pytest.mark.parametrize("after", [0, 5])
def test_incremental_equals_fresh_segment_given_the_previous_update(after):
    image, truth = _nuclei()
    assert_session_updates_are_fresh_segments(image, Learned(hold_after=after),
                                              _clicks(truth, 9, seed=after))


def test_without_previous_or_hold_the_old_invariant_holds():
    image, truth = _nuclei(seed=5)
    states = _clicks(truth, 9, seed=1)
    # no previous given: no hold, whatever the strokes (a Segmenter keeps no hidden state)
    session = graphcut.Segmenter(image, model=Learned(hold_after=0), device="cpu")
    plain = graphcut.Segmenter(image, model=Learned(hold=0, rim=1.0), device="cpu")
    previous = None
    for seeds in states:
        mask = session.update(seeds)
        np.testing.assert_array_equal(mask, graphcut.segment(image, seeds, model="learned",
                                                             device="cpu"))
        # hold 0 and no rim weights (graphcut/models/_rim.py): previous changes nothing
        np.testing.assert_array_equal(plain.update(seeds, previous=previous), mask)
        previous = (seeds, mask)


def test_the_same_seeds_again_give_the_same_mask():
    image, truth = _nuclei(seed=7)
    states = _clicks(truth, 6, seed=2)
    session = graphcut.Segmenter(image, model=Learned(hold_after=0), device="cpu")
    previous = None
    for seeds in states:
        mask = session.update(seeds, previous=previous)
        previous = (seeds, mask)
    np.testing.assert_array_equal(session.update(states[-1].copy(), previous=previous), mask)


def test_hold_costs_follow_the_formula():
    shape = (40, 120)
    mask = np.zeros(shape, bool)
    mask[10:30, 80:110] = True
    before = np.zeros(shape, np.uint8)
    before[20, 5] = 2
    seeds = before.copy()
    seeds[18:23, 40:45] = 1                      # the new stroke
    # the side a pixel was not on costs more: as one signed cost on the object's side
    signed, none = hold_costs((before, mask), seeds, hold=6.0, reach=10.0)
    assert none is None
    distance = ndimage.distance_transform_edt(seeds == before)
    r = max(10.0, 3 * thickness(mask))
    expected = 6.0 * -np.expm1(-distance ** 2 / (2 * r * r))
    np.testing.assert_allclose(signed, np.where(mask, -expected, expected))
    assert signed[20, 42] == 0
    # the same seeds again: the whole previous mask holds
    same = hold_costs((seeds, mask), seeds, hold=6.0, reach=10.0)
    np.testing.assert_allclose(same[0], np.where(mask, -6.0, 6.0))
    # fewer strokes than ``after``: no hold; 0 nats: none
    assert stroke_count(seeds) == 2
    assert hold_costs((before, mask), seeds, hold=6.0, reach=10.0, after=3) is None
    assert hold_costs((before, mask), seeds, hold=0.0, reach=10.0) is None


def test_reach_grows_with_the_objects_thickness():
    disk = np.hypot(*np.mgrid[-50:51, -50:51]) < 40
    # 2 area / edges counted along rows and columns (4 / pi times the true perimeter)
    assert abs(thickness(disk) - np.pi / 4 * 40) < 1.5
    before = np.zeros(disk.shape, np.uint8)
    seeds = before.copy()
    seeds[50, 0] = 2
    thick = -hold_costs((before, disk), seeds, hold=1.0, reach=5.0)[0]
    # the reach is 3 x 31 px, not 5: 50 px from the stroke the hold is still weak (0.13)
    assert thick[50, 50] < 0.2


def test_previous_is_checked():
    with pytest.raises(ValueError, match="previous mask must have the image's shape"):
        check_previous((np.zeros((4, 5), np.uint8), np.zeros((4, 4), bool)), (4, 5))
    with pytest.raises(ValueError, match=r"\(seeds, mask\)"):
        check_previous(np.zeros((4, 5)), (4, 5))
    image, truth = _nuclei()
    seeds = _clicks(truth, 3, seed=0)[-1]
    with pytest.raises(ValueError, match="previous seeds must have"):
        graphcut.segment(image, seeds, model="learned", device="cpu",
                         previous=(seeds[:10], truth))


def test_knobs_round_trip_and_are_checked():
    model = Learned(hold=2.5, hold_reach=12, hold_after=3)
    assert model.settings() == {"model": "learned", "hold": 2.5, "hold_reach": 12.0,
                                "hold_after": 3}
    assert model_from_settings(model.settings()) == model
    for knobs, word in [({"hold": -1}, "hold"), ({"hold_reach": 0}, "hold_reach"),
                        ({"hold_after": 1.5}, "hold_after"), ({"hold": np.inf}, "hold")]:
        with pytest.raises(ValueError, match=word):
            Learned(**knobs)


@pytest.fixture
def cupy(monkeypatch, kernel_library):
    """The NumPy stand-in for CuPy (tests/support/fake_cupy.py) as ``cupy``."""
    module = fake_cupy.fake_cupy_module(kernel_library)
    monkeypatch.setitem(sys.modules, "cupy", module)
    return module


@pytest.mark.parametrize("shape", [(60, 70), (700, 650)])   # the second: blocks of 3 pixels
def test_gpu_stand_in_gives_the_same_costs(cupy, shape):
    rng = np.random.default_rng(1)
    mask = ndimage.gaussian_filter(rng.random(shape), 4) > 0.5
    before = np.zeros(shape, np.uint8)
    before[5:9, 5:9] = 1
    before[-9:-5, -9:-5] = 2
    seeds = before.copy()
    seeds[shape[0] // 2:shape[0] // 2 + 4, 10:14] = 2
    cpu = hold_costs((before, mask), seeds, hold=8.0, reach=30.0, after=3)
    gpu = hold_costs((cupy.asarray(before), cupy.asarray(mask)), cupy.asarray(seeds),
                     hold=8.0, reach=30.0, after=3)
    assert type(gpu[0]).__module__.split(".")[0] == "cupy" and gpu[1] is None
    np.testing.assert_allclose(np.asarray(gpu[0]), cpu[0], rtol=1e-12, atol=1e-12)


@pytest.mark.gpu
def test_gpu_session_holds_like_the_cpu():
    """A Segmenter on the GPU with the hold (from the third stroke): its hold costs are the
    CPU's for the same previous update, and its masks equal a fresh GPU segment given the
    previous update, and the CPU's to a few pixels (float32 features round differently)."""
    cupy = pytest.importorskip("cupy")
    image, truth = _nuclei(seed=11, shape=(300, 340))
    model = Learned(hold_after=3)
    session = graphcut.Segmenter(image, model=model, device="cuda")
    previous = None
    for seeds in _clicks(truth, 8, seed=4):
        mask = session.update(seeds, previous=previous)
        fresh = graphcut.segment(image, seeds, model=model, device="cuda", previous=previous)
        np.testing.assert_array_equal(mask, fresh)
        cpu = graphcut.segment(image, seeds, model=model, device="cpu", previous=previous)
        assert (cpu != mask).sum() <= 0.002 * mask.size
        if previous is not None:
            on_gpu = hold_costs((cupy.asarray(previous[0]), cupy.asarray(previous[1])),
                                cupy.asarray(seeds), hold=8.0, reach=30.0, after=3)
            on_cpu = hold_costs(previous, seeds, hold=8.0, reach=30.0, after=3)
            if on_cpu is not None:
                np.testing.assert_allclose(cupy.asnumpy(on_gpu[0]), on_cpu[0], atol=1e-12)
        previous = (seeds, mask)
