"""The napari plugin on napari's ViewerModel, without Qt: the layers bound to the app's
segmentation controller (gui/napari/_session.py). Strokes go through napari's own paint path
(the Labels layer's mouse bindings, as a drag of the brush); results are checked against
``graphcut.segment`` of the same scribbles.

Solvers run on threads here (quick to start); tests/gui/test_napari_widget.py drives the dock
widget with the solver processes the plugin uses."""

from __future__ import annotations

import dataclasses
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("napari")

import graphcut  # noqa: E402
from graphcut.gui.controller import PostQueue  # noqa: E402
from graphcut.gui.model_choice import model_lam  # noqa: E402
from graphcut.gui.napari._session import NEEDS_BOTH, LayerSegmentation  # noqa: E402
from graphcut.gui.options import SegmentOptions  # noqa: E402


def disc(shape=(40, 50), seed=0, background=80):
    rng = np.random.default_rng(seed)
    grid = np.indices(shape)
    centre = [n / 2 for n in shape]
    inside = sum(((g - c) / (n / 3)) ** 2 for g, c, n in zip(grid, centre, shape)) < 1
    image = np.clip(np.where(inside, 170, background) + rng.normal(0, 20, shape), 0, 255)
    return image.astype(np.uint8)


class Bench:
    """A ViewerModel with an image, a scribbles layer and a LayerSegmentation on threads."""

    def __init__(self, image, *, channels="ask", scale=None, live=True, shape=None,
                 **image_kwargs):
        from napari.components import ViewerModel
        self.viewer = ViewerModel()
        kwargs = {} if scale is None else {"scale": scale}
        self.image = self.viewer.add_image(image, name="image", **kwargs, **image_kwargs)
        shape = shape or self.spatial_shape(image, channels, image_kwargs.get("rgb", False))
        self.scribbles = self.viewer.add_labels(np.zeros(shape, np.uint8), name="scribbles",
                                                **({} if scale is None else
                                                   {"scale": scale[-len(shape):]}))
        self.scribbles.brush_size = 3
        self.post = PostQueue()
        self.statuses = []
        self.session = LayerSegmentation(self.viewer, post=self.post, use_process=False,
                                         on_status=lambda text, error:
                                         self.statuses.append((text, error)))
        self.session.set_device("cpu")
        self.session.set_layers(self.image, self.scribbles, channels)
        self.session.set_live(live)

    @staticmethod
    def spatial_shape(image, channels, rgb):
        if rgb or channels == "last":
            return image.shape[:-1]
        return image.shape[1:] if channels == "first" else image.shape

    def drag(self, points, label, mouse_event):
        """A brush stroke through napari's mouse bindings: press, moves, release."""
        from napari.utils._proxies import ReadOnlyWrapper
        from napari.utils.interactions import (mouse_move_callbacks, mouse_press_callbacks,
                                               mouse_release_callbacks)
        layer = self.scribbles
        layer.mode, layer.selected_label = "paint", label
        displayed = tuple(range(layer.ndim))[-2:]
        point = list(points[0])

        def event(kind, position, dragging):
            return ReadOnlyWrapper(mouse_event(type=kind, is_dragging=dragging,
                                               position=tuple(position), view_direction=None,
                                               dims_displayed=displayed, dims_point=point))
        mouse_press_callbacks(layer, event("mouse_press", points[0], False))
        for position in points[1:]:
            mouse_move_callbacks(layer, event("mouse_move", position, True))
        mouse_release_callbacks(layer, event("mouse_release", points[-1], False))

    def settle(self, timeout=120.0):
        """Run what was posted until the newest request has its exact answer (``timeout``
        seconds for each posted step: generous, as a fresh GPU machine compiles every kernel
        in its first job)."""
        self.post.run_pending(0.05)
        while self.session.is_busy():
            assert self.post.run_pending(timeout), "no answer"
        self.post.run_pending(0.05)

    def expected(self, **kwargs):
        lam = self.session.lam  # None: the model's own lam, which the plugin cuts at
        model = self.session.options.model
        axis = -1 if self.image.rgb else None
        options = self.session.options.segment_kwargs(
            model_lam(model, self.image.data, axis) if lam is None else lam)
        options.update(kwargs)
        return graphcut.segment(self.image.data, np.asarray(self.scribbles.data),
                                device="cpu", **options)


