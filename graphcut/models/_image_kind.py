"""Is a colour image a stained or fluorescence micrograph or a photograph? A cheap, fixed rule
on the image's colours, for :class:`graphcut.models.Auto` (docs/appearance.md, "How `auto`
tells microscopy from photographs").

The colours of :data:`SAMPLE_PIXELS` pixels on a fixed grid (the same pixels on the CPU and
the GPU; only they leave the device) are rescaled to [0, 1] by their own range (the lowest
value of any channel -> 0, the 99.5th percentile -> 1), then three signs of microscopy are
measured; any one of them is enough:

- **brightfield** (H&E, IHC, stained sections): the Beer-Lambert law makes a stain darken
  *and* colour the bright, neutral background, so across the pixels darkness and chroma rise
  together: their correlation is at least :data:`BRIGHTFIELD_MIN` (photographs' shadows and
  highlights are grey, their colours of every brightness: at most 0.24 on our sets);
- **stain colours**: at least :data:`STAIN_MIN` of the coloured pixels have a hue between
  blue-violet and magenta (240 - 330 degrees: haematoxylin, eosin, crystal violet), colours
  that photographs seldom hold (at most 0.09 on our photographs); dense tissue with no
  background shows this one only;
- **fluorescence stored as RGB**: a channel is empty (its 99th percentile at most
  :data:`EMPTY_CHANNEL_MAX` of the strongest channel's: one or two dyes in a three-channel
  file) or most pixels are black (at least :data:`DARK_MIN` of them below a tenth of the
  range).

An image whose channels are equal (a grey image stored as RGB) counts as grey.

A grey image (one channel, or equal channels; not a volume) is read by :func:`grey_statistics`
(since 2026-11-27, eleventh session): fluorescence is dyes on a dark background, so at least
half of its pixels lie in the lowest part of the range: the median of the same grid's
intensities, rescaled the same way, is at most 0.23 on every grey development micrograph; a
grey image whose median is at least :data:`GREY_PHOTO_MEDIAN` is taken for a photograph (the
mid-tones of a scene fill its range). Images between stay with the micrographs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from graphcut._arrays import array_module, to_host

#: how many pixels the rule reads (a grid of 64 x 64 in an image, 16 x 16 x 16 in a volume)
SAMPLE_PIXELS = 4096
#: least correlation of darkness and chroma of a brightfield micrograph
BRIGHTFIELD_MIN = 0.4
#: least share of the coloured pixels with a stain's hue (blue-violet to magenta)
STAIN_MIN = 0.5
#: the stains' hue range, degrees (0 red, 120 green, 240 blue)
STAIN_HUES = (240.0, 330.0)
#: most 99th percentile of an empty channel, as a share of the strongest channel's
EMPTY_CHANNEL_MAX = 0.05
#: least share of black pixels (brightest channel below a tenth of the range) of fluorescence
DARK_MIN = 0.5
#: chroma (largest minus smallest channel, of the range) from which a pixel is coloured
COLOURED_CHROMA = 0.08
#: an image whose 99th percentile of chroma is below this is grey
GREY_CHROMA = 0.02
#: least median intensity (of the range) of a grey photograph (grey fluorescence: at most 0.23)
GREY_PHOTO_MEDIAN = 0.4


@dataclass(frozen=True)
class ColourStatistics:
    """What :func:`colour_statistics` measured (each value in [0, 1] or [-1, 1]).

    Attributes
    ----------
    brightfield : float
        Correlation of darkness (1 - mean of the channels) and chroma across the sampled
        pixels, in [-1, 1] (0 when either is constant).
    stain : float
        Share of the coloured pixels whose hue lies in :data:`STAIN_HUES` (0 when none is
        coloured).
    empty_channel : float
        99th percentile of the weakest channel over the strongest channel's, in [0, 1].
    dark : float
        Share of the pixels whose brightest channel is below a tenth of the range.
    grey : bool
        The channels are (nearly) equal: a grey image.
    """

    brightfield: float
    stain: float
    empty_channel: float
    dark: float
    grey: bool

    @property
    def signs(self) -> tuple:
        """The names of the signs of microscopy found (empty: a photograph)."""
        found = []
        if self.brightfield >= BRIGHTFIELD_MIN:
            found.append("brightfield")
        if self.stain >= STAIN_MIN:
            found.append("stain")
        if self.empty_channel <= EMPTY_CHANNEL_MAX or self.dark >= DARK_MIN:
            found.append("fluorescence")
        return tuple(found)

    @property
    def microscopy(self) -> bool:
        """Whether the image is grey or shows any sign of microscopy."""
        return self.grey or bool(self.signs)


@dataclass(frozen=True)
class GreyStatistics:
    """What :func:`grey_statistics` measured on a grey image.

    Attributes
    ----------
    median : float
        Median of the sampled intensities rescaled to [0, 1] by their range (lowest 0, 99.5th
        percentile 1).
    dark : float
        Share of the sampled pixels below a tenth of the range.
    """

    median: float
    dark: float

    @property
    def photograph(self) -> bool:
        """Whether the grey image is taken for a photograph (median at least
        :data:`GREY_PHOTO_MEDIAN`), not a micrograph of dyes on a dark background."""
        return self.median >= GREY_PHOTO_MEDIAN


def sample_pixels(values, samples: int = SAMPLE_PIXELS) -> np.ndarray:
    """The colours of about ``samples`` pixels on a fixed grid, on the host.

    Parameters
    ----------
    values : array, (..., C)
        An image or volume with its channels last (NumPy or CuPy; any real dtype).
    samples : int
        About how many pixels: ``round(samples ** (1 / ndim))`` evenly spaced indices along
        each spatial axis (fewer where the axis is shorter).

    Returns
    -------
    numpy.ndarray, float64 (N, C)
        The sampled pixels (the same ones on every device), converted as
        ``graphcut.segment`` converts an image: integers divided by their dtype's maximum,
        so that the raw image and its float values give the same numbers.
    """
    spatial = values.shape[:-1]
    side = max(1, round(samples ** (1.0 / len(spatial))))
    grids = [np.unique(np.linspace(0, n - 1, min(n, side)).round().astype(np.int64))
             for n in spatial]
    index = np.ix_(*grids)
    xp = array_module(values)
    if xp is np:
        picked = np.asarray(values)[index]
    else:  # the grid's pixels only leave the device
        picked = to_host(values[tuple(xp.asarray(axis) for axis in index)])
    scale = float(np.iinfo(picked.dtype).max) if picked.dtype.kind in "iu" else 1.0
    return (picked.astype(np.float64) / scale).reshape(-1, values.shape[-1])


def colour_statistics(values) -> ColourStatistics:
    """The signs of microscopy of a colour image (this module's notes).

    Parameters
    ----------
    values : array, (H, W, 3) or (D, H, W, 3)
        The image with its channels last (RGB; NumPy or CuPy, any real dtype); values are
        compared with each other only (the rule is unchanged by scaling or an offset).

    Returns
    -------
    ColourStatistics

    Raises
    ------
    ValueError
        ``values`` has not 3 channels last.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> photo = rng.integers(0, 256, (64, 64, 3)).astype(np.uint8)
    >>> colour_statistics(photo).microscopy
    False
    >>> nuclei = np.zeros((64, 64, 3)); nuclei[::8, ::8, 1] = 1.0  # green spots on black
    >>> colour_statistics(nuclei).signs
    ('fluorescence',)
    """
    if values.ndim < 3 or values.shape[-1] != 3:
        raise ValueError(f"colour_statistics needs an RGB image with its channels last, got "
                         f"shape {values.shape}")
    scaled = _rescaled(sample_pixels(values))
    if scaled is None:
        return ColourStatistics(0.0, 0.0, 0.0, 1.0, grey=True)
    red, green, blue = scaled.T
    top = np.maximum(np.maximum(red, green), blue)
    chroma = top - np.minimum(np.minimum(red, green), blue)
    grey = _quantile(chroma, 0.99) < GREY_CHROMA
    hue = np.degrees(np.arctan2(math.sqrt(3.0) * (green - blue), 2 * red - green - blue)) % 360
    coloured = chroma >= COLOURED_CHROMA
    in_band = coloured & (hue >= STAIN_HUES[0]) & (hue < STAIN_HUES[1])
    count = int(coloured.sum())
    stain = float(in_band.sum()) / count if count else 0.0
    channel_tops = [_quantile(channel, 0.99) for channel in (red, green, blue)]
    empty = min(channel_tops) / max(channel_tops) if max(channel_tops) > 0 else 1.0
    dark = float(np.mean(top < 0.1))
    darkness = 1.0 - (red + green + blue) / 3.0
    return ColourStatistics(_correlation(darkness, chroma), stain, float(empty), dark, grey)


def grey_statistics(values) -> GreyStatistics:
    """How a grey image's intensities fill their range (this module's notes).

    Parameters
    ----------
    values : array, (H, W) or (H, W, C)
        A grey image, or one stored with equal channels last (their mean is read); NumPy or
        CuPy, any real dtype. Only :func:`sample_pixels`' grid leaves the device; the
        numbers are unchanged by scaling or an offset.

    Returns
    -------
    GreyStatistics

    Examples
    --------
    >>> import numpy as np
    >>> nuclei = np.zeros((64, 64)); nuclei[::8, ::8] = 1.0  # bright spots on black
    >>> grey_statistics(nuclei).photograph
    False
    >>> ramp = np.tile(np.linspace(0.0, 1.0, 64), (64, 1))  # every tone as often
    >>> grey_statistics(ramp).photograph
    True
    """
    scaled = _rescaled(sample_pixels(values if values.ndim == 3 else values[..., None])
                       .mean(axis=1))
    if scaled is None:
        return GreyStatistics(0.0, 1.0)
    return GreyStatistics(float(np.median(scaled)), float(np.mean(scaled < 0.1)))


def _rescaled(pixels: np.ndarray):
    """``pixels`` rescaled by their own range (lowest value 0, 99.5th percentile 1, clipped to
    [0, 1]); None for a flat or non-finite sample."""
    low = float(pixels.min())
    span = _quantile(pixels.ravel(), 0.995) - low
    if not math.isfinite(span) or span <= 0:
        return None
    return np.clip((pixels - low) / span, 0.0, 1.0)


def _quantile(values: np.ndarray, q: float) -> float:
    """The ``q`` quantile of ``values`` (the nearest lower order statistic: no interpolation)."""
    k = int(q * (values.size - 1))
    return float(np.partition(values, k)[k])


def _correlation(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a - a.mean(), b - b.mean()
    norm = math.sqrt(float(a @ a) * float(b @ b))
    return float(a @ b) / norm if norm > 1e-12 else 0.0


__all__ = ["BRIGHTFIELD_MIN", "ColourStatistics", "DARK_MIN", "EMPTY_CHANNEL_MAX",
           "GREY_PHOTO_MEDIAN", "GreyStatistics", "SAMPLE_PIXELS", "STAIN_HUES", "STAIN_MIN",
           "colour_statistics", "grey_statistics", "sample_pixels"]
