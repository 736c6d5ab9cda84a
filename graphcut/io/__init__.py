"""Files in and out: images, volumes, seed and label files, settings files, results; every
writer atomic (a temporary name renamed into place, never over an input), every reader
guarded (size limits, decoding memory, clear messages naming the file).

Nothing here segments: :mod:`graphcut.io` imports nothing of ``graphcut.segmentation`` or
``graphcut.models``.
"""

from graphcut._labels import BACKGROUND, FOREGROUND, MAX_LABEL, NONE

from ._images import (IMAGE_SUFFIXES, RAISE_LIMIT_ADVICE, ImageInfo, ImageMemoryError,
                      ImageReadError, ImageTooLargeError, decode_bytes, default_max_pixels,
                      image_info, open_image, read_image)
from ._overlay import display_rgb, overlay, write_overlay
from ._requests import read_request
from ._results import PALETTE, is_mask, label_overlay, write_result, write_result_overlay
from ._seeds import (LABEL_MODES, check_seeds, checked_objects, image_shape, object_labels,
                     read_seeds, strokes_to_labels, write_seeds)
from ._settings import (KEEP_CHOICES, SETTING_KEYS, check_settings, load_for_seeds,
                        read_settings, settings_path, write_settings)
from ._volume_writing import (RECORD_KEY, read_volume_record, write_volume_mask,
                              write_volume_overlay, write_volume_seeds)
from ._volumes import (MASK_SUFFIXES, TIFF_SUFFIXES, VOLUME_SUFFIXES, VolumeReadError, is_volume,
                       read_volume, read_volume_seeds, segments_as_volume, volume_layout)
from ._writing import (LOSSLESS_SUFFIXES, as_mask, atomic_save, atomic_write,
                       check_lossless_suffix, check_writable_image_suffix, write_mask)

__all__ = [
    "BACKGROUND", "FOREGROUND", "IMAGE_SUFFIXES", "ImageInfo", "ImageMemoryError",
    "ImageReadError", "ImageTooLargeError", "KEEP_CHOICES", "LABEL_MODES", "LOSSLESS_SUFFIXES",
    "MASK_SUFFIXES", "MAX_LABEL", "NONE", "PALETTE", "RAISE_LIMIT_ADVICE", "RECORD_KEY", "SETTING_KEYS",
    "TIFF_SUFFIXES", "VOLUME_SUFFIXES", "VolumeReadError", "as_mask", "atomic_save",
    "atomic_write", "check_lossless_suffix", "check_seeds", "check_settings", "checked_objects",
    "check_writable_image_suffix", "decode_bytes", "default_max_pixels", "display_rgb",
    "image_info", "image_shape", "is_mask", "is_volume", "label_overlay", "load_for_seeds",
    "object_labels", "open_image", "overlay", "read_image", "read_request", "read_settings",
    "read_seeds", "read_volume", "read_volume_record", "read_volume_seeds", "segments_as_volume",
    "settings_path", "strokes_to_labels", "volume_layout", "write_mask", "write_overlay", "write_result", "write_result_overlay",
    "write_seeds", "write_settings", "write_volume_mask", "write_volume_overlay",
    "write_volume_seeds",
]
