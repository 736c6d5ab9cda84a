"""Segmentation: colour energies, boxes and lassos, GrabCut iterations, several objects,
clean-up. ``segment`` is the front door; the parts are importable for finer control."""

from ._cleanup import KEEP_CHOICES, clean_labels, clean_mask, fill_holes, keep_connected
from ._energy import BinaryProblem, LabelProblem, binary_problem, cut_capacity, label_problem
from ._files import read_request
from ._grabcut import DEFAULT_TOL, Iterated, iterate_binary, iterate_labels
from ._output import is_mask, label_overlay, write_result, write_result_overlay
from ._regions import allowed_region, box_mask, lasso_mask
from ._segment import (DEFAULT_ITERATIONS, DEFAULT_LAMS, DEFAULT_SEED_SHARES, MODEL_CHOICES,
                       segment)
from ._settings import (SETTING_KEYS, check_settings, load_for_seeds, read_settings,
                        settings_path, write_settings)

__all__ = [
    "BinaryProblem", "DEFAULT_ITERATIONS", "DEFAULT_LAMS", "DEFAULT_SEED_SHARES", "DEFAULT_TOL",
    "Iterated", "KEEP_CHOICES", "LabelProblem", "MODEL_CHOICES", "SETTING_KEYS",
    "allowed_region", "binary_problem", "box_mask", "check_settings", "clean_labels", "clean_mask",
    "cut_capacity", "fill_holes", "is_mask", "iterate_binary", "iterate_labels",
    "keep_connected", "label_overlay", "label_problem", "lasso_mask", "load_for_seeds",
    "read_request", "read_settings", "segment", "settings_path", "write_result", "write_result_overlay",
    "write_settings",
]
