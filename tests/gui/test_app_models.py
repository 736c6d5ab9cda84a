"""The desktop app's appearance-model choice and its λ rule, driven headless (Qt's offscreen
platform): every registered model is in Segment > Appearance model and reachable by keys; λ
follows the model's default until the user types one; the app's result with each model equals
``graphcut.segment`` with that model's default options (the oracle: the library called with the
model's name and no lam); settings files round-trip. CPU backend, small images."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import json  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("PyQt6.QtWidgets", reason="the desktop app needs PyQt6 (graphcut[gui])")
pytest.importorskip("pytestqt", reason="GUI tests need pytest-qt")

from PIL import Image  # noqa: E402
from PyQt6.QtCore import Qt  # noqa: E402
from PyQt6.QtGui import QActionGroup  # noqa: E402

import graphcut  # noqa: E402
from graphcut.gui.strokes import BACKGROUND, FOREGROUND  # noqa: E402
from graphcut.models import APPEARANCE_MODELS  # noqa: E402
from synthetic import ellipse_with_arm  # noqa: E402
from test_gui import make_window, window  # noqa: E402,F401
from test_gui_tools import segment_with_cli  # noqa: E402

MODELS = tuple(APPEARANCE_MODELS)
BOX = (10, 15, 82, 115)
CLEAN = dict(keep="connected", fill_holes=100)  # the app's clean-up


@pytest.fixture
def image_file(tmp_path):
    """An image where the models and lambdas give different masks (checked in the tests)."""
    image, truth = ellipse_with_arm()
    path = tmp_path / "arm.png"
    Image.fromarray(image).save(path)
    return path, image, truth


def paint(window):
    """An object stroke inside the ellipse and a background frame."""
    window.paint_stroke([(45, 40), (45, 60)], FOREGROUND, 2)
    window.paint_stroke([(3, 3), (3, 116), (86, 116), (86, 3), (3, 3)], BACKGROUND, 1)


def oracle(window, **options):
    """``graphcut.segment`` of the window's image and seeds with the model's defaults."""
    return graphcut.segment(window.image(), window.seeds(), device="cpu", **options)


def segment_menu_models(window):
    """The Segment > Appearance model submenu's checkable actions, by text."""
    segment = next(a.menu() for a in window.menuBar().actions()
                   if a.menu() is not None and a.text() == "&Segment")
    submenu = next(a.menu() for a in segment.actions() if a.menu() is not None)
    assert submenu.title().replace("&", "") == "Appearance model"
    return [a for a in submenu.actions() if a.isCheckable()]


def test_the_menu_offers_every_registered_model_and_each_sets_the_controller(window):
    listed = segment_menu_models(window)
    assert len(listed) == len(MODELS) >= 3
    assert set(listed) == set(window.model_actions.values())
    assert set(window.model_actions) == set(MODELS)
    group = listed[0].actionGroup()
    assert isinstance(group, QActionGroup) and group.isExclusive()
    assert all(action.actionGroup() is group and action.statusTip() for action in listed)
    assert all(action.toolTip() != action.text().replace("&", "") for action in listed)
    assert window.model_actions["auto"].isChecked()  # the app's default
    for name in reversed(MODELS):
        window.model_actions[name].trigger()  # what a click in the menu does
        assert window._controller.options.model == name
        assert window.segment_options()["model"] == name
        assert [a for a in listed if a.isChecked()] == [window.model_actions[name]]
        assert window.lam() == APPEARANCE_MODELS[name].lam


def test_a_model_registered_later_is_offered_with_its_docstring_and_lam(qtbot, monkeypatch):
    from graphcut.models import Histogram
    extra = type("Extra", (Histogram,), {"name": "extra", "lam": 7.0,
                                         "__doc__": "An extra model for this test."})
    monkeypatch.setitem(APPEARANCE_MODELS, "extra", extra)
    window = make_window(qtbot, monkeypatch, solver_process=False)
    action = window.model_actions["extra"]
    assert action in segment_menu_models(window) and action.text() == "extra"
    assert action.toolTip() == "An extra model for this test (default λ 7)"
    action.trigger()
    assert window.segment_options()["model"] == "extra" and window.lam() == 7.0


