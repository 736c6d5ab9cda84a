"""Opening and saving files for the main window: :class:`FileOperations`, a mixin of
:class:`~graphcut.gui.window.MainWindow`.

Rules kept here:

- an image is read and checked before the user is asked about unsaved seeds, so a broken file
  never costs them their seeds;
- images above the *image size limit* (Pillow's decompression-bomb limit by default; File >
  Image size limit or ``graphcut gui --max-pixels``) are refused with a message naming the
  setting;
- a multi-page file (TIFF stack, animated GIF) opens its first page, and the app says so;
- masks, label images and seed label images are written losslessly (PNG or TIFF); other
  suffixes are refused;
- saved seeds get their settings (lambda, colour model, clean-up, box or lasso, the label
  list) in a JSON file of the same name (``graphcut.segmentation.settings_path``), which
  ``graphcut segment`` / ``batch`` read, and Load seeds reads back;
- saving the mask or overlay while a segmentation runs waits for it (with a progress dialog
  the user may cancel), so the file is the result of the seeds on screen.

The mixin uses the window's document state (``_image``, ``_canvas``, ``_mask``, paths) and
its ``_set_image`` / ``_replace_seeds`` / ``is_busy`` / messages.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

import numpy as np
from PyQt6.QtCore import QEventLoop, QTimer, Qt
from PyQt6.QtWidgets import QFileDialog, QInputDialog, QProgressDialog

import graphcut
from graphcut.io import (IMAGE_SUFFIXES, ImageTooLargeError, check_lossless_suffix,
                              default_max_pixels)

from graphcut.segmentation import (allowed_region, load_for_seeds, settings_path,
                                   write_result, write_settings)

from .display import to_display_rgba
from .options import SegmentOptions

SAVE_PROGRESS_DELAY_MS = 300  # a save that waits longer than this shows a progress dialog
_POLL_MS = 20

LOSSLESS_FILTER = "PNG images (*.png);;TIFF images (*.tif *.tiff)"


class _Records(logging.Handler):
    """Keeps the log records it is given (the warnings of one file read)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextlib.contextmanager
def _read_warnings():
    """Collect the warnings ``graphcut.imageio`` logs while a file is read."""
    handler, logger = _Records(), logging.getLogger("graphcut.imageio")
    logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)


