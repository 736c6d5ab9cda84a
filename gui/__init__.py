"""The graphcut desktop app (PyQt6): paint seeds, see the segmentation live.

    >>> from graphcut.gui import MainWindow     # doctest: +SKIP
    >>> w = MainWindow(device="cpu")
    >>> w.open_image("samples/images/camera.png")
    >>> w.paint_stroke([(100, 200), (120, 240)], label=1, radius=4)
    >>> w.wait_until_idle()
    >>> w.mask()

The window (``window.py``) only wires the parts: the Qt-free document (``document.py``), the
file, seed and tool actions (``file_actions.py``, ``seed_actions.py``, ``tool_actions.py``),
the live segmentation (``live.py``, feeding the Qt-free ``controller.py`` that the napari
plugin shares) and the canvas (``view.py``).

Needs the ``gui`` extra: ``pip install "graphcut[gui]"``. Qt is imported only when
``MainWindow`` or ``run`` is first used, so the solver process (``solver_process``) stays light.
"""

__all__ = ["MainWindow", "run"]


def __getattr__(name):
    if name == "MainWindow":
        from .window import MainWindow
        return MainWindow
    if name == "run":
        from .app import run
        return run
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
