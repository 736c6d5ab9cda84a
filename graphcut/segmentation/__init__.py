"""Segmentation: the energy (appearance costs, boundary term, capacities), boxes and lassos,
GrabCut iterations, several objects, clean-up, memory planning, and the two front doors on one
pipeline: :func:`segment` (one shot) and :class:`Segmenter` (incremental re-solves).
The parts are importable for finer control."""

from graphcut._arrays import array_module, image_as_float

from ._boundary import (SIGMA_MIN, check_positive, check_sigma, estimate_sigma, nlink_weights,
                        weights_of_values)
from ._boykov_jolly import (DEFAULT_LAM, build_network, check_seeds_for, regional_costs,
                            spatial_channel_axis)
from ._capacities import (DEFAULT_SCALE, INT32_MAX, quantize, quantize_weights, seed_pins,
                          terminal_capacities)
from ._cleanup import clean_labels, clean_mask, fill_holes, keep_connected, region_seeds
from ._grabcut import DEFAULT_TOL, Iterated, iterate_binary, iterate_labels
from ._memory import (ENERGY_BYTES_PER_PIXEL, NETWORK_BYTES_PER_PIXEL, array_segmentation_backend,
                      check_image_file, check_volume_file, file_bytes,
                      segmentation_backend, segmentation_bytes)
from ._problems import BinaryProblem, LabelProblem, binary_problem, cut_capacity, label_problem
from ._regions import allowed_region, box_mask, lasso_mask
from ._seed_histograms import SeedHistograms, capacities_from_tables
from ._options import (DEFAULT_FAR_COSTS, DEFAULT_ITERATIONS, DEFAULT_LAMS, DEFAULT_LOCALITY,
                       DEFAULT_SEED_SHARES, DEFAULT_TEXTURE, MODEL_CHOICES, resolve_options)
from ._locality import FAR_REACH, LOCALITY_REACH
from ._pipeline import result_of, segment_values
from ._segment import segment
from ._segmenter import Segmenter, only_binary_labels
from ._solving import GridCuts
from ._volume_paths import segment_volume_paths
from ._warmup import warm_up

# Names that moved to graphcut.io and stay importable from here.
from graphcut.io import (KEEP_CHOICES, SETTING_KEYS, check_settings, is_mask,  # noqa: E402
                         label_overlay, load_for_seeds, read_request, read_settings,
                         settings_path, write_result, write_result_overlay, write_settings)

__all__ = [
    "BinaryProblem", "DEFAULT_FAR_COSTS", "DEFAULT_ITERATIONS", "DEFAULT_LAM", "DEFAULT_LAMS", "DEFAULT_SCALE",
    "DEFAULT_LOCALITY", "DEFAULT_SEED_SHARES", "DEFAULT_TEXTURE", "DEFAULT_TOL", "FAR_REACH",
    "LOCALITY_REACH", "ENERGY_BYTES_PER_PIXEL", "NETWORK_BYTES_PER_PIXEL", "GridCuts", "INT32_MAX",
    "Iterated", "KEEP_CHOICES", "LabelProblem", "MODEL_CHOICES", "SETTING_KEYS", "SIGMA_MIN",
    "SeedHistograms", "Segmenter", "allowed_region", "array_module", "array_segmentation_backend",
    "binary_problem", "box_mask", "build_network", "capacities_from_tables", "check_image_file", "check_volume_file", "file_bytes",
    "check_positive", "check_seeds_for", "check_settings", "check_sigma", "clean_labels",
    "clean_mask", "region_seeds", "cut_capacity", "estimate_sigma", "fill_holes", "image_as_float", "is_mask", "iterate_binary",
    "iterate_labels", "keep_connected", "label_overlay", "label_problem", "lasso_mask",
    "load_for_seeds", "nlink_weights", "only_binary_labels", "quantize", "quantize_weights",
    "read_request", "read_settings", "regional_costs", "resolve_options", "result_of", "seed_pins", "segment",
    "segment_values", "segment_volume_paths", "segmentation_backend", "segmentation_bytes", "settings_path",
    "spatial_channel_axis", "terminal_capacities", "warm_up", "weights_of_values",
    "write_result", "write_result_overlay", "write_settings",
]
