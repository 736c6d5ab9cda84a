"""The GPU path of the segmentation energy, the Segmenter and the app's mask updates, run on the
CPU: the shipped kernels (solver/cuda/energy_kernels.cu, mask_kernels.cu, grid_state.cu)
compiled as host C++ and a NumPy stand-in for CuPy (tests/fake_cupy.py) in strict mode, where
any CuPy ufunc, reduction, astype, gather or slice assignment raises. So these tests show both
that the GPU path computes what the NumPy path computes (exactly, except where a weight passes
through exp, whose last bit may differ between math libraries) and that it runs nothing that
CuPy would compile at run time (the first-run cost of issue 17). On a machine with a GPU the
same tests run a second time on the device (the ``cuda`` parameter, marked ``gpu``), with the
real solver, against the same NumPy answers; test_startup.py checks there that nothing is
compiled at run time.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import fake_cupy
import graphcut
from graphcut import models
from graphcut import segmentation as energy
from graphcut.segmentation._boundary import _squared_differences
from graphcut.solver import CutResult
from graphcut.solver.dynamic import (fresh_terminals, reparameterize_nlinks,
                                     reparameterize_terminals, restart_nlinks)
from preflow_model import random_links, random_state

@pytest.fixture(params=["stand-in", pytest.param("cuda", marks=pytest.mark.gpu)])
def gpu(request, monkeypatch):
    """The array module of the GPU path: the strict stand-in (device="cuda" routed to it,
    min-cuts solved on the CPU), or CuPy on a real GPU."""
    if request.param == "cuda":
        import cupy
        yield cupy
        return
    yield from _stand_in(request.getfixturevalue("kernel_library"), monkeypatch)


def _stand_in(kernel_library, monkeypatch):
    module = fake_cupy.fake_cupy_module(kernel_library)
    monkeypatch.setenv("GRAPHCUT_CUDA_KERNELS", "nvrtc")
    saved = {name: sys.modules.pop(name) for name in ("cupy", *fake_cupy.LOADERS)
             if name in sys.modules}
    sys.modules["cupy"] = module
    import graphcut.segmentation._segment as segmentation
    import graphcut.segmentation._segmenter as session
    import graphcut.segmentation._solving as solving
    from graphcut.solver import open_grid_solver as real_open_grid_solver

    class SolverOnTheCPU:
        """The CPU incremental solver behind the GPU one's interface (device arrays in, a
        device mask out)."""

        device_name = "stand-in"

        def __init__(self, network):
            fake_cupy.set_strict(False)
            try:
                host = network.to_numpy()
            finally:
                fake_cupy.set_strict(True)
            self.solver = real_open_grid_solver(host, device="cpu")

        def set_terminals(self, source, sink, *, region=None):
            self.solver.set_terminals(source.get(), sink.get(), region=region)

        def set_nlinks(self, forward, backward=None):
            self.solver.set_nlinks([np.asarray(getattr(link, "get", lambda: link)())
                                    for link in forward])

        def solve(self, *, cancel=None):
            cut = self.solver.solve(cancel=cancel)
            mask = np.ascontiguousarray(cut.source_side).view(fake_cupy.ndarray)
            return CutResult(cut.flow, mask, "cuda", cut.stats)

        def close(self):
            self.solver.close()

    def open_grid_solver(network, *, device="auto"):
        if device == "cuda":
            return SolverOnTheCPU(network)
        return real_open_grid_solver(network, device=device)

    monkeypatch.setattr(segmentation, "resolve_device", lambda device: device)
    monkeypatch.setattr(segmentation, "array_segmentation_backend", lambda *a, **k: "cuda")
    monkeypatch.setattr(session, "resolve_device", lambda device: device)
    monkeypatch.setattr(solving, "open_grid_solver", open_grid_solver)
    monkeypatch.setattr(session.Segmenter, "device_name", "stand-in")
    fake_cupy.set_strict(True)
    try:
        yield module
    finally:
        fake_cupy.set_strict(False)
        for name in ("cupy", *fake_cupy.LOADERS):
            sys.modules.pop(name, None)
        sys.modules.update(saved)
        fake_cupy.rebind_parents(fake_cupy.LOADERS)


def on_host(array):
    if not isinstance(array, fake_cupy.ndarray):
        return array.get()
    fake_cupy.set_strict(False)
    try:
        return array.get()
    finally:
        fake_cupy.set_strict(True)


def colour_disc(rng, shape=(37, 53), dtype=np.uint8):
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    inside = (yy - shape[0] / 2) ** 2 + (xx - shape[1] / 2) ** 2 < (min(shape) / 3) ** 2
    image = np.where(inside[..., None], [200, 60, 40], [30, 90, 160]).astype(float)
    image += rng.normal(0, 25, image.shape)
    top = np.iinfo(dtype).max if np.dtype(dtype).kind in "iu" else 1.0
    image = np.clip(image / 255 * top, 0, top)
    return image.astype(dtype), inside


def disc_seeds(inside):
    seeds = np.zeros(inside.shape, np.uint8)
    h, w = inside.shape
    seeds[h // 2 - 2:h // 2 + 2, w // 2 - 3:w // 2 + 3] = 1
    seeds[:2, :] = 2
    seeds[:, -2:] = 2
    return seeds


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.float32, np.float64,
                                   np.float16, bool])
@pytest.mark.parametrize("layout", ["hwc", "chw", "grey", "grey-alpha", "rgba", "flipped"])
def test_image_as_float_is_exact(gpu, dtype, layout):
    rng = np.random.default_rng(1)
    if dtype is bool:
        image = rng.random((9, 11, 3)) < 0.5
    elif np.dtype(dtype).kind == "f":
        image = (rng.random((9, 11, 3)) * 3 - 1).astype(dtype)
    else:
        info = np.iinfo(dtype)
        image = rng.integers(info.min, info.max, (9, 11, 3), endpoint=True).astype(dtype)
    axis = -1
    if layout == "chw":
        image, axis = np.moveaxis(image, -1, 0).copy(), 0
    elif layout == "grey":
        image = image[..., 0].copy()
    elif layout == "grey-alpha":
        image = image[..., :2].copy()
    elif layout == "rgba":
        image = np.concatenate([image, image[..., :1]], axis=-1)
    elif layout == "flipped":
        image = image[::-1, ::2]
    expected = energy.image_as_float(image, channel_axis=axis)
    got = energy.image_as_float(gpu.asarray(image), channel_axis=axis)
    assert isinstance(got, gpu.ndarray) and got.flags.c_contiguous
    np.testing.assert_array_equal(on_host(got), expected)


def test_non_finite_float_images_are_refused(gpu):
    image = np.zeros((4, 5, 3), np.float32)
    image[2, 3, 1] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        energy.image_as_float(gpu.asarray(image))


@pytest.mark.parametrize("shape", [(1, 1, 3), (1, 7, 3), (6, 1, 1), (23, 31, 3), (5, 6, 7, 1)])
def test_differences_sigma_and_weights(gpu, shape):
    rng = np.random.default_rng(len(shape))
    values = rng.random(shape)
    differences, sums = gpu_kernels().squared_differences(gpu.asarray(values))
    expected = _squared_differences(values)
    for got, want, total in zip(differences, expected, sums, strict=True):
        np.testing.assert_array_equal(on_host(got), want)  # same order of additions
        assert np.isclose(total, float(want.sum()), rtol=1e-12)
    spacing = (2.0, 1.0, 0.5)[-(len(shape) - 1):]
    for sigma in (None, 0.3):
        got = energy.weights_of_values(gpu.asarray(values), sigma, spacing)
        expected = energy.weights_of_values(values, sigma, spacing)
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_allclose(on_host(a), b, rtol=1e-14, atol=0)
    assert np.isclose(energy.estimate_sigma(gpu.asarray(values)), energy.estimate_sigma(values),
                      rtol=1e-12)


def gpu_kernels():
    from graphcut.segmentation import energy_kernels
    return energy_kernels


def test_quantize_and_its_errors(gpu):
    values = np.array([0.0, 0.4, 0.5, 1.5, 2.5, 1e-7, 3.25], np.float64)
    for lam in (1.0, 10.0, 0.3):
        got = energy.quantize_weights(gpu.asarray(values), lam, scale=1000.0)
        np.testing.assert_array_equal(on_host(got), energy.quantize(lam * values, scale=1000.0))
    with pytest.raises(ValueError, match=r"n-links reach 3250000000 .*int32"):
        energy.quantize_weights(gpu.asarray(values), 1e6, scale=1000.0, what="n-links")
    with pytest.raises(ValueError, match="finite and >= 0"):
        energy.quantize_weights(gpu.asarray(-values), 1.0, scale=1000.0)
    with pytest.raises(ValueError, match="finite and >= 0"):
        energy.quantize(gpu.asarray(np.array([1.0, np.nan])), scale=10.0)


@pytest.mark.parametrize("shape", [(1, 1), (1, 5), (4, 1), (7, 9), (3, 4, 5)])
def test_seed_pins(gpu, shape):
    rng = np.random.default_rng(sum(shape))
    links = [rng.integers(0, 1000, shape[:a] + (shape[a] - 1,) + shape[a + 1:]).astype(np.int32)
             for a in reversed(range(len(shape)))]
    got = energy.seed_pins([gpu.asarray(link) for link in links])
    np.testing.assert_array_equal(on_host(got), energy.seed_pins(links))
    big = [np.full(link.shape, 2**30, np.int32) for link in links]
    if shape == (7, 9):
        with pytest.raises(ValueError, match="hard-constraint capacity .* int32"):
            energy.seed_pins([gpu.asarray(link) for link in big])


@pytest.mark.parametrize("dtype", [np.uint8, np.int64, np.int32, np.uint16])
def test_seed_checks(gpu, dtype):
    seeds = np.zeros((6, 7), dtype)
    graphcut.check_seeds(gpu.asarray(seeds), require_both=False)
    with pytest.raises(ValueError, match="no foreground seed"):
        graphcut.check_seeds(gpu.asarray(seeds))
    seeds[1, 1] = 1
    with pytest.raises(ValueError, match="no background seed"):
        graphcut.check_seeds(gpu.asarray(seeds))
    seeds[2, 2] = 2
    assert graphcut.check_seeds(gpu.asarray(seeds)) is not None
    seeds[3, 3] = 7
    with pytest.raises(ValueError, match="unknown label values 7"):
        graphcut.check_seeds(gpu.asarray(seeds)[:, ::-1])
    labels, counts = gpu_kernels().seed_labels(gpu.asarray(seeds)[::2, 1:])
    expected = seeds[::2, 1:]
    assert counts == (int((expected == 1).sum()), int((expected == 2).sum()),
                      int((expected > 2).sum()))
    np.testing.assert_array_equal(on_host(labels), np.where(expected <= 2, expected, 0))


@pytest.mark.parametrize("dtype", [np.uint8, np.int64])
def test_seed_checks_of_several_objects_and_their_labels(gpu, dtype):
    """check_seeds(multi=True) and object_labels on device seeds say what they say on the
    host: one kernel pass when every label is 0..2, the host copy only for further labels."""
    from graphcut.io import checked_objects, object_labels
    seeds = np.zeros((6, 7), dtype)
    seeds[1, 1], seeds[2, 2] = 1, 2
    for case in ("one object", "further objects", "only further objects"):
        if case == "further objects":
            seeds[3, 3], seeds[4, 4] = 5, 3
        if case == "only further objects":
            seeds[1, 1] = 0
        device = gpu.asarray(seeds)
        assert graphcut.check_seeds(device, multi=True) is device
        assert object_labels(device) == object_labels(seeds)
        checked, objects = checked_objects(device, seeds.shape)  # both at once
        assert checked is device and objects == object_labels(seeds)
        assert checked_objects(seeds, seeds.shape)[1] == objects
    assert object_labels(gpu.asarray(np.zeros((2, 3), dtype))) == []
    assert checked_objects(gpu.asarray(np.zeros((2, 3), dtype)), require_both=False)[1] == []
    no_background = np.where(seeds == 2, 0, seeds).astype(dtype)
    for check in (lambda a: graphcut.check_seeds(a, multi=True), checked_objects):
        with pytest.raises(ValueError, match="no background seed"):
            check(gpu.asarray(no_background))
    with pytest.raises(ValueError, match="no foreground seed"):
        checked_objects(gpu.asarray(np.where(seeds == 2, 2, 0).astype(dtype)))
    with pytest.raises(ValueError, match="seeds must be the same size"):
        checked_objects(gpu.asarray(seeds), (6, 8))
    seeds[5, 5] = 255
    for check in (lambda a: graphcut.check_seeds(a, multi=True), checked_objects):
        with pytest.raises(ValueError, match="unknown label values 255"):
            check(gpu.asarray(seeds))


def test_label_histogram_counts_every_value_as_numpy(gpu):
    """The per-value counts of uint8 labels (several objects' seeds) equal NumPy's bincount
    (value 0 not counted); other dtypes and strided views are not counted (None)."""
    from graphcut.segmentation import energy_kernels
    rng = np.random.default_rng(5)
    labels = np.where(rng.random((37, 53)) < 0.2, rng.integers(1, 256, (37, 53)), 0)
    labels = labels.astype(np.uint8)
    labels[0, :3] = (255, 254, 2)
    expected = np.bincount(labels.ravel(), minlength=256)
    expected[0] = 0
    counts = energy_kernels.label_histogram(gpu.asarray(labels))
    assert counts.dtype == np.uint64 and counts.shape == (256,)
    assert np.array_equal(counts, expected)
    assert not energy_kernels.label_histogram(gpu.asarray(np.zeros((0, 4), np.uint8))).any()
    assert energy_kernels.label_histogram(gpu.asarray(labels.astype(np.int32))) is None
    assert energy_kernels.label_histogram(gpu.asarray(labels)[:, ::2]) is None


@pytest.mark.parametrize("bins", [None, 2, 7])
@pytest.mark.parametrize("grey", [False, True])
def test_cells_histograms_and_costs(gpu, bins, grey):
    rng = np.random.default_rng(3)
    image, inside = colour_disc(rng)
    image = image[..., 1] if grey else image
    seeds = disc_seeds(inside)
    values = energy.image_as_float(image)
    channels = values.shape[-1]
    nbins = models.check_bins(bins, channels)
    index = models.bin_indices(gpu.asarray(values), nbins)
    np.testing.assert_array_equal(on_host(index), models.bin_indices(values, nbins))
    got = energy.regional_costs(gpu.asarray(image), gpu.asarray(seeds), bins=bins)
    expected = energy.regional_costs(image, seeds, bins=bins)
    for a, b in zip(got, expected, strict=True):  # tables on the host: exactly NumPy's
        np.testing.assert_array_equal(on_host(a), b)


@pytest.mark.parametrize("sigma", [None, 0.1])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_network_equals_the_cpu_one(gpu, sigma, dtype):
    rng = np.random.default_rng(4)
    image, inside = colour_disc(rng, dtype=dtype)
    seeds = disc_seeds(inside)
    host = energy.build_network(image, seeds, sigma=sigma, lam=7.0)
    device = energy.build_network(gpu.asarray(image), gpu.asarray(seeds), sigma=sigma, lam=7.0)
    assert device.on_gpu
    for name in ("source", "sink", "right", "down", "left", "up"):
        a, b = on_host(getattr(device, name)).astype(np.int64), getattr(host, name)
        assert np.abs(a - b).max() <= 1, name     # exp's last bit
        assert (a != b).mean() < 0.01, name


def test_segment_equals_the_cpu_segment(gpu):
    rng = np.random.default_rng(5)
    image, inside = colour_disc(rng, (48, 64))
    seeds = disc_seeds(inside)
    mask, result = graphcut.segment(image, seeds, model="histogram", device="cuda",
                                    return_result=True)
    expected, cpu = graphcut.segment(image, seeds, model="histogram", device="cpu",
                                     return_result=True)
    assert result.backend == "cuda"
    np.testing.assert_array_equal(mask, expected)
    assert result.flow == cpu.flow
    assert (mask == inside).mean() > 0.95


def test_segmenter_edits_equal_fresh_cpu_segments(gpu):
    """Strokes (regions), a lam change and whole-array updates on the GPU path of the
    Segmenter (its solver replaced by the CPU one): every mask equals a fresh CPU segment."""
    rng = np.random.default_rng(6)
    image, inside = colour_disc(rng, (40, 56))
    seeds = disc_seeds(inside)
    session = graphcut.Segmenter(image, model="histogram", device="cuda")
    assert session.backend == "cuda"
    session.prepare()
    for step in range(8):
        y, x = rng.integers(0, 36), rng.integers(0, 50)
        region = np.s_[y:y + 4, x:x + 6]
        seeds[region] = 1 if inside[y, x] else 2
        if step == 4:
            session.set_lam(3.0)
        got = session.update(seeds, region=None if step % 3 == 0 else region)
        np.testing.assert_array_equal(got, graphcut.segment(image, seeds, lam=session.lam,
                                                            model="histogram", device="cpu"), err_msg=str(step))


def test_mask_updates_on_the_device(gpu):
    from graphcut.gui.sharing import MaskUpdate, mask_fraction
    rng = np.random.default_rng(7)
    for shape in ((1, 1), (3, 1), (37, 53), (64, 8)):
        old = rng.random(shape) < 0.5
        new = old.copy()
        assert MaskUpdate.between(gpu.asarray(old), gpu.asarray(new)).region is None
        for _ in range(3):
            y, x = rng.integers(0, shape[0]), rng.integers(0, shape[1])
            new[y:y + 3, x:x + 5] ^= True
            got = MaskUpdate.between(gpu.asarray(old), gpu.asarray(new))
            expected = MaskUpdate.between(old, new)
            assert got == expected
            whole = MaskUpdate.between(None, gpu.asarray(new))
            assert whole == MaskUpdate.between(None, new)
            mask = old.copy()
            got.apply(mask)
            np.testing.assert_array_equal(mask, new)
            assert mask_fraction(gpu.asarray(new)) == mask_fraction(new)
            old = new.copy()


def test_terminal_kernels_equal_the_dynamic_functions(gpu):
    """grid_state.cu's fold_terminals and reparameterize_terminals (the GPU Segmenter's
    set_terminals / change_terminals) against graphcut.solver.dynamic's functions."""
    from graphcut.solver.cuda._loader import kernel
    rng = np.random.default_rng(8)
    n = 3000
    source, sink = rng.integers(0, 1000, (2, n)).astype(np.int32)
    excess = rng.integers(0, 500, n).astype(np.int64)
    source_capacity = rng.integers(0, 1000, n).astype(np.int64)
    sink_capacity = rng.integers(0, 1000, n).astype(np.int64)
    to_sink = np.minimum(rng.integers(0, 1000, n), sink_capacity).astype(np.int32)
    expected = reparameterize_terminals(excess, to_sink.astype(np.int64), source_capacity,
                                        sink_capacity, source, sink)
    state = [gpu.asarray(a) for a in (excess, to_sink, source_capacity, sink_capacity)]
    totals = gpu.zeros(3, dtype=np.uint64)
    kernel("grid_state.cu", "reparameterize_terminals")(
        (1,), (256,), (np.int64(n), gpu.asarray(source), gpu.asarray(sink), *state, totals))
    np.testing.assert_array_equal(on_host(state[0]), expected.excess)
    np.testing.assert_array_equal(on_host(state[1]), expected.to_sink)
    np.testing.assert_array_equal(on_host(state[2]), expected.source_capacity)
    np.testing.assert_array_equal(on_host(state[3]), expected.sink_capacity)
    deltas, sinks, overflows = (int(v) for v in on_host(totals))
    assert expected.reparameterization > 0
    assert (deltas, sinks, overflows) == (expected.reparameterization,
                                          int(expected.sink_capacity.sum()), 0)
    fresh = fresh_terminals(source, sink)
    outputs = [gpu.zeros(n, dtype=np.int64), gpu.zeros(n, dtype=np.int32),
               gpu.zeros(n, dtype=np.int64), gpu.zeros(n, dtype=np.int64)]
    total = gpu.zeros(1, dtype=np.uint64)
    kernel("grid_state.cu", "fold_terminals")(
        (1,), (256,), (np.int64(n), gpu.asarray(source), gpu.asarray(sink), *outputs, total))
    for got, want in zip(outputs, (fresh.excess, fresh.to_sink, fresh.source_capacity,
                                   fresh.sink_capacity)):
        np.testing.assert_array_equal(on_host(got), want)
    assert int(on_host(total)[0]) == int(sink.astype(np.int64).sum())


