"""Opening TIFF files for the volume readers, protected against files of very many series."""

from __future__ import annotations

import json
import os

import numpy as np

# Above this many pages, a TIFF whose first page does not describe one shaped series for all
# of them is read without tifffile's shaped-series detection, which is quadratic in the number
# of series (a 5 MB file of 20000 one-pixel pages took minutes).
SERIES_PAGE_LIMIT = 256


def open_tiff(source, name: str):
    """``tifffile.TiffFile`` of ``source`` (a path or an open binary file).

    Files of very many shaped series (more than :data:`SERIES_PAGE_LIMIT` pages that the first
    page does not declare as one series) are read as one generic series of all their pages.

    Parameters
    ----------
    source : str or binary file
        the file's path, or the file opened for reading.
    name : str
        the name used in messages (its last component names the file for tifffile).

    Returns
    -------
    tifffile.TiffFile
        open; the caller closes it.
    """
    import tifffile
    tif = tifffile.TiffFile(source, name=os.path.basename(name))
    try:
        if tif.is_shaped and len(tif.pages) > SERIES_PAGE_LIMIT:
            first = tif.pages.first
            try:
                declared = json.loads(first.description)["shape"]
                one_series = int(np.prod(declared, dtype=object)) >= \
                    len(tif.pages) * int(np.prod(first.shape, dtype=object))
            except (ValueError, KeyError, TypeError):
                one_series = False
            if not one_series:
                if hasattr(source, "seek"):
                    source.seek(0)
                else:
                    tif.close()
                tif = tifffile.TiffFile(source, name=os.path.basename(name), is_shaped=False)
    except BaseException:
        tif.close()
        raise
    return tif
