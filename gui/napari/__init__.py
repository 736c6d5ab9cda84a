"""graphcut inside napari: an npe2 plugin with a dock widget that segments the object marked
by scribbles (a Labels layer: 1 = object, 2 = background) in a 2-D image, an RGB image or a
3-D volume, once or live as the user paints, through :class:`graphcut.Segmenter` (on the GPU
when there is one).

Install with ``pip install "graphcut[napari]"``; napari finds the plugin through the
``napari.manifest`` entry point (``napari.yaml`` beside this file) and lists the widget under
Plugins > Graph cut. The solver-side logic (:mod:`._controller`) has no Qt; the widget
(:mod:`._widget`) only connects it to napari's layers (qtpy / magicgui, no fixed Qt binding).
"""

__all__ = ["GraphCutWidget", "ScribbleSegmenter"]


def __getattr__(name):
    if name == "GraphCutWidget":
        from ._widget import GraphCutWidget
        return GraphCutWidget
    if name == "ScribbleSegmenter":
        from ._controller import ScribbleSegmenter
        return ScribbleSegmenter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
