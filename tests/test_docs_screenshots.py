"""docs/screenshot.png shows the app as the current code draws it.

The screenshot is re-taken by ``docs/make_screenshot.py`` (the real window, headless, on the
bundled camera sample with its seeds) into a temporary folder and compared with the checked-in
file: the same size, and the same colours at a grid of points over the whole window (toolbar,
image, result, label dock, status bar), allowing for text that differs between machines (fonts,
the timing in the status bar). A change to the app's look fails here until the screenshot is
re-taken: ``python docs/make_screenshot.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PyQt6.QtWidgets", reason="the desktop app needs PyQt6 (graphcut[gui])")
from PIL import Image  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOT = ROOT / "docs" / "screenshot.png"
GRID = (24, 32)             # sample points down and across the window
TOLERANCE = 48              # per channel, 0..255: anti-aliasing and font differences
REQUIRED_SHARE = 0.9        # of the sample points that must match


def _rgb(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"), dtype=np.int16)


def sample_points(shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of a regular grid of points inside an image of ``shape``."""
    rows = np.linspace(0, shape[0] - 1, GRID[0] + 2)[1:-1].round().astype(int)
    cols = np.linspace(0, shape[1] - 1, GRID[1] + 2)[1:-1].round().astype(int)
    return np.meshgrid(rows, cols, indexing="ij")


def matching_share(expected: np.ndarray, actual: np.ndarray) -> float:
    """The share of the grid's points where every channel differs by at most TOLERANCE."""
    rows, cols = sample_points(expected.shape[:2])
    difference = np.abs(expected[rows, cols] - actual[rows, cols]).max(axis=-1)
    return float((difference <= TOLERANCE).mean())


def test_matching_share_tells_screenshots_apart():
    window = np.zeros((80, 120, 3), np.int16)
    window[20:60, 30:90] = (40, 160, 90)            # a "result" fill
    moved = np.zeros_like(window)
    moved[20:60, 50:110] = (40, 160, 90)            # the same, drawn elsewhere
    assert matching_share(window, window + 20) == 1.0
    assert matching_share(window, moved) < REQUIRED_SHARE


@pytest.mark.slow
def test_screenshot_is_up_to_date(tmp_path):
    output = tmp_path / "screenshot.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    run = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "make_screenshot.py"),
         str(ROOT / "samples/images/camera.png"), str(ROOT / "samples/seeds/camera.png"),
         str(output)], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    expected, actual = _rgb(SCREENSHOT), _rgb(output)
    assert actual.shape == expected.shape, (
        f"the app's window is now {actual.shape[1]}x{actual.shape[0]}, docs/screenshot.png "
        f"{expected.shape[1]}x{expected.shape[0]}: run python docs/make_screenshot.py")
    share = matching_share(expected, actual)
    assert share >= REQUIRED_SHARE, (
        f"docs/screenshot.png is out of date: only {share:.0%} of {GRID[0] * GRID[1]} sample "
        "points match the app as it draws now; run python docs/make_screenshot.py")
