"""Start the desktop app: ``graphcut gui`` calls :func:`run`."""

from __future__ import annotations

import sys

from PyQt6.QtWidgets import QApplication


def run(image=None, *, seeds=None, device: str = "auto", lam: float | None = None,
        model: str | None = None, max_pixels: int | None = None) -> int:
    """Show the main window (opening ``image`` and then ``seeds`` when given) until it closes.

    ``lam``, ``model`` and ``max_pixels``: as for :class:`~graphcut.gui.window.MainWindow`
    (``lam`` None: λ follows the model's default; ``max_pixels``: the image size limit).
    Returns the Qt event loop's exit status.
    """
    from .window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1] or ["graphcut"])
    app.setApplicationName("graphcut")
    window = MainWindow(device=device, lam=lam, model=model, max_pixels=max_pixels)
    window.show()
    if image is not None and window.open_image(image) and seeds is not None:
        window.load_seeds(seeds)
    return app.exec()