def test_the_window_starts_with_the_model_it_is_given(qtbot):
    from graphcut.gui import MainWindow
    window = MainWindow(device="cpu", solver_process=False, model="learned")
    qtbot.addWidget(window)
    assert window.model_actions["learned"].isChecked()
    assert window.segment_options()["model"] == "learned" and window._controller.options.model \
        == "learned"
    assert window.lam() == APPEARANCE_MODELS["learned"].lam
    with pytest.raises(ValueError, match="forest"):
        MainWindow(device="cpu", solver_process=False, model="forest")


def test_the_m_key_cycles_through_every_model(qtbot, window, image_file):
    window.open_image(image_file[0])
    window.activateWindow()
    window.view.setFocus()
    qtbot.waitUntil(window.view.hasFocus, timeout=2000)
    seen = [window.segment_options()["model"]]
    for _ in MODELS:
        qtbot.keyClick(window.view, Qt.Key.Key_M)
        seen.append(window.segment_options()["model"])
    assert sorted(seen[:-1]) == sorted(MODELS) and seen[-1] == seen[0]
    assert window.errors == []


def test_lam_follows_the_model_until_typed_then_stays_until_reset(qtbot, window, image_file):
    window.open_image(image_file[0])
    for name in MODELS:
        window.set_model(name)
        assert window.lam() == APPEARANCE_MODELS[name].lam
        assert window.document.lam.follows_model
        assert window.segment_options()["lam"] == APPEARANCE_MODELS[name].lam
    assert not window.reset_lam_action.isEnabled()
    window.set_model("gmm")
    box = window._lam_box
    window.activateWindow()
    box.setFocus()
    qtbot.waitUntil(box.hasFocus, timeout=2000)
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), "7")
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)
    assert window.lam() == 7.0 and window.segment_options()["lam"] == 7.0
    assert window.reset_lam_action.isEnabled()
    for name in MODELS:  # a typed value stays whatever model comes next
        window.set_model(name)
        assert window.lam() == 7.0 and window.segment_options()["lam"] == 7.0
    window.set_model("learned")
    window.reset_lam_action.trigger()
    assert window.lam() == APPEARANCE_MODELS["learned"].lam
    assert window.document.lam.follows_model and not window.reset_lam_action.isEnabled()
    window.set_model("gmm")
    assert window.lam() == APPEARANCE_MODELS["gmm"].lam
    # Escape after typing restores the value and that it followed the model
    box.setFocus()
    qtbot.waitUntil(box.hasFocus, timeout=2000)
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), "3")
    assert window.segment_options()["lam"] == 3.0  # typing counts at once
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Escape)
    assert window.lam() == APPEARANCE_MODELS["gmm"].lam
    assert window.document.lam.follows_model
    window.set_model("histogram")
    assert window.lam() == APPEARANCE_MODELS["histogram"].lam
    window.set_lam(window.lam())  # the value shown, made the user's
    assert window.segment_options()["lam"] == APPEARANCE_MODELS["histogram"].lam
    window.set_model("learned")
    assert window.lam() == APPEARANCE_MODELS["histogram"].lam
    window.wait_until_idle(timeout=60)
    assert window.errors == []


@pytest.mark.parametrize("name", MODELS)
def test_each_model_gives_what_segment_gives_with_its_defaults(window, image_file, name):
    window.open_image(image_file[0])
    window.set_cleanup(False)  # segment's default: no clean-up
    window.set_model(name)
    paint(window)
    window.wait_until_idle(timeout=120)
    expected = oracle(window, model=name)
    assert 0 < expected.sum() < expected.size
    np.testing.assert_array_equal(window.mask(), expected)
    if APPEARANCE_MODELS[name].lam != graphcut.DEFAULT_LAM:  # the app's old lambda
        assert (oracle(window, model=name, lam=graphcut.DEFAULT_LAM) != expected).any()
    # with a box: the model's own lam (for the histogram not segment's automatic choice)
    own = APPEARANCE_MODELS[name].lam
    window.set_region(box=BOX)
    window.wait_until_idle(timeout=120)
    expected = oracle(window, model=name, box=BOX, lam=own)
    np.testing.assert_array_equal(window.mask(), expected)
    if name != "histogram":  # no automatic lam: the model's default is its own lam
        np.testing.assert_array_equal(expected, oracle(window, model=name, box=BOX))
    # and the clean-up
    window.set_cleanup(True)
    window.wait_until_idle(timeout=120)
    np.testing.assert_array_equal(window.mask(),
                                  oracle(window, model=name, box=BOX, lam=own, **CLEAN))
    # a typed lam wins
    window.set_lam(2.5)
    window.wait_until_idle(timeout=120)
    typed = oracle(window, model=name, lam=2.5, box=BOX, **CLEAN)
    np.testing.assert_array_equal(window.mask(), typed)
    assert (typed != oracle(window, model=name, box=BOX, lam=own, **CLEAN)).any()
    assert window.errors == []


