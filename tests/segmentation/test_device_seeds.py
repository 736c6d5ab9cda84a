"""The pipeline's seeds kept on the GPU between updates (graphcut/segmentation/_device_seeds.py)
and the app's path through them (gui/solve.py): only the edited rectangle is checked and
uploaded, and every answer equals a fresh CPU ``segment`` of the same seeds. Run on the NumPy
stand-in for CuPy (the shipped kernels compiled as host C++, min-cuts on the CPU; not strict:
the models' array code runs as NumPy) and, marked ``gpu``, on a real GPU."""

from __future__ import annotations

import numpy as np
import pytest

import graphcut
from graphcut.models import GMM
from graphcut.segmentation._device_seeds import DeviceSeeds
from test_energy_kernels import _stand_in, colour_disc

WARM = GMM(core=0.4, warm=True)


@pytest.fixture(params=["stand-in", pytest.param("cuda", marks=pytest.mark.gpu)])
def gpu(request, monkeypatch):
    """CuPy on a GPU, or the stand-in (device="cuda" routed to it) in non-strict mode."""
    if request.param == "cuda":
        import cupy
        yield cupy
        return
    import fake_cupy
    for module in _stand_in(request.getfixturevalue("kernel_library"), monkeypatch):
        fake_cupy.set_strict(False)
        monkeypatch.setattr(fake_cupy, "set_strict", lambda strict: None)  # stays off
        yield module


def _host(array):
    return np.asarray(array.get() if hasattr(array, "get") else array)


def test_take_uploads_only_the_region(gpu):
    rng = np.random.default_rng(1)
    seeds = rng.integers(0, 3, (9, 13)).astype(np.int32)  # any integer dtype
    kept = DeviceSeeds(seeds.shape)
    device = kept.take(seeds)
    np.testing.assert_array_equal(_host(device), seeds)
    assert device.dtype == np.uint8
    seeds[2:4, 5:9] = 1
    # a pixel outside the region given changes too: only the region is read
    before = int(_host(device)[8, 0])
    seeds[8, 0] = (before + 1) % 3
    kept.take(seeds, (slice(2, 4), slice(5, 9)))
    got = _host(kept.device)
    np.testing.assert_array_equal(got[2:4, 5:9], 1)
    assert got[8, 0] == before  # unannounced: not read
    got[8, 0] = seeds[8, 0]
    np.testing.assert_array_equal(got, seeds)
    kept.take(seeds)  # no region: the whole array again
    np.testing.assert_array_equal(_host(kept.device), seeds)


def test_take_checks_the_region_and_forgets_on_error(gpu):
    seeds = np.zeros((6, 7), np.uint8)
    kept = DeviceSeeds(seeds.shape)
    kept.take(seeds)
    seeds[1, 1] = 255
    with pytest.raises(ValueError, match="seeds in the edited region contain unknown label"):
        kept.take(seeds, (slice(1, 2), slice(1, 2)))
    assert kept.host is None and kept.device is None  # the next take uploads everything
    with pytest.raises(ValueError, match=r"seeds are 7x5 .* but the image is 7x6"):
        kept.take(np.zeros((5, 7), np.uint8), (slice(0, 1), slice(0, 1)))


@pytest.mark.parametrize("shape", [(9, 13), (3, 6, 7)])
def test_changed_region_is_the_smallest_box_of_the_changes(shape):
    """changed_region against a brute force over the changed pixels' coordinates."""
    from graphcut.segmentation._device_seeds import changed_region
    rng = np.random.default_rng(4)
    for trial in range(20):
        kept = rng.integers(0, 3, shape).astype(np.uint8)
        seeds = kept.copy()
        count = trial % 4  # 0: nothing changed
        for _ in range(count):
            where = tuple(int(rng.integers(0, n)) for n in shape)
            seeds[where] = (seeds[where] + 1) % 3
        region = changed_region(seeds, kept)
        changed = np.argwhere(seeds != kept)
        if changed.size == 0:
            assert all(s.stop - s.start == 0 for s in region)
            continue
        assert region == tuple(slice(int(lo), int(hi) + 1)
                               for lo, hi in zip(changed.min(axis=0), changed.max(axis=0)))


