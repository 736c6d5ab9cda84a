"""napari sample data: the repository's samples with their scribbles as Labels layers.

The files are read from the repository's ``samples/`` folder, so these samples exist in a
checkout (an editable install), not in a wheel.
"""

from __future__ import annotations

from pathlib import Path

import graphcut

SAMPLES = Path(__file__).resolve().parent.parent.parent / "samples"


def _require(path: Path) -> Path:
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: the graphcut samples come with a checkout "
                                "of the repository (pip install -e .)")
    return path


def _paintable(seeds):
    """The scribbles as a writable uint8 array of their own (a file reader may hand back a
    read-only view, which napari's brush cannot paint into)."""
    import numpy as np
    return np.array(seeds, dtype=np.uint8, copy=True)


def cells_volume():
    """The synthetic cell volume (40 x 64 x 64) and its scribbles."""
    volume = graphcut.read_volume(_require(SAMPLES / "volume" / "cells.tif"))
    seeds = graphcut.read_volume_seeds(_require(SAMPLES / "volume" / "cells_seeds.tif"),
                                       volume.shape)
    return [(volume, {"name": "cells"}, "image"),
            (_paintable(seeds), {"name": "scribbles"}, "labels")]


def coins_image():
    """scikit-image's coins (a 2-D grey image) and its scribbles."""
    image = graphcut.read_image(_require(SAMPLES / "images" / "coins.png"))
    seeds = graphcut.read_seeds(_require(SAMPLES / "seeds" / "coins.png"), image.shape[:2])
    return [(image, {"name": "coins"}, "image"),
            (_paintable(seeds), {"name": "scribbles"}, "labels")]
