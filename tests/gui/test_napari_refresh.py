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


def blob(shape, rng, label=1):
    """A random rectangle of ``label`` (uint8) on zeros."""
    out = np.zeros(shape, np.uint8)
    r0, c0 = rng.integers(0, shape[0] // 2), rng.integers(0, shape[1] // 2)
    out[r0:r0 + rng.integers(2, shape[0] // 2), c0:c0 + rng.integers(2, shape[1] // 2)] = label
    return out


def test_results_shown_by_region_leave_the_layer_equal_to_each_exact_result():
    """Exact results (binary, several objects), previews between them, regions given or not:
    after each exact result the output layer equals it, after a preview it equals the preview
    upscaled (np.repeat), and an edit of the layer outside every change stays."""
    from graphcut.gui.controller import PostQueue
    from graphcut.gui.napari._session import LayerSegmentation
    from graphcut.gui.napari._layers import changed_region
    from graphcut.gui.solve import Outcome

    rng = np.random.default_rng(3)
    shape, factor = (40, 50), 3
    viewer = ViewerModel()
    image = viewer.add_image(np.zeros(shape, np.float32))
    scribbles = viewer.add_labels(np.zeros(shape, np.uint8))
    session = LayerSegmentation(viewer, post=PostQueue(), use_process=False)
    session.set_layers(image, scribbles)
    assert session.segment() is None  # opened; nothing to segment yet
    shown = None

    def exact(values, labels=False, region="diff", check=True):
        nonlocal shown
        mask = values != 0
        if region == "diff":
            region = None if shown is None else changed_region(shown != 0, mask)
        session.on_outcome(Outcome(1, 1, mask=mask, region=region,
                                   labels=values if labels else None))
        assert not check or np.array_equal(session.output_layer.data, values)
        shown = values

    def preview(labels=False):
        small_shape = (-(-shape[0] // factor), -(-shape[1] // factor))
        small = blob(small_shape, rng) | (blob(small_shape, rng, 3) if labels else 0)
        session.on_outcome(Outcome(1, 1, factor=factor, mask=small != 0,
                                   labels=small if labels else None))
        upscaled = np.repeat(np.repeat(small, factor, 0), factor, 1)[:shape[0], :shape[1]]
        assert np.array_equal(session.output_layer.data, upscaled)  # each object its label

    exact(blob(shape, rng))
    for _ in range(4):
        exact(blob(shape, rng))
        preview()
        preview()
        exact(blob(shape, rng))
        exact(blob(shape, rng), region=None)  # the controller could not tell
    several = blob(shape, rng) | blob(shape, rng, 3)
    exact(several, labels=True)
    preview(labels=True)  # a preview of several objects shows their labels
    exact(several, labels=True)
    # the same mask (the controller's region bounds only mask changes), other labels: compared
    exact((several != 0).astype(np.uint8), region=(slice(0, 1), slice(0, 1)))
    edited = shown.copy()
    corner = (slice(0, 1), slice(0, 1))
    session.output_layer.data[corner] = edited[corner] = 7
    changed = shown.copy()
    changed[30:35, 40:45] ^= 1
    exact(changed, check=False)  # the edit is outside the change: kept
    assert session.output_layer.data[0, 0] == 7 and np.array_equal(
        np.where(edited == 7, 0, session.output_layer.data), np.where(edited == 7, 0, changed))
    session.close()


def test_shown_region_covers_the_changes_of_answers_not_shown():
    """The controller's region for an outcome shown: everything its solver changed since the
    last mask shown (answers dropped meanwhile included); unknown (None) after another
    solver's mask or before any."""
    from graphcut.gui.controller_parts import Channel, since_shown
    from graphcut.gui.sharing import union
    from graphcut.gui.solve import Outcome

    exact, spare, shown_from = Channel(None, 1), Channel(None, 1), {}
    outcome = Outcome(1, 1, mask=np.zeros((4, 4), bool), region=(slice(0, 4), slice(0, 4)))
    assert since_shown(shown_from, exact, outcome).region is None  # the first: all
    exact.unshown = (1, 2, 0, 1)  # a stale answer (dropped) changed row 1, column 0
    exact.unshown = union(exact.unshown, (3, 4, 2, 3))  # and the answer shown now
    assert since_shown(shown_from, exact, outcome).region == (slice(1, 4), slice(0, 3))
    assert exact.unshown is None
    spare.unshown = (0, 1, 0, 1)
    assert since_shown(shown_from, spare, outcome).region is None  # base: the other's mask
    assert since_shown(shown_from, exact, outcome).region is None
