"""Checks of the post-processing settings' values (:class:`~graphcut.stereo.MedianFill`,
:class:`~graphcut.stereo.BorderExtrapolation`, :class:`~graphcut.stereo.EdgeRefinement`):
one message shape for every out-of-range value."""

from __future__ import annotations

import numpy as np


def unpacked(settings, what: str, kind: str, fields: tuple) -> tuple:
    """The values of the settings tuple ``settings`` (a ValueError naming ``what``, the
    NamedTuple ``kind`` and its ``fields`` when it is no such tuple)."""
    try:
        *values, = settings
    except TypeError:
        values = None
    if values is None or len(values) != len(fields):
        raise ValueError(f"{what} must be a {kind} ({', '.join(fields)}) or None, got "
                         f"{settings!r}")
    return tuple(values)


def checked_int(owner: str, name: str, value, low: int, high, unit: str = "") -> int:
    """``value`` as an int when it is an integer (not a bool) in ``low..high``; else a
    ValueError naming ``owner`` (e.g. "median fill") and ``name``. ``high`` may be a
    (number, text) pair, e.g. ``(radius, "radius (9)")``."""
    top, shown = high if isinstance(high, tuple) else (high, high)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not low <= value <= top:
        raise ValueError(f"{owner} {name} must be an int in {low}..{shown}{unit}, got "
                         f"{value!r}")
    return int(value)


def checked_number(owner: str, name: str, value, low: float, high: float, shown: str) -> float:
    """``value`` as a float when it is a real number (not a bool) in ``low..high``; else a
    ValueError naming ``owner`` and ``name`` with the range as ``shown``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
            or not low <= value <= high:
        raise ValueError(f"{owner} {name} must be a number in {shown}, got {value!r}")
    return float(value)
