"""Per-pixel features of the learned appearance model (the filter bank lives in
:mod:`graphcut.models._features`, next to the model that uses it; re-exported here)."""

from graphcut.models import DEFAULT_SCALES, feature_names, image_features, pixel_features

__all__ = ["DEFAULT_SCALES", "feature_names", "image_features", "pixel_features"]
