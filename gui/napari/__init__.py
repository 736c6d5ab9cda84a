"""graphcut inside napari: an npe2 plugin with a dock widget that segments the objects marked
by scribbles (a Labels layer: 1 = object, 2 = background, 3 and up = more objects) in a 2-D
image, a colour or multichannel image or a 3-D volume, once or live as the user paints.

It uses the desktop app's segmentation controller (``graphcut.gui.controller``): solver
processes, so that the viewer never waits for a solve; previews of large images on the CPU;
the colour models, the box and the clean-up. Install with ``pip install "graphcut[napari]"``;
napari finds the plugin through the ``napari.manifest`` entry point (``napari.yaml`` beside
this file) and lists the widget under Plugins > Graph cut. :mod:`._session` binds the layers to
the controller without Qt; :mod:`._widget` is the dock widget (qtpy / magicgui, no fixed Qt
binding); :mod:`._layers` converts napari's layers.
"""

__all__ = ["GraphCutWidget", "LayerSegmentation"]


def __getattr__(name):
    if name == "GraphCutWidget":
        from ._widget import GraphCutWidget
        return GraphCutWidget
    if name == "LayerSegmentation":
        from ._session import LayerSegmentation
        return LayerSegmentation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