def test_painting_live_segments_each_stroke_and_keeps_the_selection(MouseEvent):
    bench = Bench(disc())
    bench.viewer.layers.selection.active = bench.scribbles
    bench.drag([(20, 20), (20, 30)], 1, MouseEvent)
    bench.settle()
    assert bench.statuses[-1] == (NEEDS_BOTH, False)  # a status line, not an error
    assert bench.session.output_layer is None
    bench.drag([(2, 2), (2, 45), (37, 45)], 2, MouseEvent)
    bench.settle()
    output = bench.session.output_layer
    assert output is not None and output.name == "image graphcut"
    np.testing.assert_array_equal(output.data, bench.expected().astype(np.uint8))
    assert bench.viewer.layers.selection.active is bench.scribbles
    assert set(bench.viewer.layers.selection) == {bench.scribbles}
    assert bench.statuses[-1][0].startswith("exact · cpu")
    bench.drag([(37, 3), (30, 3)], 2, MouseEvent)  # a second stroke: an incremental solve
    bench.settle()
    assert bench.session.last_outcome.incremental
    np.testing.assert_array_equal(output.data, bench.expected().astype(np.uint8))
    assert bench.viewer.layers.selection.active is bench.scribbles


def test_undo_and_redo_resegment(MouseEvent):
    bench = Bench(disc())
    bench.drag([(20, 20), (20, 30)], 1, MouseEvent)
    bench.drag([(2, 2), (2, 45)], 2, MouseEvent)
    bench.settle()
    bench.drag([(37, 3), (37, 45)], 2, MouseEvent)
    bench.settle()
    after = bench.session.output_layer.data.copy()
    bench.scribbles.undo()
    bench.settle()
    np.testing.assert_array_equal(bench.session.output_layer.data,
                                  bench.expected().astype(np.uint8))
    bench.scribbles.redo()
    bench.settle()
    np.testing.assert_array_equal(bench.session.output_layer.data, after)
    bench.scribbles.undo()
    bench.scribbles.undo()  # no background left: the old mask goes, the status says why
    bench.settle()
    assert not bench.session.output_layer.data.any()
    assert bench.statuses[-1] == (NEEDS_BOTH, False)


def test_several_objects_go_to_one_labels_layer_with_their_labels(MouseEvent):
    image = disc((40, 60))
    image[5:15, 5:15] = 230  # a second object
    bench = Bench(image)
    bench.drag([(20, 28), (20, 32)], 1, MouseEvent)
    bench.drag([(9, 9), (10, 10)], 3, MouseEvent)
    bench.drag([(38, 2), (38, 58)], 2, MouseEvent)
    bench.settle()
    expected = bench.expected()
    assert set(np.unique(expected)) == {0, 1, 3}
    np.testing.assert_array_equal(bench.session.output_layer.data, expected)


def test_layers_named_like_the_output_are_left_alone(MouseEvent):
    image = disc()
    bench = Bench(image)
    saved = bench.viewer.add_image(np.full(image.shape, 7, np.uint8), name="image graphcut")
    other = bench.viewer.add_labels(np.full(image.shape, 5, np.uint8), name="graphcut mask")
    bench.session.set_layers(bench.image, bench.scribbles, "ask")
    bench.drag([(20, 20), (20, 30)], 1, MouseEvent)
    bench.drag([(2, 2), (2, 45)], 2, MouseEvent)
    bench.settle()
    output = bench.session.output_layer
    assert output is not saved and output is not other
    assert (saved.data == 7).all() and (other.data == 5).all()
    output.name = "renamed"  # found by identity, not by name
    bench.drag([(37, 3), (37, 45)], 2, MouseEvent)
    bench.settle()
    assert bench.session.output_layer is output
    np.testing.assert_array_equal(output.data, bench.expected().astype(np.uint8))
    bench.viewer.layers.remove(output)  # removed by the user: a new one comes
    bench.drag([(30, 3), (37, 3)], 2, MouseEvent)
    bench.settle()
    assert bench.session.output_layer is not output
    assert bench.session.output_layer in bench.viewer.layers


