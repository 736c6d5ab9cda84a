"""The app's files (issue #22): a too large image never costs the open document, seeds and
their settings are saved as a pair (both or neither), and the document is Qt-free."""

import errno
import json
import os
import subprocess
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

pytest.importorskip("PyQt6.QtCore", reason="the app's views need PyQt6 (graphcut[gui])")

from graphcut import BACKGROUND, FOREGROUND  # noqa: E402
from graphcut.gui import seed_files  # noqa: E402
from graphcut.gui.document import Document  # noqa: E402
from graphcut.gui.prepare import VIEW_BYTES_PER_PIXEL, open_bytes  # noqa: E402
from graphcut.segmentation import read_settings  # noqa: E402


def _seeds(shape=(20, 30)):
    labels = np.zeros(shape, np.uint8)
    labels[5, 5:10] = FOREGROUND
    labels[15, 5:25] = BACKGROUND
    return labels


def _folder_state(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture
def saved_pair(tmp_path):
    path = tmp_path / "camera.png"
    seed_files.save_seed_pair(path, _seeds(), {"lam": 12.0})
    return path


def test_the_seed_pair_is_written_together(saved_pair):
    labels = np.asarray(Image.open(saved_pair))
    np.testing.assert_array_equal(labels, _seeds())
    assert read_settings(saved_pair.with_suffix(".json"))["lam"] == 12.0
    assert sorted(p.name for p in saved_pair.parent.iterdir()) == ["camera.json", "camera.png"]


def test_a_failed_settings_write_leaves_the_previous_pair(saved_pair, monkeypatch):
    before = _folder_state(saved_pair.parent)

    def full_disk(path, settings, **kwargs):
        raise OSError(errno.ENOSPC, f"cannot write {path!r}: No space left on device")

    monkeypatch.setattr(seed_files, "write_settings", full_disk)
    labels = _seeds()
    labels[:] = BACKGROUND
    with pytest.raises(OSError, match="No space"):
        seed_files.save_seed_pair(saved_pair, labels, {"lam": 3.0})
    assert _folder_state(saved_pair.parent) == before  # no new PNG, no temporary file


def test_a_failed_image_rename_puts_the_previous_settings_back(saved_pair, monkeypatch):
    before = _folder_state(saved_pair.parent)
    replace = os.replace

    def failing_replace(source, destination):
        if str(destination) == str(saved_pair):
            raise OSError(errno.EIO, "input/output error")
        return replace(source, destination)

    monkeypatch.setattr(seed_files.os, "replace", failing_replace)
    with pytest.raises(OSError):
        seed_files.save_seed_pair(saved_pair, _seeds() * 0, {"lam": 3.0})
    assert _folder_state(saved_pair.parent) == before


def test_a_failed_first_save_leaves_no_half_pair(tmp_path, monkeypatch):
    replace = os.replace
    monkeypatch.setattr(seed_files.os, "replace", lambda s, d: (
        (_ for _ in ()).throw(OSError(errno.EIO, "io")) if str(d).endswith(".png")
        else replace(s, d)))
    with pytest.raises(OSError):
        seed_files.save_seed_pair(tmp_path / "new.png", _seeds(), {"lam": 3.0})
    assert list(tmp_path.iterdir()) == []


def test_the_seed_pair_refuses_to_replace_an_input(saved_pair):
    with pytest.raises(ValueError, match="input"):
        seed_files.save_seed_pair(saved_pair, _seeds(), {}, inputs=(saved_pair,))


def test_the_document_tracks_the_saved_state_through_undo():
    document = Document()
    image = np.zeros((20, 30, 3), np.uint8)
    document.open(image, "image.png")
    canvas = document.canvas
    assert not document.is_modified and not document.needs_saving
    canvas.begin_edit()
    canvas.set_constraint(((2, 2, 10, 10), None))  # a box alone is work to lose
    canvas.end_edit()
    assert document.is_modified and document.needs_saving
    document.mark_saved("seeds.png")
    canvas.begin_edit()
    canvas.paint((5, 5), (5, 9), FOREGROUND, 1)
    canvas.end_edit()
    assert document.is_modified
    canvas.undo()
    assert not document.is_modified
    canvas.redo()
    assert document.is_modified
    document.labels.add("cell")
    document.open(image, "other.png")
    assert len(document.labels) == 1 and document.region() == (None, None)
    assert document.seeds_path is None and not document.is_modified


def test_the_saved_state_survives_the_undo_history_limit():
    from graphcut.gui.strokes import SeedCanvas
    canvas = SeedCanvas((10, 10), max_history=3)
    saved = canvas.state
    for column in range(6):
        canvas.begin_edit()
        canvas.paint((1, column), (1, column), FOREGROUND, 0)
        canvas.end_edit()
    while canvas.undo():
        pass
    assert canvas.labels.any() and canvas.state != saved  # older edits are kept, not undone


def test_the_document_and_seed_files_need_no_qt():
    code = ("import sys; import graphcut.gui.document, graphcut.gui.seed_files; "
            "sys.exit(any(m.startswith('PyQt6') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_open_bytes_counts_the_view_and_the_conversion():
    grey16 = np.zeros((100, 200), np.uint16)
    assert open_bytes(grey16) > VIEW_BYTES_PER_PIXEL * 100 * 200 + grey16.nbytes
    rgb8 = np.zeros((100, 200, 3), np.uint8)
    assert open_bytes(rgb8) == VIEW_BYTES_PER_PIXEL * 100 * 200 + rgb8.nbytes


# ----- the window ---------------------------------------------------------------------------
pytest.importorskip("PyQt6.QtWidgets", reason="the desktop app needs PyQt6 (graphcut[gui])")
pytest.importorskip("pytestqt", reason="GUI tests need pytest-qt")

from test_gui import image_file, paint_both, window  # noqa: E402,F401


def _big_file(tmp_path):
    path = tmp_path / "big.png"
    Image.fromarray(np.full((1500, 1500), 1000, np.uint16)).save(path)
    return path


def _assert_old_document_kept(window, path, seeds, title):
    assert window.document.path == path
    np.testing.assert_array_equal(window.seeds(), seeds)
    assert window.windowTitle() == title and window.is_modified()
    assert window.view.image_layer.array.shape[:2] == (90, 120)
    assert window.questions == []  # the unsaved seeds were never put at risk


def test_too_little_memory_for_the_view_keeps_the_open_document(window, image_file, tmp_path,
                                                                 monkeypatch):
    window.open_image(image_file[0])
    paint_both(window)
    seeds, title = window.seeds(), window.windowTitle()
    big = _big_file(tmp_path)
    need = open_bytes(np.zeros((1500, 1500), np.uint16))
    monkeypatch.setenv("GRAPHCUT_MEMORY_LIMIT", str(need // 2))
    assert not window.open_image(big)
    title_shown, text = window.errors[-1]
    assert title_shown == "Not enough memory" and "big.png" in text and "stays open" in text
    _assert_old_document_kept(window, image_file[0], seeds, title)
    monkeypatch.delenv("GRAPHCUT_MEMORY_LIMIT")
    window.wait_until_idle()
    assert window.mask() is not None  # still segmenting the old image


def test_a_memory_error_while_building_the_view_keeps_the_open_document(window, image_file,
                                                                       tmp_path, monkeypatch):
    from graphcut.gui import prepare
    window.open_image(image_file[0])
    paint_both(window)
    seeds, title = window.seeds(), window.windowTitle()

    def no_memory(rgba):
        raise MemoryError("Unable to allocate 3.35 GiB for an array")

    monkeypatch.setattr(prepare.ArrayLayer, "pyramid", staticmethod(no_memory))
    assert not window.open_image(_big_file(tmp_path))
    assert window.errors[-1][0] == "Not enough memory"
    _assert_old_document_kept(window, image_file[0], seeds, title)


def test_save_seeds_failing_keeps_the_previous_pair_and_the_unsaved_mark(window, image_file,
                                                                        tmp_path, monkeypatch):
    window.open_image(image_file[0])
    paint_both(window)
    path = tmp_path / "seeds.png"
    assert window.save_seeds(path)
    before = _folder_state(tmp_path)
    window.paint_stroke([(30, 60)], FOREGROUND, 2)

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(seed_files, "write_settings", full_disk)
    assert not window.save_seeds(path)
    assert "No space" in window.errors[-1][1]
    assert _folder_state(tmp_path) == before and window.is_modified()
    saved = json.loads((tmp_path / "seeds.json").read_text())
    assert [entry["value"] for entry in saved["labels"]] == [FOREGROUND]
