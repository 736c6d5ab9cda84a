"""Regenerate docs/napari_screenshot.png: napari with the graphcut dock widget segmenting the
sample volume (samples/volume/), viewed in 3-D with the mask over the volume.

napari's canvas needs OpenGL: run this where napari can open a window, or headless under a
virtual display, e.g.
``xvfb-run -s "-screen 0 1600x1000x24" python docs/make_napari_screenshot.py``.

    python docs/make_napari_screenshot.py [OUTPUT]
"""

import sys
from pathlib import Path

import napari
from qtpy.QtWidgets import QApplication

import graphcut

ROOT = Path(__file__).resolve().parent.parent


def main(output=ROOT / "docs" / "napari_screenshot.png") -> int:
    volume = graphcut.read_volume(ROOT / "samples" / "volume" / "cells.tif")
    seeds = graphcut.read_volume_seeds(ROOT / "samples" / "volume" / "cells_seeds.tif",
                                       volume.shape)
    viewer = napari.Viewer(title="graphcut in napari", show=True)
    viewer.window.resize(1400, 860)
    viewer.add_image(volume, name="cells", colormap="gray")
    viewer.add_labels(seeds, name="scribbles")
    dock, widget = viewer.window.add_plugin_dock_widget("graphcut", "Graph cut segmentation")
    from qtpy.QtCore import Qt
    viewer.window._qt_window.resizeDocks([dock], [360], Qt.Horizontal)
    widget.device_combo.value = "auto"
    widget.channels_combo.value = "none"  # a grey volume, not channels
    widget.segment()
    app = QApplication.instance()
    session = widget.session
    while session.last_error is None and (session.last_outcome is None or session.is_busy()):
        app.processEvents()
    if session.last_error:
        print(widget.status.value, file=sys.stderr)
        return 1
    viewer.dims.ndisplay = 3
    viewer.camera.angles = (-10, 30, 75)
    viewer.camera.zoom = 7
    viewer.layers["cells"].opacity = 0.6
    viewer.layers.selection.active = viewer.layers["scribbles"]
    for _ in range(20):
        app.processEvents()
    viewer.screenshot(str(output), canvas_only=False, flash=False)
    print(f"wrote {output}: {widget.status.value}")
    viewer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