def test_live_resegments_on_lambda_options_device_and_layer_changes(MouseEvent):
    bench = Bench(disc())
    bench.drag([(20, 20), (20, 30)], 1, MouseEvent)
    bench.drag([(2, 2), (2, 45)], 2, MouseEvent)
    bench.settle()
    number = bench.session.controller.latest
    bench.session.set_lam(80.0)
    bench.settle()
    assert bench.session.controller.latest > number
    np.testing.assert_array_equal(bench.session.output_layer.data,
                                  bench.expected().astype(np.uint8))
    bench.session.set_options(dataclasses.replace(SegmentOptions().with_cleanup(True)))
    bench.settle()
    np.testing.assert_array_equal(bench.session.output_layer.data,
                                  bench.expected().astype(np.uint8))
    before = bench.session.controller
    bench.session.set_device("auto")
    bench.settle()
    assert bench.session.controller is not before and bench.session.last_outcome.factor == 1
    first_output = bench.session.output_layer
    kept = first_output.data.copy()
    # another image of another shape, with its scribbles: its own output layer
    small = disc((30, 35), seed=1)
    other = bench.viewer.add_image(small, name="other")
    scribbles = bench.viewer.add_labels(np.zeros(small.shape, np.uint8), name="other s")
    scribbles.data[15, 17], scribbles.data[0, 0] = 1, 2
    bench.session.set_layers(other, scribbles, "ask")
    bench.settle()
    new_output = bench.session.output_layer
    assert new_output is not first_output and new_output.data.shape == small.shape
    np.testing.assert_array_equal(first_output.data, kept)
    expected = graphcut.segment(small, scribbles.data, device="cpu",
                                **bench.session.options.segment_kwargs(80.0))
    np.testing.assert_array_equal(new_output.data, expected.astype(np.uint8))
    bench.session.set_layers(bench.image, bench.scribbles, "ask")  # back: its own layer again
    bench.settle()
    assert bench.session.output_layer is first_output
    np.testing.assert_array_equal(first_output.data, kept)


def test_volume_scale_is_the_voxel_spacing(MouseEvent):
    # a low-contrast disc, where the spacing changes 12-16 voxels with either of the learned
    # model's splits (on the background of 80 it changed 3 with Otsu's and none with the local)
    volume = disc((12, 20, 24), background=120)
    bench = Bench(volume, channels="none", scale=(3.0, 1.0, 1.0))
    bench.scribbles.data[6, 10, 12] = 1
    bench.scribbles.data[0, 0, 0] = bench.scribbles.data[11, 19, 23] = 2
    bench.session.segment()
    bench.settle()
    expected = graphcut.segment(volume, bench.scribbles.data, device="cpu", channel_axis=None,
                                spacing=(3.0, 1.0, 1.0),
                                **bench.session.options.segment_kwargs(bench.session.lam))
    np.testing.assert_array_equal(bench.session.output_layer.data, expected.astype(np.uint8))
    assert tuple(bench.session.output_layer.scale) == (3.0, 1.0, 1.0)
    isotropic = graphcut.segment(volume, bench.scribbles.data, device="cpu",
                                 channel_axis=None)
    assert not np.array_equal(expected, isotropic)  # the spacing mattered


