"""Writing results into a Labels layer with napari's partial refresh (gui/napari/_refresh.py):
after each write the layer's displayed slice and texture values equal those of a full
``refresh()`` of the same data (the oracle), and only the written box is announced."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("napari")

from napari.components import ViewerModel  # noqa: E402

from graphcut.gui.napari._layers import union_regions  # noqa: E402
from graphcut.gui.napari._refresh import write_labels  # noqa: E402


def shown(layer):
    return (np.array(layer._slice.image.raw, copy=True),
            np.array(layer._slice.image.view, copy=True))


def full_refresh_oracle(layer):
    """What napari shows for the layer's data after a full refresh."""
    viewer = ViewerModel()
    other = viewer.add_labels(np.array(layer.data, copy=True))
    viewer.dims.ndisplay = layer._slice.slice_input.ndisplay
    viewer.dims.current_step = layer._viewer_step
    other.refresh()
    return shown(other)


@pytest.mark.parametrize("ndisplay", [2, 3])
def test_partial_writes_show_what_a_full_refresh_shows(ndisplay):
    rng = np.random.default_rng(0)
    viewer = ViewerModel()
    layer = viewer.add_labels(np.zeros((6, 20, 30), np.uint8))
    viewer.dims.ndisplay = ndisplay
    viewer.dims.current_step = (3, 0, 0)
    layer._viewer_step = viewer.dims.current_step
    updates = []
    layer.events.labels_update.connect(lambda event: updates.append(event.offset))
    for region in [(slice(2, 5), slice(4, 9), slice(10, 25)),   # through the shown slice
                   (slice(0, 2), slice(0, 20), slice(0, 30)),   # off it (2-D view)
                   (slice(3, 4), slice(15, 20), slice(0, 3))]:
        values = rng.integers(0, 4, [s.stop - s.start for s in region]).astype(np.uint8)
        partial = write_labels(layer, values, region)
        assert partial
        assert np.array_equal(layer.data[region], values)
        for got, want in zip(shown(layer), full_refresh_oracle(layer)):
            assert np.array_equal(got, want)
    if ndisplay == 2:  # the off-slice write announces nothing
        assert updates == [[4, 10], [15, 0]]
    else:
        assert updates == [[2, 4, 10], [0, 0, 0], [3, 15, 0]]


def test_whole_writes_and_unsupported_displays_refresh_everything():
    viewer = ViewerModel()
    layer = viewer.add_labels(np.zeros((10, 12), np.uint8))
    assert not write_labels(layer, 1)
    assert np.array_equal(shown(layer)[0], np.ones((10, 12)))
    layer.contour = 1  # contours: napari's partial path would need them recomputed
    assert not write_labels(layer, np.full((2, 2), 2, np.uint8), (slice(0, 2), slice(0, 2)))
    assert layer.data[:2, :2].tolist() == [[2, 2], [2, 2]]


def test_union_of_regions():
    a = (slice(1, 3), slice(5, 6))
    assert union_regions(None, None) is None
    assert union_regions(a, None) == a == union_regions(None, a)
    assert union_regions(a, (slice(0, 2), slice(7, 9))) == (slice(0, 3), slice(5, 9))
