"""The graphcut desktop app (PyQt6): paint seeds, see the segmentation live.

    >>> from graphcut.gui import MainWindow     # doctest: +SKIP
    >>> w = MainWindow(device="cpu")
    >>> w.open_image("samples/images/camera.png")
    >>> w.paint_stroke([(100, 200), (120, 240)], label=1, radius=4)
    >>> w.wait_until_idle()
    >>> w.mask()

Needs the ``gui`` extra: ``pip install "graphcut[gui]"``.
"""

from .app import run
from .window import MainWindow

__all__ = ["MainWindow", "run"]
