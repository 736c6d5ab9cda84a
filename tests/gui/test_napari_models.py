"""The napari widget's appearance-model choice and its lambda rule (pytest-qt, Qt's offscreen
platform, a ``ViewerModel``; solving on threads): every registered model is offered; lambda
follows the model's default until the user sets one, which then stays until the reset
button; the output with each model equals ``graphcut.segment`` with that model's default
options (the oracle: the library called with the model's name and no lam)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("napari")
pytest.importorskip("pytestqt")

import graphcut  # noqa: E402
from graphcut.models import APPEARANCE_MODELS  # noqa: E402
from synthetic import ellipse_with_arm, ellipse_with_arm_seeds  # noqa: E402

MODELS = tuple(APPEARANCE_MODELS)


@pytest.fixture
def model_viewer(qtbot):
    from napari.components import ViewerModel
    return ViewerModel()


@pytest.fixture
def widget(model_viewer, qtbot):
    from graphcut.gui.napari._widget import GraphCutWidget
    widget = GraphCutWidget(model_viewer, use_process=False)
    qtbot.addWidget(widget.native)
    widget.device_combo.value = "cpu"
    return widget


def load(widget):
    """The test image (RGB) and its seeds as the widget's image and scribbles layers."""
    image, _ = ellipse_with_arm()
    widget.viewer.add_image(image, name="image", rgb=True)
    scribbles = widget.viewer.add_labels(ellipse_with_arm_seeds(), name="scribbles")
    widget.image_combo.value = widget.viewer.layers["image"]
    widget.scribbles_combo.value = scribbles
    return image, scribbles


def segmented(widget, qtbot) -> np.ndarray:
    """Segment now and wait for the exact output."""
    number = widget.session.controller.latest if widget.session.controller else -1
    widget.segment()
    qtbot.waitUntil(lambda: widget.session.last_outcome is not None
                    and widget.session.controller.latest > number
                    and widget.session.last_outcome.factor == 1
                    and not widget.session.is_busy(), timeout=120000)
    return np.asarray(widget.session.output_layer.data)


def test_every_registered_model_is_offered_and_lam_follows_it(widget):
    offered = [choice if isinstance(choice, str) else choice[1]
               for choice in widget.model_combo.choices]
    assert tuple(offered) == MODELS and len(MODELS) >= 3
    assert all(name in widget.model_combo.tooltip for name in MODELS)
    for name in reversed(MODELS):
        widget.model_combo.value = name
        assert widget.session.options.model == name
        assert widget.lam_box.value == APPEARANCE_MODELS[name].lam
        assert widget.session.lam is None  # the library's default, unchanged
    assert not widget.lam_reset_button.enabled
    widget.lam_box.value = 7.0  # what typing does
    assert widget.session.lam == 7.0 and widget.lam_reset_button.enabled
    for name in MODELS:  # the user's value stays whatever model comes next
        widget.model_combo.value = name
        assert widget.lam_box.value == 7.0 and widget.session.lam == 7.0
    widget.model_combo.value = "learned"
    widget.lam_reset_button.native.click()  # a click
    assert widget.lam_box.value == APPEARANCE_MODELS["learned"].lam
    assert widget.session.lam is None and not widget.lam_reset_button.enabled
    widget.model_combo.value = "gmm"
    assert widget.lam_box.value == APPEARANCE_MODELS["gmm"].lam
    widget.set_lam(APPEARANCE_MODELS["gmm"].lam)  # the value shown, made the user's
    assert widget.session.lam == APPEARANCE_MODELS["gmm"].lam
    widget.model_combo.value = "learned"
    assert widget.lam_box.value == APPEARANCE_MODELS["gmm"].lam


@pytest.mark.parametrize("name", MODELS)
def test_each_model_gives_what_segment_gives_with_its_defaults(widget, qtbot, name):
    image, scribbles = load(widget)
    widget.cleanup_box.value = False  # segment's default: no clean-up
    widget.model_combo.value = name
    expected = graphcut.segment(image, scribbles.data, model=name, device="cpu")
    assert 0 < expected.sum() < expected.size
    if APPEARANCE_MODELS[name].lam != graphcut.DEFAULT_LAM:  # the widget's old lambda
        old = graphcut.segment(image, scribbles.data, model=name, lam=graphcut.DEFAULT_LAM,
                               device="cpu")
        assert (old != expected).any()
    np.testing.assert_array_equal(segmented(widget, qtbot), expected.astype(np.uint8))
    assert widget.status.value.endswith(f" · λ {APPEARANCE_MODELS[name].lam:g}")
    widget.set_lam(2.5)  # the user's lambda wins
    typed = graphcut.segment(image, scribbles.data, model=name, lam=2.5, device="cpu")
    assert (typed != expected).any()
    np.testing.assert_array_equal(segmented(widget, qtbot), typed.astype(np.uint8))
    widget.set_lam(None)  # and the reset brings the default back
    np.testing.assert_array_equal(segmented(widget, qtbot), expected.astype(np.uint8))


def test_auto_shows_the_lam_of_the_model_it_stands_for_on_the_layer(widget):
    """"auto" is the GMM on a colour or grey photograph and the learned model on a stained
    section and on grey fluorescence (graphcut.models.Auto.for_image): the λ shown follows
    the layer."""
    from micrographs import fluorescence, stained_section

    photo, _ = load(widget)
    section, _ = stained_section(seed=2)
    widget.viewer.add_image(section, name="section", rgb=True)
    widget.viewer.add_image(photo[..., 0], name="grey")
    widget.viewer.add_image(fluorescence((1,))[..., 1], name="nuclei")
    widget.model_combo.value = "auto"
    assert widget.lam_box.value == APPEARANCE_MODELS["gmm"].lam
    for name, model in (("section", "learned"), ("grey", "gmm"), ("nuclei", "learned"),
                        ("image", "gmm")):
        widget.image_combo.value = widget.viewer.layers[name]
        assert widget.lam_box.value == APPEARANCE_MODELS[model].lam, name
