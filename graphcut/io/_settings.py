"""Settings that travel with the seeds: a small JSON file next to the seed PNG.

``seeds/photo.png`` has its settings in ``seeds/photo.json`` (same folder, same stem), for
example::

    {"graphcut_settings": 1, "model": "gmm", "lam": 35, "box": [12, 30, 220, 310],
     "iterations": 5, "keep": "connected", "fill_holes": 100}

Every key is optional: ``model`` ("histogram" / "gmm"), ``lam`` (number >= 0), ``sigma``
(number > 0 or null), ``iterations`` (integer >= 0), ``box`` ([row0, col0, row1, col1],
half-open), ``lasso`` ([[row, col], ...], at least 3 vertices), ``keep`` ("all" /
"connected"), ``fill_holes`` (integer >= 0), ``labels`` (free-form, e.g. the app's names and
colours of the labels; not used for segmenting). ``graphcut_settings`` is the format version
(1). Unknown keys are ignored with a warning (a newer app may write more). The desktop app
writes this file when it saves seeds; ``graphcut segment`` and ``graphcut batch`` read it, so
their results equal what the app showed. Options given on the command line win over the file.
"""

from __future__ import annotations

import json
import logging
import math
import os
from pathlib import Path

# The values of the "keep" setting (and of segment(keep=...)): keep every object part, or only
# the parts connected to a seed or the box's centre.
KEEP_CHOICES = ("all", "connected")

log = logging.getLogger("graphcut")

FORMAT_VERSION = 1
VERSION_KEY = "graphcut_settings"
SETTING_KEYS = ("model", "lam", "sigma", "iterations", "box", "lasso", "keep", "fill_holes",
                "labels")


# The largest settings file read (a real one is a few kilobytes; a lasso of 100000 vertices
# is about 2 MB).
SETTINGS_MAX_BYTES = 16 * 2**20


def settings_path(seeds_path) -> Path:
    """Where the settings of ``seeds_path`` live: the same path with the suffix ``.json``."""
    return Path(seeds_path).with_suffix(".json")


def _number(value, where, key, *, minimum, open_minimum=False, integer=False):
    ok = not isinstance(value, bool) and isinstance(value, (int, float))
    if ok and integer:
        ok = float(value).is_integer()
    if ok:
        ok = math.isfinite(value) and (value > minimum if open_minimum else value >= minimum)
    if not ok:
        kind = "an integer" if integer else "a number"
        bound = f"> {minimum}" if open_minimum else f">= {minimum}"
        raise ValueError(f"{where}: {key!r} must be {kind} {bound}, got {value!r}")
    return int(value) if integer else float(value)


def check_settings(settings: dict, where: str = "settings") -> dict:
    """The known settings of ``settings``, checked (ValueError naming ``where`` and the key
    otherwise); unknown keys are dropped with a logged warning."""
    from graphcut.models import APPEARANCE_MODELS as MODEL_CHOICES

    if not isinstance(settings, dict):
        raise ValueError(f"{where}: expected a JSON object {{...}}, got {type(settings).__name__}")
    version = settings.get(VERSION_KEY, FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise ValueError(f"{where}: {VERSION_KEY} is {version!r}; this graphcut reads version "
                         f"{FORMAT_VERSION}")
    checked = {}
    for key, value in settings.items():
        if key == VERSION_KEY:
            continue
        if key not in SETTING_KEYS:
            log.warning("%s: ignoring the unknown setting %r", where, key)
            continue
        if value is None:
            checked[key] = None
        elif key == "model":
            if value not in MODEL_CHOICES:
                raise ValueError(f"{where}: 'model' must be one of {', '.join(MODEL_CHOICES)}, "
                                 f"got {value!r}")
            checked[key] = value
        elif key == "keep":
            if value not in KEEP_CHOICES:
                raise ValueError(f"{where}: 'keep' must be one of {', '.join(KEEP_CHOICES)}, "
                                 f"got {value!r}")
            checked[key] = value
        elif key == "lam":
            checked[key] = _number(value, where, key, minimum=0)
        elif key == "sigma":
            checked[key] = _number(value, where, key, minimum=0, open_minimum=True)
        elif key in ("iterations", "fill_holes"):
            checked[key] = _number(value, where, key, minimum=0, integer=True)
        elif key == "box":
            if not (isinstance(value, (list, tuple)) and len(value) == 4):
                raise ValueError(f"{where}: 'box' must be [row0, col0, row1, col1], got "
                                 f"{value!r}")
            checked[key] = tuple(_number(v, where, "box", minimum=0, integer=True)
                                 for v in value)
        elif key == "lasso":
            if not (isinstance(value, (list, tuple)) and len(value) >= 3 and all(
                    isinstance(p, (list, tuple)) and len(p) == 2 for p in value)):
                raise ValueError(f"{where}: 'lasso' must be a list of at least 3 [row, col] "
                                 f"vertices, got {value!r}")
            checked[key] = [(_number(r, where, "lasso", minimum=-math.inf),
                             _number(c, where, "lasso", minimum=-math.inf)) for r, c in value]
        else:  # labels: kept as they are
            checked[key] = value
    return checked


def read_settings(path) -> dict:
    """The checked settings stored in the JSON file ``path`` (see the module docstring).

    The file must be a regular file (a FIFO or a device is refused by name, before it is
    opened) small enough for the memory available.

    Raises
    ------
    OSError
        the file cannot be read, or is not a regular file (``NotARegularFileError``).
    ValueError
        not JSON, nested too deeply, larger than :data:`SETTINGS_MAX_BYTES` or than the
        memory available allows, or a bad value; the message names the file (and the line
        for JSON syntax errors).
    """
    from graphcut._safety import read_small_file

    where = f"settings {os.fspath(path)!r}"
    try:
        data = read_small_file(path, "settings file", max_bytes=SETTINGS_MAX_BYTES)
    except MemoryError as error:  # a ValueError like every other bad settings file
        raise ValueError(f"{where}: {error}") from None
    try:
        settings = json.loads(data.decode("utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{where}, line {error.lineno}: not valid JSON ({error.msg})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{where}: not a UTF-8 text file") from None
    except RecursionError:
        raise ValueError(f"{where}: its JSON is nested too deeply to be settings (a settings "
                         "file is one object of numbers, strings and short lists)") from None
    return check_settings(settings, where)


def write_settings(path, settings: dict, *, inputs=()) -> None:
    """Write ``settings`` (checked first) as JSON, atomically, with the format version."""
    from ._writing import atomic_write

    checked = check_settings(dict(settings), f"settings for {os.fspath(path)!r}")
    document = {VERSION_KEY: FORMAT_VERSION}
    for key, value in checked.items():
        if key == "box" and value is not None:
            value = list(value)
        elif key == "lasso" and value is not None:
            value = [list(p) for p in value]
        document[key] = value
    text = json.dumps(document, indent=1) + "\n"
    atomic_write(path, lambda handle: handle.write(text), mode="w", inputs=inputs)


def load_for_seeds(seeds_path) -> dict:
    """The settings next to ``seeds_path`` ({} when there is no such file)."""
    path = settings_path(seeds_path)
    # lexists: a FIFO or a device of that name is refused by read_settings, not ignored
    return read_settings(path) if os.path.lexists(path) and not path.is_dir() else {}
