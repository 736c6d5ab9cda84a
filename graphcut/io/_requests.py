"""A segmentation request read from files: the seed file, its settings file, the options."""

from __future__ import annotations

from ._seeds import read_seeds

from ._settings import load_for_seeds


def read_request(seeds_path, shape, *, max_pixels=None, **given):
    """The seeds and the :func:`graphcut.segment` options for an image of ``shape``.

    ``given`` are options chosen by the caller (``lam``, ``sigma``, ``model``,
    ``iterations``, ``box``, ``lasso``, ``keep``, ``fill_holes``); those that are None are
    taken from the settings file next to the seeds (:func:`load_for_seeds`), when it has them.
    ``seeds_path`` may be None when a box or lasso is given. ``max_pixels``: as for
    :func:`graphcut.read_seeds`.

    Returns
    -------
    tuple
        ``(seeds or None, options)``: the uint8 label seeds (several objects allowed) and the
        merged options.

    Raises
    ------
    ValueError
        bad settings or seeds (messages name the file), or neither seeds nor a
        box or lasso; OSError / ImageReadError for unreadable files.
    """
    stored = load_for_seeds(seeds_path) if seeds_path is not None else {}
    stored.pop("labels", None)
    options = {**stored, **{key: value for key, value in given.items() if value is not None}}
    region = options.get("box") is not None or options.get("lasso") is not None
    if seeds_path is None:
        if not region:
            raise ValueError("no seed file and no box or lasso: nothing marks the object")
        return None, options
    return read_seeds(seeds_path, shape, require_both=not region, multi=True,
                      max_pixels=max_pixels), options
