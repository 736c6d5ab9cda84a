"""graphcut.segment on synthetic images with a known ground truth."""

from __future__ import annotations

import numpy as np
import pytest

import graphcut
from synthetic import H, W, disc_image, disc_seeds, disc_truth, iou  # noqa: F401
from graphcut.solver import cut_capacity




@pytest.mark.parametrize("kind,dtype", [
    ("grey", np.uint8), ("grey", np.uint16), ("grey", np.float64), ("grey", np.float32),
    ("grey", bool), ("colour", np.uint8), ("colour", np.uint16), ("colour", np.float64),
    ("rgba", np.uint8),
])
def test_disc_is_segmented(kind, dtype):
    image = disc_image(kind, dtype)
    mask = graphcut.segment(image, disc_seeds(), device="cpu")
    assert mask.dtype == bool and mask.shape == (H, W)
    assert iou(mask, disc_truth()) >= 0.95


def test_colour_disc_needs_colour():
    """The colour disc has the background's grey level: its grey version cannot be segmented,
    so the colour result is genuinely using the channels."""
    image = disc_image("colour", np.uint8)
    grey = image.mean(axis=-1)
    assert iou(graphcut.segment(image, disc_seeds()), disc_truth()) >= 0.95
    assert iou(graphcut.segment(grey, disc_seeds()), disc_truth()) < 0.8


def test_channel_axis_first_gives_the_same_mask():
    image = disc_image("colour", np.uint8)
    last = graphcut.segment(image, disc_seeds())
    first = graphcut.segment(np.moveaxis(image, -1, 0), disc_seeds(), channel_axis=0)
    assert np.array_equal(first, last)


def test_noisier_disc_with_strong_noise():
    image = disc_image("grey", np.float64, noise=0.2, seed=3)
    assert iou(graphcut.segment(image, disc_seeds()), disc_truth()) >= 0.95


def test_return_result_is_the_certified_cut():
    image, seeds = disc_image(), disc_seeds()
    mask, result = graphcut.segment(image, seeds, model="histogram", device="cpu",
                                    return_result=True)
    assert isinstance(result, graphcut.CutResult)
    assert result.backend == "cpu"
    assert np.array_equal(mask, result.source_side)
    network = graphcut.build_network(image, seeds)
    assert cut_capacity(network, mask) == result.flow


def test_inputs_are_not_modified():
    image, seeds = disc_image("colour", np.float64), disc_seeds()
    image_copy, seeds_copy = image.copy(), seeds.copy()
    image.flags.writeable = False
    seeds.flags.writeable = False
    graphcut.segment(image, seeds)
    assert np.array_equal(image, image_copy) and np.array_equal(seeds, seeds_copy)


def test_lam_zero_is_the_pixelwise_colour_decision():
    image, seeds = disc_image("grey", np.uint8), disc_seeds()
    mask = graphcut.segment(image, seeds, lam=0, model="histogram")
    cost_object, cost_background = graphcut.regional_costs(image, seeds)
    scale = graphcut.DEFAULT_SCALE
    unseeded = seeds == 0
    # without n-links each free pixel takes its cheaper label (ties go to the source side)
    expected = np.rint(cost_object * scale) <= np.rint(cost_background * scale)
    assert np.array_equal(mask[unseeded], expected[unseeded])


def test_bad_device_is_rejected():
    with pytest.raises(ValueError, match="unknown device"):
        graphcut.segment(disc_image(), disc_seeds(), device="tpu")


def test_public_names():
    for name in ("segment", "build_network", "nlink_weights", "regional_costs",
                 "terminal_capacities", "read_image", "read_seeds", "write_seeds", "write_mask",
                 "write_overlay", "min_cut", "GridNetwork", "CSRNetwork", "CutResult"):
        assert name in graphcut.__all__ and hasattr(graphcut, name)


def test_auto_on_a_gpu_machine_without_cupy_says_so_once(monkeypatch, caplog):
    """An NVIDIA GPU with no CuPy: device='auto' runs on the CPU and warns once how to use the
    GPU (it used to stay silent)."""
    import builtins
    import logging

    from graphcut.solver import api
    real_import = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name == "cupy" or name.startswith("cupy."):
            raise ImportError("No module named 'cupy'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cupy)
    monkeypatch.setattr(api, "nvidia_gpu_present", lambda: True)
    for cached in (api.cuda_status, api.gpu_hint, api._warn_once):
        cached.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="graphcut.solver"):
            assert api.resolve_device("auto") == "cpu"
            assert api.resolve_device("auto") == "cpu"
        hints = [r for r in caplog.records if "graphcut[gpu]" in r.getMessage()]
        assert len(hints) == 1 and "NVIDIA GPU" in hints[0].getMessage()
        with pytest.raises(api.BackendUnavailableError, match=r"graphcut\[gpu\]"):
            api.resolve_device("cuda")
    finally:
        for cached in (api.cuda_status, api.gpu_hint, api._warn_once):
            cached.cache_clear()