def _change_nlinks_kernel(gpu, shape, state, old, new, restart):
    """grid_state.cu's change_nlinks(_3d) on a copy of ``state`` (host arrays); returns the
    state after it (host arrays) and the kernel's (deltas, overflows)."""
    from graphcut.solver.cuda._loader import kernel
    ndim = len(shape)

    def by_direction(links):
        return [gpu.asarray((links[k & 1])[ndim - 1 - k // 2]) for k in range(2 * ndim)]

    names = ("excess", "to_sink", "source_capacity", "sink_capacity")
    residual = [gpu.asarray(np.array(plane)) for plane in state["residual"]]  # copies
    arrays = [gpu.asarray(np.array(state[name])) for name in names]
    totals = gpu.zeros(2, dtype=np.uint64)
    kernel("grid_state.cu", "change_nlinks" + ("_3d" if ndim == 3 else ""))(
        (3,), (256,), (*(np.int32(n) for n in reversed(shape)), np.int32(restart),
                       *by_direction(old), *by_direction(new), *residual, *arrays, totals))
    after = {name: on_host(a) for name, a in zip(names, arrays)}
    after["residual"] = np.stack([on_host(plane) for plane in residual])
    return after, tuple(int(v) for v in on_host(totals))


@pytest.mark.parametrize("top", [1000, 2**31 - 1])
def test_nlink_kernel_equals_the_dynamic_function(gpu, top):
    """grid_state.cu's change_nlinks and change_nlinks_3d (GridState.change_nlinks, a new lam
    on the GPU) against graphcut.solver.dynamic's reparameterize_nlinks and restart_nlinks,
    bit for bit: odd image and volume shapes, zero and saturated arcs, flows cut on both
    sides, capacities up to the int32 limit (where some updates overflow and restart)."""
    rng = np.random.default_rng(top % 1013)
    shapes = [(1, 1), (1, 7), (9, 1), (5, 6), (37, 53), (1, 1, 5), (3, 1, 4), (4, 6, 5)]
    cut = overflowed = 0
    for shape in shapes * 3:
        old = random_links(rng, shape, top)
        new = random_links(rng, shape, top) if rng.random() < 0.5 else tuple(
            tuple((a // int(rng.integers(1, 4))).astype(np.int32) for a in side) for side in old)
        state = random_state(rng, shape, old, top)
        got, (deltas, overflows) = _change_nlinks_kernel(gpu, shape, state, old, new, False)
        expected = reparameterize_nlinks(state["residual"], state["excess"],
                                         state["to_sink"].astype(np.int64),
                                         state["source_capacity"], state["sink_capacity"], 0,
                                         old, new)
        if expected is None:
            overflowed += 1
            assert overflows > 0
            # the restart from the capacities the kernel left in force
            expected = restart_nlinks(new, got["source_capacity"], got["sink_capacity"], 0,
                                      np.uint32)
            got, (deltas, overflows) = _change_nlinks_kernel(gpu, shape, got, new, new, True)
            assert deltas == 0
        cut += expected.reparameterization > 0
        assert overflows == 0 and deltas == expected.reparameterization
        for name in ("residual", "excess", "to_sink", "source_capacity", "sink_capacity"):
            np.testing.assert_array_equal(got[name], getattr(expected, name), err_msg=name)
    assert cut > 0
    if top == 2**31 - 1:
        assert overflowed > 0


def test_strict_stand_in_catches_compiled_cupy_operations(gpu):
    """The stand-in is strict, so the paths it accepts use no run-time-compiled kernel."""
    if not isinstance(gpu.zeros(1), fake_cupy.ndarray):
        pytest.skip("a check of the stand-in")
    array = gpu.zeros((3, 4), dtype=np.float64)
    with pytest.raises(fake_cupy.StrictError):
        array + 1
    with pytest.raises(fake_cupy.StrictError):
        array.sum()
    with pytest.raises(fake_cupy.StrictError):
        array.astype(np.int32)
    with pytest.raises(fake_cupy.StrictError):
        array[1:, :2] = 5
    with pytest.raises(fake_cupy.StrictError):
        gpu.exp(array)
    with pytest.raises(fake_cupy.StrictError):
        array[array > 0]
