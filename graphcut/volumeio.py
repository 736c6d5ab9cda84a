"""Deprecated: moved to graphcut.io (volumes) and graphcut.segmentation (segment_volume_paths). This module only re-exports those names, with a
DeprecationWarning, and will be removed."""

import warnings

warnings.warn("graphcut.volumeio is deprecated: import from graphcut.io",
              DeprecationWarning, stacklevel=2)

from graphcut.io import (MASK_SUFFIXES, TIFF_SUFFIXES, VOLUME_SUFFIXES,  # noqa: F401
                         VolumeReadError, is_volume, read_volume, read_volume_seeds,
                         segments_as_volume, write_volume_mask, write_volume_seeds,
                         RECORD_KEY, read_volume_record)
from graphcut.segmentation import segment_volume_paths  # noqa: F401