def test_whole_seeds_again_check_and_upload_what_changed(gpu):
    """Whole seeds given again (the library's update(seeds)): the kept copies equal them, a bad
    value is reported as the whole seeds' and the copies are forgotten."""
    seeds = np.zeros((6, 7), np.uint8)
    seeds[1, 1], seeds[4, 5] = 1, 2
    kept = DeviceSeeds(seeds.shape)
    kept.take(seeds)
    for step in range(3):
        seeds[step + 2, step] = 3 + step
        kept.take(seeds)
        np.testing.assert_array_equal(_host(kept.device), seeds)
        np.testing.assert_array_equal(kept.host, seeds)
    kept.take(seeds)  # nothing changed
    np.testing.assert_array_equal(_host(kept.device), seeds)
    seeds[5, 6] = 255
    with pytest.raises(ValueError, match="^seeds contain unknown label values 255"):
        kept.take(seeds)
    assert kept.host is None and kept.device is None


@pytest.mark.parametrize("model", [WARM, "gmm"])
def test_strokes_by_region_equal_fresh_cpu_segments(gpu, model):
    """Strokes given as regions (and a whole-array update), a box and a lam change on the GPU
    pipeline: every mask, on the device, equals a fresh CPU segment of the same seeds."""
    rng = np.random.default_rng(3)
    image, inside = colour_disc(rng, (40, 56))
    seeds = np.zeros(inside.shape, np.uint8)
    seeds[20, 28], seeds[1, 1] = 1, 2
    session = graphcut.Segmenter(image, model=model, device="cuda")
    box = None
    for step in range(7):
        y, x = rng.integers(0, 36), rng.integers(0, 50)
        region = np.s_[y:y + 3, x:x + 5]
        seeds[region] = 1 if inside[y, x] else 2
        if step == 4:
            session.set_lam(30.0)
        if step == 5:  # a box around the disc: object seeds stay inside it
            box = (2, 6, 38, 50)
            seeds[:, :6] = np.where(seeds[:, :6] == 1, 0, seeds[:, :6])
            seeds[:, 50:] = np.where(seeds[:, 50:] == 1, 0, seeds[:, 50:])
            seeds[:2] = np.where(seeds[:2] == 1, 0, seeds[:2])
            seeds[38:] = np.where(seeds[38:] == 1, 0, seeds[38:])
        whole = step in (0, 5)
        mask = session.update(seeds, region=None if whole else region, box=box,
                              device_mask=True)
        assert type(mask).__module__.split(".")[0] == "cupy"
        np.testing.assert_array_equal(_host(session.device_seeds), seeds)
        expected = graphcut.segment(image, seeds, box=box, lam=session.lam, model=model,
                                    device="cpu")
        np.testing.assert_array_equal(_host(mask), expected, err_msg=f"step {step}")


@pytest.mark.parametrize("model", ["auto", "gmm"])
def test_the_apps_strokes_equal_fresh_cpu_segments(gpu, model):
    """The app's solver (gui/solve.py): each stroke sent as the app sends it (the changed
    rectangle only), the mask equals a fresh CPU segment's. On a GPU with the app's clean-up
    (on the device, from the segmenter's device seeds); the stand-in has no flood kernels
    (tests/segmentation/test_cleanup_gpu.py runs those on their model): no clean-up there."""
    import dataclasses

    import fake_cupy

    from graphcut.gui.options import APP_DEFAULTS
    from graphcut.gui.sharing import SeedDelta, from_slices
    from graphcut.gui.solve import Job, Session, Solver

    rng = np.random.default_rng(5)
    image, inside = colour_disc(rng, (40, 56))
    seeds = np.zeros(inside.shape, np.uint8)
    seeds[20, 28], seeds[1, 1] = 1, 2
    options = dataclasses.replace(APP_DEFAULTS, model=model)
    if isinstance(gpu.zeros(1), fake_cupy.ndarray):
        options = dataclasses.replace(options, keep="all", fill_holes=0)
    solver = Solver()
    assert solver.open(Session(1, image, 20.0, "cuda")).error is None
    delta = SeedDelta(None, seeds.copy())
    mask = np.zeros(seeds.shape, bool)
    for number in range(1, 7):
        outcome = solver.run(Job(number, 1, 20.0, delta, options))
        assert outcome.error is None, outcome.details
        outcome.update.apply(mask)
        expected = graphcut.segment(image, seeds, **options.segment_kwargs(20.0), device="cpu")
        np.testing.assert_array_equal(mask, expected, err_msg=f"job {number}")
        y, x = rng.integers(0, 36), rng.integers(0, 50)
        region = np.s_[y:y + 3, x:x + 5]
        seeds[region] = 1 if inside[y, x] else 2
        delta = SeedDelta(from_slices(region), seeds[region].copy())
