"""The baselines of bench/bench_quality.py and bench_quality_real.py, each fed exactly what
``graphcut.segment`` is fed (image, seeds 1 object / 2 background, optional box):

- ``run_cv2``: OpenCV's GrabCut (5 iterations; fair strokes protocol, see its docstring);
  ``run_cv2_clean``: the same with our clean-up; ``run_cv2_box``: from the box alone;
- ``run_rf``: an ilastik-style random forest on the learned model's own features (no graph cut);
- ``run_otsu``: a global Otsu threshold (microscopy: brighter = object).
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

FILL_HOLES = 100  # pixels: the clean-up of bench_quality.py's "-clean" methods


def as_uint8(image):
    """What cv2.grabCut can read: uint8, 3 channels (other integer images scaled by their
    maximum)."""
    if image.dtype != np.uint8:
        image = np.round(image.astype(np.float64) * (255.0 / max(1, image.max())))
        image = image.astype(np.uint8)
    return image if image.ndim == 3 else np.repeat(image[..., None], 3, axis=-1)


def run_cv2(image, seeds, box, iterations=5):
    """cv2.grabCut fed what ``graphcut.segment`` is fed. With a box: outside is background,
    inside "probably object". Strokes only (fair protocol): unknown pixels are "probably
    object" within the reach of the object strokes (distance <= FAR_REACH * sqrt(H W), the
    reach of our own far_cost) and "probably background" only outside it."""
    import cv2
    from graphcut.segmentation._locality import FAR_REACH
    bgr = np.ascontiguousarray(as_uint8(image)[..., :3][..., ::-1])
    mask = np.full(image.shape[:2], cv2.GC_PR_BGD if box is None else cv2.GC_BGD, np.uint8)
    if box is not None:
        r0, c0, r1, c1 = box
        mask[r0:r1, c0:c1] = cv2.GC_PR_FGD
    elif (seeds == 1).any():
        reach = FAR_REACH * np.sqrt(seeds.size)
        mask[ndimage.distance_transform_edt(seeds != 1) <= reach] = cv2.GC_PR_FGD
    mask[seeds == 1] = cv2.GC_FGD
    mask[seeds == 2] = cv2.GC_BGD
    background = np.zeros((1, 65), np.float64)
    foreground = np.zeros((1, 65), np.float64)
    cv2.grabCut(bgr, mask, None, background, foreground, iterations, cv2.GC_INIT_WITH_MASK)
    return (mask == cv2.GC_FGD) | (mask == cv2.GC_PR_FGD)


def run_cv2_clean(image, seeds, box):
    """cv2.grabCut with our clean-up (the parts touching object seeds, or the largest; holes
    under FILL_HOLES pixels filled), as ``*-clean`` methods get it."""
    from graphcut.segmentation import clean_labels
    mask = run_cv2(image, seeds, box)
    outside = None
    if box is not None:
        outside = np.ones(mask.shape, bool)
        outside[box[0]:box[2], box[1]:box[3]] = False
    return clean_labels(mask.astype(np.uint8), [1], seeds, keep="connected",
                        fill_holes_area=FILL_HOLES, outside=outside) == 1


def run_cv2_box(image, seeds, box):
    """cv2.grabCut from the box alone (strokes not given), or the fair strokes protocol when
    there is no box."""
    return run_cv2(image, np.zeros_like(seeds) if box is not None else seeds, box)


_FEATURES = {}


def run_rf(image, seeds, box):
    """ilastik-style pixel classification: a random forest (scikit-learn, 100 trees) on the
    same features as the learned model, trained on the seeds (with a box: its inside as
    object, outside as background, seeds winning), through skimage.future.fit_segmenter; no
    graph cut."""
    from skimage.future import fit_segmenter, predict_segmenter
    from sklearn.ensemble import RandomForestClassifier

    from graphcut.energy import image_as_float
    from graphcut.segmentation.features import pixel_features
    key = (id(image), image.shape)
    if key not in _FEATURES:
        _FEATURES.clear()
        _FEATURES[key] = pixel_features(image_as_float(image))
    labels = seeds.astype(np.uint8).copy()
    if box is not None:
        inside = np.zeros(seeds.shape, bool)
        inside[box[0]:box[2], box[1]:box[3]] = True
        labels = np.where(seeds != 0, seeds, np.where(inside, 1, 2)).astype(np.uint8)
    if not ((labels == 1).any() and (labels == 2).any()):
        return labels == 1
    forest = RandomForestClassifier(n_estimators=100, n_jobs=1, random_state=0,
                                    max_samples=20000 if (labels != 0).sum() > 20000 else None)
    forest = fit_segmenter(labels, _FEATURES[key], forest)
    mask = predict_segmenter(_FEATURES[key], forest) == 1
    if box is not None:
        mask &= inside
    return mask


def run_otsu(image, seeds, box):
    """A global Otsu threshold of the grey intensity (inside the box only, thresholded there,
    when there is one). The object is the brighter side unless what we are fed says
    otherwise (dark nuclei of brightfield and H&E images): with seeds of both labels, the
    darker side when the object seeds are darker on average than the background seeds; with
    object seeds only, when they are darker on average than the threshold; with a box and
    no seeds, when the darker side holds more of the box's outline (the outline is
    background)."""
    from skimage.filters import threshold_otsu
    grey = image.mean(axis=-1) if image.ndim == 3 else image.astype(np.float64)
    window = np.s_[:, :] if box is None else np.s_[box[0]:box[2], box[1]:box[3]]
    threshold = threshold_otsu(grey[window])
    bright = grey[window] > threshold
    object_seeds, background_seeds = seeds[window] == 1, seeds[window] == 2
    if object_seeds.any() and background_seeds.any():
        dark = grey[window][object_seeds].mean() < grey[window][background_seeds].mean()
    elif object_seeds.any():
        dark = grey[window][object_seeds].mean() < threshold
    elif box is not None:
        outline = np.r_[bright[0], bright[-1], bright[:, 0], bright[:, -1]]
        dark = outline.mean() > 0.5
    else:
        dark = False
    mask = np.zeros(grey.shape, bool)
    mask[window] = ~bright if dark else bright
    return mask


