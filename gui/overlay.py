"""Screen layers drawn over the image: seed colours, the object fill and its outline. No Qt.

- :func:`seed_layer`: RGBA colours of the seed labels, at image resolution.
- :func:`render_result`: the object's fill and outline for one rectangle of the screen, at
  screen resolution, so that drawing costs what is on screen, not the image's size, and the
  outline has the same width in screen pixels at every zoom.
- :func:`render_labels`: the same for a label image of several objects: each label filled
  and outlined in its own colour (``labels.py``), hidden labels not drawn.
- :func:`composite_result`: the image with the fill and outline as the screen shows them (the
  same colours and opacity; the outline as wide in image pixels as on screen at 100 %), for
  File > Save overlay.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Seed colours match the stroke form of seed files (DESIGN.md): red = foreground, blue = background.
SEED_COLOURS = np.array([[0, 0, 0, 0], [255, 0, 0, 255], [0, 64, 255, 255]], np.uint8)
FILL_COLOUR = (0, 200, 120)
OUTLINE_COLOUR = (255, 230, 0)
OUTLINE_WIDTH = 2  # screen pixels


@dataclass(frozen=True)
class ResultStyle:
    """How the result is drawn: fill colour and opacity (0..1), outline colour and width
    (screen pixels; 0 = no outline). Colours are (r, g, b) in 0..255."""

    fill: tuple = FILL_COLOUR
    opacity: float = 0.45
    outline: tuple = OUTLINE_COLOUR
    outline_width: int = OUTLINE_WIDTH

    def lookup(self) -> np.ndarray:
        """Premultiplied RGBA colours (uint32, bytes in memory order) for the codes 0 nothing,
        1 fill, 2 and 3 outline."""
        alpha = round(255 * min(max(self.opacity, 0.0), 1.0))
        table = np.zeros((4, 4), np.uint8)
        table[1, :3] = np.rint(np.asarray(self.fill, np.float64) * alpha / 255)
        table[1, 3] = alpha
        table[2] = table[3] = (*self.outline, 255)
        return table.view(np.uint32).ravel()


def seed_layer(labels: np.ndarray, colours: np.ndarray = SEED_COLOURS) -> np.ndarray:
    """RGBA colours of seed labels (0 transparent, 1 red, 2 blue; ``colours``: a table of
    every label's RGBA, e.g. ``LabelList.seed_colours()``), as (..., 4) uint8.

    One 4-byte lookup per pixel (the table viewed as uint32): about 6x faster than indexing
    the (K, 4) table, 25 ms instead of 140 ms for a 12-megapixel redraw."""
    labels = np.asarray(labels)
    table = np.ascontiguousarray(colours, dtype=np.uint8).view(np.uint32).ravel()
    return table[labels].view(np.uint8).reshape(labels.shape + (4,))


def sample_grid(start: float, step: float, count: int, factor: int, size: int) -> np.ndarray:
    """Mask indices sampled at ``count`` screen pixel centres along one axis.

    Screen pixel i covers image coordinates ``start + i * step`` to ``start + (i + 1) * step``;
    its centre falls in image pixel ``floor(start + (i + 0.5) * step)``, which is mask index
    that ``// factor`` (a mask on a grid reduced ``factor`` times), clipped to ``[0, size)``.
    """
    centres = start + (np.arange(count) + 0.5) * step
    return np.clip(np.floor(centres).astype(np.int64) // factor, 0, size - 1)


def render_result(mask: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                  style: ResultStyle) -> np.ndarray:
    """The fill and outline of ``mask`` sampled at ``rows`` x ``cols`` (mask indices, one per
    screen pixel, e.g. from :func:`sample_grid`), as (len(rows) - 2w, len(cols) - 2w)
    premultiplied RGBA uint8 where w = ``style.outline_width``: the caller samples w extra
    pixels on each side so that the outline at the rectangle's edges is right.

    The outline is the object's pixels within ``outline_width`` screen pixels (4-neighbour
    steps) of a pixel outside it, so it is equally wide at every zoom; the image border does
    not count as outside.
    """
    width = style.outline_width
    sampled = mask.take(rows, axis=0).take(cols, axis=1)
    if width > 0:
        inner = sampled
        for _ in range(width):
            eroded = inner.copy()
            eroded[1:, :] &= inner[:-1, :]
            eroded[:-1, :] &= inner[1:, :]
            eroded[:, 1:] &= inner[:, :-1]
            eroded[:, :-1] &= inner[:, 1:]
            inner = eroded
        # 0 outside, 1 fill, 2 outline (object pixels that the erosion removed)
        code = sampled[width:-width, width:-width].view(np.uint8) * np.uint8(2)
        code -= inner[width:-width, width:-width].view(np.uint8)
    else:
        code = sampled.view(np.uint8)
    return style.lookup().take(code).view(np.uint8).reshape(code.shape + (4,))


def render_labels(labels: np.ndarray, rows: np.ndarray, cols: np.ndarray, style: ResultStyle,
                  colours: np.ndarray) -> np.ndarray:
    """:func:`render_result` for a label image (0 background, objects their values): each
    shown label (``colours[value, 3] > 0``, (256, 4) RGBA) filled in its colour at the
    style's opacity and outlined in it where it meets another label (the image border does
    not count)."""
    width = style.outline_width
    sampled = labels.take(rows, axis=0).take(cols, axis=1)
    shown = colours[sampled, 3] > 0
    inner = shown
    for _ in range(width):
        inner = _erode_within_label(inner, sampled)
    if width > 0:
        crop = (slice(width, -width), slice(width, -width))
        sampled, shown, inner = sampled[crop], shown[crop], inner[crop]
    alpha = round(255 * min(max(style.opacity, 0.0), 1.0))
    rgb = colours[sampled, :3].astype(np.uint16)
    out = np.zeros(sampled.shape + (4,), np.uint8)
    fill = shown & inner
    out[fill, :3] = (rgb[fill] * alpha + 127) // 255  # premultiplied
    out[fill, 3] = alpha
    edge = shown & ~inner
    out[edge, :3] = rgb[edge]
    out[edge, 3] = 255
    return out


def _erode_within_label(inner: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """One 4-neighbour erosion step of ``inner`` where a neighbour of another label counts as
    outside."""
    eroded = inner.copy()
    for axis in (0, 1):
        ahead = [slice(None), slice(None)]
        behind = [slice(None), slice(None)]
        ahead[axis], behind[axis] = slice(1, None), slice(None, -1)
        a, b = tuple(ahead), tuple(behind)
        same = labels[a] == labels[b]
        eroded[a] &= inner[b] & same
        eroded[b] &= inner[a] & same
    return eroded


def composite_result(rgba: np.ndarray, mask: np.ndarray, style: ResultStyle,
                     labels: np.ndarray | None = None,
                     colours: np.ndarray | None = None) -> np.ndarray:
    """uint8 (H, W, 3) RGB: the displayed image ``rgba`` (as the screen shows it, see
    ``display.py``) with the result drawn over it as :func:`render_result` (or, given
    ``labels`` and their ``colours``, :func:`render_labels`) draws it at 100 % zoom (fill at
    the style's opacity, outline ``outline_width`` image pixels wide)."""
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != rgba.shape[:2]:
        raise ValueError(f"mask shape {mask.shape} differs from the image's {rgba.shape[:2]}")
    width = style.outline_width
    rows = np.clip(np.arange(-width, mask.shape[0] + width), 0, mask.shape[0] - 1)
    cols = np.clip(np.arange(-width, mask.shape[1] + width), 0, mask.shape[1] - 1)
    layer = (render_result(mask, rows, cols, style) if labels is None else
             render_labels(labels, rows, cols, style, colours)).astype(np.float64)
    out = rgba[..., :3] * (1.0 - layer[..., 3:] / 255.0) + layer[..., :3]
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)