def test_the_histogram_with_a_box_keeps_its_own_lam_incremental(window, image_file):
    """With a box, segment() chooses the histogram's lam itself (10 or 20, two cuts from
    scratch); the app keeps the model's lam 10 so that box edits stay incremental: its mask is
    segment(lam=10)'s, also after a typed lam and a reset."""
    window.open_image(image_file[0])
    window.model_actions["histogram"].trigger()
    window.set_region(box=BOX)
    paint(window)
    window.set_cleanup(False)
    window.wait_until_idle(timeout=60)
    options = dict(model="histogram", box=BOX)
    own = oracle(window, **options, lam=APPEARANCE_MODELS["histogram"].lam)
    np.testing.assert_array_equal(window.mask(), own)
    assert (oracle(window, **options) != own).any()  # segment's automatic lam: another mask
    window.set_lam(40.0)
    window.wait_until_idle(timeout=60)
    np.testing.assert_array_equal(window.mask(), oracle(window, **options, lam=40.0))
    window.set_lam(None)
    window.wait_until_idle(timeout=60)
    np.testing.assert_array_equal(window.mask(), own)
    assert window.errors == []


def test_settings_round_trip_the_model_and_the_lam_rule(window, image_file, tmp_path):
    path = image_file[0]
    window.open_image(path)
    window.set_model("learned")
    paint(window)
    window.wait_until_idle(timeout=60)
    learned_mask = window.mask()
    assert window.save_seeds(tmp_path / "learned.png")
    settings = json.loads((tmp_path / "learned.json").read_text())
    assert settings["model"] == "learned" and "lam" not in settings  # the model's default
    cli = segment_with_cli(path, tmp_path / "learned.png", tmp_path / "cli.png")
    np.testing.assert_array_equal(cli > 0, learned_mask)  # the CLI reads it as the app did
    window.set_model("gmm")
    window.set_lam(12.0)
    window.wait_until_idle(timeout=60)
    assert window.save_seeds(tmp_path / "gmm12.png")
    assert json.loads((tmp_path / "gmm12.json").read_text())["lam"] == 12.0

    # a file naming learned selects it, and its lam follows the model again
    assert window.load_seeds(tmp_path / "learned.png")
    assert window.model_actions["learned"].isChecked()
    assert window.lam() == APPEARANCE_MODELS["learned"].lam
    assert window.document.lam.follows_model
    window.wait_until_idle(timeout=60)
    np.testing.assert_array_equal(window.mask(), learned_mask)
    # a file naming lam keeps it, as the user's
    assert window.load_seeds(tmp_path / "gmm12.png")
    assert window.model_actions["gmm"].isChecked() and window.lam() == 12.0
    window.wait_until_idle(timeout=60)
    np.testing.assert_array_equal(window.mask(), oracle(window, model="gmm", lam=12.0, **CLEAN))
    # an older app's file (its lam always written) reproduces what it reproduced
    old = {"model": "histogram", "lam": 10.0, "keep": "connected", "fill_holes": 100,
           "box": list(BOX), "lasso": None}
    (tmp_path / "gmm12.json").write_text(json.dumps(old))
    assert window.load_seeds(tmp_path / "gmm12.png")
    assert window.model_actions["histogram"].isChecked()
    assert window.segment_options()["lam"] == 10.0
    window.wait_until_idle(timeout=60)
    np.testing.assert_array_equal(window.mask(), oracle(
        window, model="histogram", lam=10.0, box=BOX, **CLEAN))
    assert window.errors == []
