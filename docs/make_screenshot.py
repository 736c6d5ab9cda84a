"""Regenerate docs/screenshot.png: the app segmenting a bundled sample, as the app draws it.

Runs headless (Qt's offscreen platform); the picture is the window's own ``grab()``.

    python docs/make_screenshot.py [IMAGE SEEDS OUTPUT]
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from graphcut.gui import MainWindow  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main(image=ROOT / "samples/images/camera.png", seeds=ROOT / "samples/seeds/camera.png",
         output=ROOT / "docs/screenshot.png") -> int:
    window = MainWindow(device="cpu")
    errors = []
    window.show_error = lambda title, text: errors.append(f"{title}: {text}")
    window.resize(1180, 820)
    window.show()
    if not (window.open_image(image) and window.load_seeds(seeds)):
        print("\n".join(errors), file=sys.stderr)
        return 1
    window.wait_until_idle(timeout=120)
    if window.mask() is None or errors:
        print("no segmentation: " + "\n".join(errors), file=sys.stderr)
        return 1
    # show the brush where a user would be painting
    view = window.view
    height, width = window.image().shape[:2]
    view._place_brush_outline(view.pixel_to_scene(height * 0.55, width * 0.62))
    view.brush_outline.setVisible(True)
    window.statusBar().showMessage("Left button: foreground · right button: background · "
                                   "wheel: zoom · F1: all controls")
    window._show_position(height * 0.55, width * 0.62)
    if not window.grab().save(str(output)):
        print(f"cannot write {output}", file=sys.stderr)
        return 1
    window._set_seeds_dirty(False)
    window.close()
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]) if len(sys.argv) > 1 else main())
