"""The napari plugin's layer conversions (gui/napari/_layers.py), against brute force and the
library: channels asked for, scale as spacing, seed labels kept, regions of napari's own paint
events, preview upscaling, mask colours unlike the scribbles'."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("napari")

from napari.layers import Image, Labels  # noqa: E402

from graphcut.gui.napari._layers import (LayerError, as_seeds, changed_region,  # noqa: E402
                                         foreground_box, mask_colormap,
                                         needs_channel_choice, paint_region, prepare_image,
                                         upscale_into)


def test_seed_labels_are_kept_and_bad_labels_refused():
    labels = np.array([[0, 1, 2, 3, 254]], dtype=np.int32)
    seeds = as_seeds(labels)
    assert seeds.dtype == np.uint8 and seeds.tolist() == [[0, 1, 2, 3, 254]]
    assert as_seeds(labels, (slice(0, 1), slice(1, 3))).tolist() == [[1, 2]]
    for bad in (-1, 255, 1000):
        with pytest.raises(LayerError, match=f"scribble label {bad} is not a seed label"):
            as_seeds(np.array([[0, bad]], dtype=np.int32))
    with pytest.raises(LayerError, match="label 255"):
        as_seeds(np.array([[255]], dtype=np.uint8))


@pytest.mark.parametrize("shape", [(7, 9), (3, 5, 6)])
def test_changed_region_is_the_bounding_box_of_the_changes(shape):
    rng = np.random.default_rng(len(shape))
    for _ in range(20):
        old = rng.integers(0, 3, shape).astype(np.uint8)
        new = old.copy()
        picks = rng.integers(0, old.size, rng.integers(0, 4))
        new.flat[picks] = (new.flat[picks] + 1) % 3
        where = np.argwhere(old != new)
        region = changed_region(old, new)
        if where.size == 0:
            assert region is None
            continue
        expected = tuple(slice(lo, hi + 1) for lo, hi in zip(where.min(0), where.max(0)))
        assert region == expected


def test_paint_region_from_napari_paint_events():
    """The region napari's brush and fill report covers every element they changed."""
    layer = Labels(np.zeros((30, 40), np.uint8))
    regions = []
    layer.events.paint.connect(lambda event: regions.append(paint_region(event.value, (30, 40))))
    for action in (lambda: layer.paint((10, 12), 1), lambda: layer.fill((25, 35), 2)):
        before = layer.data.copy()
        layer.brush_size = 5
        action()
        changed = np.argwhere(before != layer.data)
        region = regions[-1]
        assert region is not None
        for axis, s in enumerate(region):
            assert s.start <= changed[:, axis].min() and changed[:, axis].max() < s.stop
    assert paint_region([object()], (30, 40)) is None  # unknown form: compare all


def test_channels_are_asked_for_not_guessed():
    data = np.zeros((3, 20, 30), np.uint8)
    layer = Image(data, name="cyx", scale=(1, 0.5, 0.25))
    assert needs_channel_choice(layer)
    with pytest.raises(LayerError, match="choose its channels"):
        prepare_image(layer, "ask")
    first = prepare_image(layer, "first")
    assert first.data.shape == (20, 30, 3) and first.channel_axis == -1
    assert first.shape == (20, 30) and first.spacing == (0.5, 0.25)
    last = prepare_image(layer, "last")
    assert last.shape == (3, 20) and last.spacing == (1.0, 0.5)
    volume = prepare_image(layer, "none")
    assert volume.shape == (3, 20, 30) and volume.channel_axis is None
    assert volume.spacing == (1.0, 0.5, 0.25)
    rgb = Image(np.zeros((20, 30, 3), np.uint8), rgb=True, scale=(2, 2))
    assert not needs_channel_choice(rgb)
    prepared = prepare_image(rgb, "ask")
    assert prepared.shape == (20, 30) and prepared.channel_axis == -1
    assert prepared.spacing == (2.0, 2.0) and prepared.scale == (2.0, 2.0)
    grey = prepare_image(Image(np.zeros((20, 30))), "ask")
    assert grey.channel_axis is None and grey.spacing is None
    with pytest.raises(LayerError, match="4 spatial axes"):
        prepare_image(Image(np.zeros((2, 3, 4, 5))), "none")


def test_upscale_matches_repeat():
    small = np.random.default_rng(0).random((4, 5)) > 0.5
    big = np.full((11, 14), 9, np.uint8)
    upscale_into(big, small, 3)
    expected = np.repeat(np.repeat(small, 3, 0), 3, 1)[:11, :14]
    np.testing.assert_array_equal(big, expected.astype(np.uint8))


def test_upscale_into_a_box_writes_whole_blocks_of_it_only():
    small = np.random.default_rng(1).random((4, 5)) > 0.5
    expected = np.repeat(np.repeat(small, 3, 0), 3, 1)[:11, :14].astype(np.uint8)
    big = np.full((11, 14), 9, np.uint8)
    box = upscale_into(big, small, 3, (slice(4, 8), slice(5, 14)))
    assert box == (slice(3, 9), slice(3, 14))  # widened to whole blocks, cut at the edge
    inside = np.zeros(big.shape, bool)
    inside[box] = True
    np.testing.assert_array_equal(big[inside], expected[inside])
    assert (big[~inside] == 9).all()


def test_foreground_box():
    mask = np.zeros((5, 6, 7), bool)
    assert foreground_box(mask) is None
    mask[1, 2, 3] = mask[3, 4, 1] = True
    assert foreground_box(mask) == (slice(1, 4), slice(2, 5), slice(1, 4))
    assert foreground_box(mask[1], 3) == (slice(6, 9), slice(9, 12))


def test_mask_colours_differ_from_the_scribbles():
    scribbles = Labels(np.zeros((4, 4), np.uint8))
    mask = mask_colormap()
    for label in range(1, 12):
        assert not np.allclose(scribbles.colormap.map(label), mask.map(label)), label


def _volume_masks(seed):
    rng = np.random.default_rng(seed)
    old = rng.random((6, 7, 9)) > 0.5
    new = old.copy()
    new[2:4, 1:5, 3:8] = rng.random((2, 4, 5)) > 0.5
    return old, new


@pytest.mark.parametrize("seed", range(5))
def test_volume_mask_updates_round_trip(seed):
    """The solvers' mask edits (gui/sharing.py) for a volume: applying the update to the old
    mask gives the new one, and the region it reports holds every changed voxel."""
    from graphcut.gui.sharing import MaskUpdate
    old, new = _volume_masks(seed)
    update = MaskUpdate.between(old, new)
    assert update.shape == new.shape
    mask = old.copy()
    region = update.apply(mask)
    np.testing.assert_array_equal(mask, new)
    if region is not None:
        outside = np.ones(new.shape, bool)
        outside[region] = False
        assert not (old != new)[outside].any()
    whole = np.zeros(new.shape, bool)
    MaskUpdate.between(None, new).apply(whole)
    np.testing.assert_array_equal(whole, new)
    assert MaskUpdate.between(new, new).region is None


@pytest.mark.gpu
def test_volume_mask_updates_on_the_gpu_equal_numpy():
    import cupy

    from graphcut.gui.sharing import MaskUpdate
    old, new = _volume_masks(0)
    gpu = MaskUpdate.between(cupy.asarray(old), cupy.asarray(new))
    host = MaskUpdate.between(old, new)
    assert (gpu.shape, gpu.region, gpu.bits) == (host.shape, host.region, host.bits)
