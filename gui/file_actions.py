"""Opening and saving files for the main window: :class:`FileActions`.

Rules kept here:

- an image is read, checked and made ready to show (memory checked first, then its screen
  layers and seed canvas built) before the user is asked about unsaved seeds, so a broken or
  too large file never costs them their seeds, and the old document stays until the new one
  is ready;
- images above the *image size limit* (Pillow's decompression-bomb limit by default; File >
  Image size limit or ``graphcut gui --max-pixels``) are refused with a message naming the
  setting;
- a multi-page file (TIFF stack, animated GIF) opens its first page, and the app says so;
- masks, label images and seed label images are written losslessly (PNG or TIFF); other
  suffixes are refused;
- saved seeds get their settings (lambda unless it follows the model's default, appearance
  model, clean-up, box or lasso, the label list) in a JSON file of the same name
  (``graphcut.segmentation.settings_path``), which ``graphcut segment`` / ``batch`` read,
  and Load seeds reads back; the two are written as a pair (``seed_files.py``): both or
  neither;
- saving the mask or overlay while a segmentation runs waits for it (with a progress dialog
  the user may cancel), so the file is the result of the seeds on screen.
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
from graphcut.segmentation import allowed_region, load_for_seeds, write_result

from .document import Document
from .options import SegmentOptions
from .prepare import prepare_image
from .seed_files import save_seed_pair

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


class FileActions:
    """Open images and seeds, save masks, overlays and seeds of ``document`` (module doc)."""

    def __init__(self, window, document: Document, max_pixels: int | None = None):
        self.window, self.document = window, document
        self._max_pixels: int | None = None
        self.set_max_pixels(max_pixels)

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
        """Open an image file; on failure show an error and keep the current document.

        The file is read, its memory checked and its screen layers built before unsaved
        seeds are asked about. Returns whether the image was opened.
        """
        window, path = self.window, Path(path)
        try:
            with _read_warnings() as warnings:
                image = graphcut.read_image(path, max_pixels=self._max_pixels)
            prepared = prepare_image(image, path)
        except ImageTooLargeError as error:
            window.show_error("Image too large", self._too_large_text(path, error))
            return False
        except MemoryError as error:
            window.show_error("Not enough memory", f"Cannot open {path}:\n{error}\n\nThe image "
                              "that is open stays open, with its seeds.")
            return False
        except (OSError, ValueError, TypeError) as error:
            window.show_error("Cannot open image", f"Cannot open {path}:\n{error}")
            return False
        if not window._may_discard_seeds():
            return False
        window._show_document(prepared)
        notes = [record.getMessage() for record in warnings]
        if notes:
            window._size_label.setText(f"{window._size_label.text()}, first page only")
            window.statusBar().showMessage(notes[0], 15000)
            window.show_message("Only the first page was opened",
                                "\n".join(notes) + "\n\nThe app segments single images: the "
                                "other pages are not shown, segmented or saved.")
        return True

    def load_seeds(self, path) -> bool:
        """Replace the seeds with those of a label or stroke PNG (undoable), and the label
        list, λ and options with those of its settings JSON, when there is one.

        On failure (unreadable file, size differs from the image, ...) show an error and keep
        the current seeds. Returns whether the seeds were loaded.
        """
        window, document = self.window, self.document
        if document.image is None:
            window.show_error("Cannot load seeds", "Open an image first, then load its seeds.")
            return False
        path = Path(path)
        try:
            labels = graphcut.read_seeds(path, shape=document.image.shape[:2],
                                         require_both=False, multi=True)
            settings = load_for_seeds(path)
            options = SegmentOptions.from_settings(settings, document.options)
            allowed_region(labels.shape, box=options.box, lasso=options.lasso)
        except (OSError, ValueError, TypeError, MemoryError) as error:
            window.show_error("Cannot load seeds", f"Cannot load seeds from {path}:\n{error}")
            return False
        document.labels.reset()
        document.labels.load_settings(settings.get("labels"))
        window.tools.reset_labels()
        window.set_cleanup(options.cleans_up)
        window.set_model(options.model)
        if settings.get("lam") is not None:
            window.set_lam(settings["lam"])
        elif settings:  # a settings file without lam: the model's default, as in the CLI
            window.tools.reset_lam()
        window.painting.replace(labels, (options.box, options.lasso))
        document.mark_saved(path)
        window._show_modified()
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
        return self._write("mask", path, lambda: graphcut.write_mask(
            path, mask, inputs=self.document.inputs()))

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
        document = self.document
        labels = document.result_labels

        def write():
            rgb = composite_result(self.window.view.image_layer.array, mask,
                                   self.window.result_style(), labels,
                                   None if labels is None else document.labels.result_colours())
            atomic_save(Image.fromarray(rgb), path, inputs=document.inputs())

        return self._write("overlay", path, write)

    def save_labels(self, path) -> bool:
        """Write the result as a label image, PNG or TIFF (uint8: 0 background, each object
        its seed value 1, 3, 4, ...; one object: 0 / 1), for the seeds on screen (waits as
        :meth:`save_mask` does). Returns success."""
        if not self._check_suffix(path, "label image"):
            return False
        if self._current_mask("label image") is None:
            return False
        labels = self.document.result_label_image()
        return self._write("label image", path, lambda: write_result(
            path, labels, inputs=self.document.inputs()))

    def save_seeds(self, path) -> bool:
        """Write the seeds as a label image, PNG or TIFF (0 none, 1 foreground, 2 background,
        3, 4, ... further objects), and next to it (same name, ``.json``) the settings that
        segment them as the window does: both files or neither (a failure leaves the
        previous pair as it was). Returns success."""
        window, document = self.window, self.document
        if document.canvas is None:
            window.show_error("Nothing to save", "Open an image and paint seeds first.")
            return False
        if not self._check_suffix(path, "seed label image"):
            return False
        inputs = tuple(p for p in (document.path,) if p is not None)
        labels = document.canvas.labels.copy()
        state = document.canvas.state
        settings = document.seed_settings()
        if not self._write("seeds", path, lambda: save_seed_pair(path, labels, settings,
                                                                  inputs=inputs)):
            return False
        if document.canvas.state == state:
            document.mark_saved(path)
        window._show_modified()
        return True

    def wait_for_result(self, what: str = "result") -> bool:
        """Wait until the mask on screen is the segmentation of the seeds on screen.

        Starts a segmentation that is only scheduled (after a λ change) at once. A wait
        longer than :data:`SAVE_PROGRESS_DELAY_MS` shows a progress dialog, window-modal (no
        stroke can change the seeds meanwhile), whose Cancel gives up. Returns False when
        cancelled.
        """
        window, live = self.window, self.window.live
        if not live.is_busy():
            return True
        if live.lam_timer.isActive():
            live.request()
        dialog = QProgressDialog(f"Segmenting the current seeds before saving the {what}…",
                                 "Cancel", 0, 0, window)
        dialog.setWindowTitle(f"Saving the {what}")
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        dialog.setMinimumDuration(24 * 3600 * 1000)  # shown by our timer, not Qt's
        loop = QEventLoop()
        show = QTimer(singleShot=True, interval=SAVE_PROGRESS_DELAY_MS)
        show.timeout.connect(dialog.show)
        poll = QTimer(interval=_POLL_MS)
        poll.timeout.connect(lambda: None if live.is_busy() else loop.quit())
        dialog.canceled.connect(loop.quit)
        show.start()
        poll.start()
        try:
            if live.is_busy():
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
            self.window.statusBar().showMessage(f"The {what} was not saved (cancelled while "
                                                "segmenting)", 8000)
            return None
        if self.document.mask is None:
            self.window.show_error("Nothing to save", "There is no segmentation of the current "
                                   "seeds: paint foreground and background seeds first.")
            return None
        return self.document.mask

    def _check_suffix(self, path, what: str) -> bool:
        try:
            check_lossless_suffix(path, what)
        except ValueError as error:
            self.window.show_error(f"Cannot save the {what}", str(error))
            return False
        return True

    def _too_large_text(self, path: Path, error: ImageTooLargeError) -> str:
        size = (f"{error.pixels / 1e6:.1f} million pixels" if error.pixels is not None
                else "far more pixels than that")
        return (f"{path.name} has {size}, more than the image size limit of "
                f"{error.limit / 1e6:.1f} million (a guard against decompression bombs: small "
                "files that decode to huge images).\n\nIf the image is genuine, raise the limit "
                "with File > Image size limit… and open it again.")

    def _write(self, what: str, path, write) -> bool:
        try:
            write()
        except (OSError, ValueError, TypeError, MemoryError) as error:
            self.window.show_error(f"Cannot save the {what}", str(error) or type(error).__name__)
            return False
        self.window.statusBar().showMessage(f"Saved the {what} to {path}", 5000)
        return True

    # ----- dialogs ----------------------------------------------------------------------------
    def open_image_dialog(self) -> None:
        """Ask for an image file (File > Open) and open it; nothing happens on cancel."""
        patterns = " ".join(f"*{suffix}" for suffix in IMAGE_SUFFIXES)
        folder = self.document.path
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Open image", str(folder.parent) if folder else "",
            f"Images ({patterns});;All files (*)")
        if path:
            self.open_image(path)

    def load_seeds_dialog(self) -> None:
        """Ask for a seed file (PNG, label or stroke form) and load it; nothing on cancel."""
        path, _ = QFileDialog.getOpenFileName(self.window, "Load seeds",
                                              self.document.default_seeds_path(),
                                              "PNG images (*.png);;All files (*)")
        if path:
            self.load_seeds(path)

    def _save_dialog(self, title: str, default: str, filters: str = "PNG images (*.png)") -> str:
        path, _ = QFileDialog.getSaveFileName(self.window, title, default, filters)
        if path and not Path(path).suffix:
            path += ".png"
        return path

    def save_mask_dialog(self) -> None:
        """Ask for a lossless (PNG or TIFF) file name and save the mask there."""
        path = self._save_dialog("Save mask (lossless: PNG or TIFF)",
                                 self.document.default_path("mask"), LOSSLESS_FILTER)
        if path:
            self.save_mask(path)

    def save_overlay_dialog(self) -> None:
        """Ask for a file name and save the image with the result tinted and outlined."""
        path = self._save_dialog("Save overlay", self.document.default_path("overlay"))
        if path:
            self.save_overlay(path)

    def save_labels_dialog(self) -> None:
        """Ask for a lossless (PNG or TIFF) file name and save the label image there."""
        path = self._save_dialog("Save labels (lossless: PNG or TIFF)",
                                 self.document.default_path("labels"), LOSSLESS_FILTER)
        if path:
            self.save_labels(path)

    def save_seeds_dialog(self) -> bool:
        """Ask for a lossless file name and save the seeds (and their settings JSON).

        Returns
        -------
        bool
            True when the seeds were saved, False on cancel or failure.
        """
        path = self._save_dialog("Save seeds (lossless: PNG or TIFF)",
                                 self.document.default_seeds_path(), LOSSLESS_FILTER)
        return bool(path) and self.save_seeds(path)

    def max_pixels_dialog(self) -> None:
        """Ask for the largest image to open, in millions of pixels (width × height);
        larger files are refused as possible decompression bombs.
        """
        megapixels, ok = QInputDialog.getDouble(
            self.window, "Image size limit",
            "Largest image to open, in millions of pixels (width × height).\nLarger files are "
            "refused as possible decompression bombs\n(small files that decode to huge "
            f"images). Default: {default_max_pixels() / 1e6:.1f}.",
            self.max_pixels() / 1e6, 0.001, 1e6, 3)
        if ok:
            self.set_max_pixels(max(1, round(megapixels * 1e6)))
            self.window.statusBar().showMessage(
                f"Image size limit: {self.max_pixels() / 1e6:.1f} million pixels", 5000)


def local_files(mime) -> list[str]:
    """The local files of a drag's MIME data (empty when there are none)."""
    if not mime.hasUrls():
        return []
    return [url.toLocalFile() for url in mime.urls() if url.isLocalFile()]


__all__ = ["FileActions", "SAVE_PROGRESS_DELAY_MS", "local_files"]