class FileOperations:
    """Open images and seeds, save masks, overlays and seeds (see the module doc)."""

    _max_pixels: int | None = None

    # ----- settings ---------------------------------------------------------------------------
    def max_pixels(self) -> int:
        """The image size limit: the most pixels (width × height) an image may have."""
        return default_max_pixels() if self._max_pixels is None else self._max_pixels

    def set_max_pixels(self, pixels: int | None) -> None:
        """Set the image size limit (None: Pillow's ``Image.MAX_IMAGE_PIXELS``)."""
        if pixels is not None and int(pixels) < 1:
            raise ValueError(f"the image size limit must be at least 1 pixel, got {pixels}")
        self._max_pixels = None if pixels is None else int(pixels)

    # ----- scripting surface ------------------------------------------------------------------
    def open_image(self, path) -> bool:
        """Open an image file; on failure show an error and keep the current image.

        The file is read before unsaved seeds are asked about. Returns whether the image was
        opened.
        """
        path = Path(path)
        try:
            with _read_warnings() as warnings:
                image = graphcut.read_image(path, max_pixels=self._max_pixels)
            if image.ndim not in (2, 3):
                raise ValueError(f"unsupported image shape {image.shape}")
            rgba = to_display_rgba(image)
        except ImageTooLargeError as error:
            self.show_error("Image too large", self._too_large_text(path, error))
            return False
        except (OSError, ValueError, TypeError, MemoryError) as error:
            self.show_error("Cannot open image", f"Cannot open {path}:\n{error}")
            return False
        if not self._may_discard_seeds():
            return False
        self._set_image(image, path, rgba)
        notes = [record.getMessage() for record in warnings]
        if notes:
            self._size_label.setText(f"{self._size_label.text()}, first page only")
            self.statusBar().showMessage(notes[0], 15000)
            self.show_message("Only the first page was opened",
                              "\n".join(notes) + "\n\nThe app segments single images: the "
                              "other pages are not shown, segmented or saved.")
        return True

    def load_seeds(self, path) -> bool:
        """Replace the seeds with those of a label or stroke PNG (undoable).

        On failure (unreadable file, size differs from the image, ...) show an error and keep
        the current seeds. Returns whether the seeds were loaded.
        """
        if self._image is None:
            self.show_error("Cannot load seeds", "Open an image first, then load its seeds.")
            return False
        path = Path(path)
        try:
            labels = graphcut.read_seeds(path, shape=self._image.shape[:2], require_both=False,
                                         multi=True)
            settings = load_for_seeds(path)
            options = SegmentOptions.from_settings(settings, self._options)
            allowed_region(labels.shape, box=options.box, lasso=options.lasso)
        except (OSError, ValueError, TypeError) as error:
            self.show_error("Cannot load seeds", f"Cannot load seeds from {path}:\n{error}")
            return False
        self._labels.load_settings(settings.get("labels"))
        self.label_panel.refresh()
        self._on_labels_changed("look")
        if settings.get("lam") is not None:
            self.set_lam(settings["lam"])
        self.set_cleanup(options.cleans_up)
        self.set_model(options.model)
        self._replace_seeds(labels, path, (options.box, options.lasso))
        return True

    def save_mask(self, path) -> bool:
        """Write the mask of the seeds on screen (0/255, PNG or TIFF); waits for a running
        segmentation first (see :meth:`wait_for_result`). On failure show an error. Returns
        success."""
        if not self._check_suffix(path, "mask"):
            return False
        mask = self._current_mask("mask")
        if mask is None:
            return False
        return self._write("mask", path, lambda: graphcut.write_mask(path, mask,
                                                                     inputs=self._inputs()))

    def save_overlay(self, path) -> bool:
        """Write the image with the result drawn over it as the screen shows it (the fill in
        its colour at the *Opacity* slider's strength, the outline in its colour, as wide in
        image pixels as on screen at 100 % zoom; RGB PNG, seeds not drawn), for the seeds on
        screen (waits as :meth:`save_mask` does). Returns success."""
        mask = self._current_mask("overlay")
        if mask is None:
            return False
        from PIL import Image

        from graphcut.io import atomic_save

        from .overlay import composite_result
        labels = self._result_labels
        rgb = composite_result(self.view.image_layer.array, mask, self.result_style(), labels,
                               None if labels is None else self._labels.result_colours())
        return self._write("overlay", path, lambda: atomic_save(Image.fromarray(rgb), path,
                                                                inputs=self._inputs()))

    def save_labels(self, path) -> bool:
        """Write the result as a label image, PNG or TIFF (uint8: 0 background, each object
        its seed value 1, 3, 4, ...; one object: 0 / 1), for the seeds on screen (waits as
        :meth:`save_mask` does). Returns success."""
        if not self._check_suffix(path, "label image"):
            return False
        if self._current_mask("label image") is None:
            return False
        labels = self.result_labels()
        return self._write("label image", path, lambda: write_result(path, labels,
                                                                     inputs=self._inputs()))

    def save_seeds(self, path) -> bool:
        """Write the seeds as a label image, PNG or TIFF (0 none, 1 foreground, 2 background,
        3, 4, ... further objects), and next to it (same name, ``.json``) the settings that
        segment them as the window does. Returns success."""
        if self._canvas is None:
            self.show_error("Nothing to save", "Open an image and paint seeds first.")
            return False
        if not self._check_suffix(path, "seed label image"):
            return False
        inputs = tuple(p for p in (self._image_path,) if p is not None)
        labels = self._canvas.labels.copy()
        settings = {**self._options.settings(self.lam()), "labels": self._labels.to_settings()}

        def write():
            graphcut.write_seeds(path, labels, inputs=inputs)
            write_settings(settings_path(path), settings, inputs=inputs)

        if self._write("seeds", path, write):
            self._seeds_path = Path(path)
            self._set_seeds_dirty(False)
            return True
        return False

    def wait_for_result(self, what: str = "result") -> bool:
        """Wait until the mask on screen is the segmentation of the seeds on screen.

        Starts a segmentation that is only scheduled (after a λ change) at once. A wait
        longer than :data:`SAVE_PROGRESS_DELAY_MS` shows a progress dialog, window-modal (no
        stroke can change the seeds meanwhile), whose Cancel gives up. Returns False when
        cancelled.
        """
        if not self.is_busy():
            return True
        if self._lam_timer.isActive():
            self._request_segmentation()
        dialog = QProgressDialog(f"Segmenting the current seeds before saving the {what}…",
                                 "Cancel", 0, 0, self)
        dialog.setWindowTitle(f"Saving the {what}")
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        dialog.setMinimumDuration(24 * 3600 * 1000)  # shown by our timer, not Qt's
        loop = QEventLoop()
        show = QTimer(singleShot=True, interval=SAVE_PROGRESS_DELAY_MS)
        show.timeout.connect(dialog.show)
        poll = QTimer(interval=_POLL_MS)
        poll.timeout.connect(lambda: None if self.is_busy() else loop.quit())
        dialog.canceled.connect(loop.quit)
        show.start()
        poll.start()
        try:
            if self.is_busy():
                loop.exec()
            cancelled = dialog.wasCanceled()
        finally:
            show.stop()
            poll.stop()
            dialog.canceled.disconnect(loop.quit)
            dialog.close()
            dialog.deleteLater()
        return not cancelled

    # ----- helpers ----------------------------------------------------------------------------
    def _current_mask(self, what: str) -> np.ndarray | None:
        """The mask of the seeds on screen, after waiting for it; None (and a message) when
        there is none or the user cancelled."""
        if not self.wait_for_result(what):
            self.statusBar().showMessage(f"The {what} was not saved (cancelled while "
                                         "segmenting)", 8000)
            return None
        if self._mask is None:
            self.show_error("Nothing to save", "There is no segmentation of the current seeds: "
                            "paint foreground and background seeds first.")
            return None
        return self._mask

    def _check_suffix(self, path, what: str) -> bool:
        try:
            check_lossless_suffix(path, what)
        except ValueError as error:
            self.show_error(f"Cannot save the {what}", str(error))
            return False
        return True

    def _too_large_text(self, path: Path, error: ImageTooLargeError) -> str:
        size = (f"{error.pixels / 1e6:.1f} million pixels" if error.pixels is not None
                else "far more pixels than that")
        return (f"{path.name} has {size}, more than the image size limit of "
                f"{error.limit / 1e6:.1f} million (a guard against decompression bombs: small "
                "files that decode to huge images).\n\nIf the image is genuine, raise the limit "
                "with File > Image size limit… and open it again.")

    def _inputs(self) -> tuple:
        return tuple(p for p in (self._image_path, self._seeds_path) if p is not None)

    def _write(self, what: str, path, write) -> bool:
        try:
            write()
        except (OSError, ValueError, TypeError) as error:
            self.show_error(f"Cannot save the {what}", str(error))
            return False
        self.statusBar().showMessage(f"Saved the {what} to {path}", 5000)
        return True

    def _default_path(self, suffix: str) -> str:
        if self._image_path is None:
            return ""
        return str(self._image_path.with_name(f"{self._image_path.stem}_{suffix}.png"))

    def _default_seeds_path(self) -> str:
        if self._seeds_path is not None:
            return str(self._seeds_path)
        if self._image_path is None:
            return ""
        sibling = self._image_path.parent.parent / "seeds"
        if sibling.is_dir():
            return str(sibling / f"{self._image_path.stem}.png")
        return self._default_path("seeds")

    # ----- dialogs ----------------------------------------------------------------------------
    def _open_image_dialog(self) -> None:
        patterns = " ".join(f"*{suffix}" for suffix in IMAGE_SUFFIXES)
        path, _ = QFileDialog.getOpenFileName(
            self, "Open image", str(self._image_path.parent) if self._image_path else "",
            f"Images ({patterns});;All files (*)")
        if path:
            self.open_image(path)

    def _load_seeds_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load seeds", self._default_seeds_path(),
                                              "PNG images (*.png);;All files (*)")
        if path:
            self.load_seeds(path)

    def _save_dialog(self, title: str, default: str, filters: str = "PNG images (*.png)") -> str:
        path, _ = QFileDialog.getSaveFileName(self, title, default, filters)
        if path and not Path(path).suffix:
            path += ".png"
        return path

    def _save_mask_dialog(self) -> None:
        path = self._save_dialog("Save mask (lossless: PNG or TIFF)", self._default_path("mask"),
                                 LOSSLESS_FILTER)
        if path:
            self.save_mask(path)

    def _save_overlay_dialog(self) -> None:
        path = self._save_dialog("Save overlay", self._default_path("overlay"))
        if path:
            self.save_overlay(path)

    def _save_labels_dialog(self) -> None:
        path = self._save_dialog("Save labels (lossless: PNG or TIFF)",
                                 self._default_path("labels"), LOSSLESS_FILTER)
        if path:
            self.save_labels(path)

    def _save_seeds_dialog(self) -> bool:
        path = self._save_dialog("Save seeds (lossless: PNG or TIFF)",
                                 self._default_seeds_path(), LOSSLESS_FILTER)
        return bool(path) and self.save_seeds(path)

    def _max_pixels_dialog(self) -> None:
        megapixels, ok = QInputDialog.getDouble(
            self, "Image size limit",
            "Largest image to open, in millions of pixels (width × height).\nLarger files are "
            "refused as possible decompression bombs\n(small files that decode to huge "
            f"images). Default: {default_max_pixels() / 1e6:.1f}.",
            self.max_pixels() / 1e6, 0.001, 1e6, 3)
        if ok:
            self.set_max_pixels(max(1, round(megapixels * 1e6)))
            self.statusBar().showMessage(
                f"Image size limit: {self.max_pixels() / 1e6:.1f} million pixels", 5000)

    # ----- drag and drop ----------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:
        if _local_files(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        self.dragEnterEvent(event)

    def dropEvent(self, event) -> None:
        files = _local_files(event.mimeData())
        if not files:
            event.ignore()
            return
        event.acceptProposedAction()
        self.open_image(files[0])


def _local_files(mime) -> list[str]:
    if not mime.hasUrls():
        return []
    return [url.toLocalFile() for url in mime.urls() if url.isLocalFile()]


__all__ = ["FileOperations", "SAVE_PROGRESS_DELAY_MS"]