def test_channels_first_is_asked_for_and_used():
    grey = disc()
    image = np.stack([grey, 255 - grey, grey // 2])  # (C, Y, X)
    bench = Bench(image, channels="ask", live=False, shape=grey.shape)
    bench.scribbles.data[20, 25], bench.scribbles.data[0, 0] = 1, 2
    assert bench.session.segment() is None
    text, error = bench.statuses[-1]
    assert not error and "choose its channels" in text  # a question, not a failure
    bench.session.set_layers(bench.image, bench.scribbles, "first")
    bench.session.segment()
    bench.settle()
    expected = graphcut.segment(np.moveaxis(image, 0, -1), bench.scribbles.data, device="cpu",
                                **bench.session.options.segment_kwargs(bench.session.lam))
    np.testing.assert_array_equal(bench.session.output_layer.data, expected.astype(np.uint8))


def test_real_failures_are_errors():
    bench = Bench(disc(), live=False)
    wrong = bench.viewer.add_labels(np.zeros((10, 10), np.uint8), name="wrong")
    bench.session.set_layers(bench.image, wrong, "ask")
    assert bench.session.segment() is None
    text, error = bench.statuses[-1]
    assert error and "has shape (10, 10) but the image 'image' (40, 50)" in text
    big = bench.viewer.add_labels(np.zeros((40, 50), np.int32), name="int32")
    big.data[3, 4], big.data[20, 25], big.data[0, 0] = 300, 1, 2
    bench.session.set_layers(bench.image, big, "ask")
    assert bench.session.segment() is None
    text, error = bench.statuses[-1]
    assert error and "scribble label 300 is not a seed label" in text


def test_removing_the_layers_ends_the_solvers():
    bench = Bench(disc(), live=False)
    bench.scribbles.data[20, 25], bench.scribbles.data[0, 0] = 1, 2
    bench.session.segment()
    bench.settle()
    assert bench.session.controller is not None
    bench.viewer.layers.remove(bench.image)
    assert bench.session.controller is None and bench.session.image_layer is None
    assert bench.session.segment() is None


def test_box_and_clean_up_are_the_apps(MouseEvent):
    """The app's options reach the solver: a box (outside is background) with clean-up. A
    dark background (a micrograph-like disc: auto's learned model; on the brighter disc auto
    takes the image for a grey photograph, and the live GMM's strokes-alone start, far pixels
    as background, keeps only the strokes' surroundings of this 40 x 50 image)."""
    bench = Bench(disc(background=30))
    bench.drag([(20, 20), (20, 30)], 1, MouseEvent)
    bench.drag([(2, 2), (2, 45)], 2, MouseEvent)
    bench.settle()
    unboxed = bench.session.output_layer.data.copy()
    options = SegmentOptions().with_cleanup(True).with_region(box=(12, 18, 30, 34))
    bench.session.set_options(options)
    bench.settle()
    expected = bench.expected()
    assert not expected[:, :18].any() and not np.array_equal(expected, unboxed.astype(bool))
    np.testing.assert_array_equal(bench.session.output_layer.data, expected.astype(np.uint8))


@pytest.mark.gpu
@pytest.mark.parametrize("shape,channels", [((12, 20, 24), "none"), ((60, 80), "ask")])
def test_gpu_results_equal_the_cpu_library(shape, channels):
    """On the GPU (solver warmed up, masks sent as edits computed on the card), volumes and
    images give ``graphcut.segment``'s CPU masks, stroke after stroke (napari's brush,
    ``Labels.paint``: no Qt needed)."""
    image = disc(shape)
    bench = Bench(image, channels=channels, scale=(2.0,) + (1.0,) * (len(shape) - 1))
    bench.session.set_device("cuda")
    centre = tuple(n // 2 for n in shape)
    bench.scribbles.data[centre] = 1
    bench.scribbles.data[(0,) * len(shape)] = 2
    bench.session.segment()
    bench.settle()
    assert bench.session.last_outcome.backend == "cuda"
    lead = (centre[0],) if len(shape) == 3 else ()
    for label, point in ((2, (shape[-2] - 2, 3)), (1, (centre[-2], centre[-1] + 2))):
        bench.scribbles.paint(lead + point, label)
        bench.settle()
        expected = graphcut.segment(image, np.asarray(bench.scribbles.data), device="cpu",
                                    channel_axis=None, spacing=bench.image.scale,
                                    **bench.session._effective_options()
                                    .segment_kwargs(bench.session.lam))
        np.testing.assert_array_equal(bench.session.output_layer.data,
                                      expected.astype(np.uint8))


def test_the_learned_models_hold_follows_the_masks_shown(MouseEvent):
    """The plugin drives the app's controller: each exact job carries the update shown, so
    after 8 strokes (the hold starts at the 7th) the output is ``segment(...,
    previous=(scribbles shown, mask shown))``'s; the gap that looks like the far nucleus B is
    marked background last, and B stands (without the previous update it falls)."""
    from test_app_hold import look_alike
    image, a, b, g = look_alike()
    bench = Bench(image)
    strokes = [((40, 19), (40, 21), 1), ((5, 99), (5, 101), 2), ((40, 179), (40, 181), 1),
               ((72, 49), (72, 51), 2), ((8, 19), (8, 21), 2), ((72, 149), (72, 151), 2),
               ((8, 179), (8, 181), 2), ((40, 100), (40, 100), 2)]
    shown = None
    for index, (start, end, label) in enumerate(strokes):
        if index == len(strokes) - 1:
            bench.scribbles.brush_size = 19  # the gap G at once
        bench.drag([start, end], label, MouseEvent)
        bench.settle()
        output = bench.session.output_layer
        if output is not None:
            np.testing.assert_array_equal(output.data,
                                          bench.expected(previous=shown).astype(np.uint8))
            shown = (np.asarray(bench.scribbles.data).copy(), output.data != 0)
    assert shown[1][b].all() and not bench.expected()[b].all()
