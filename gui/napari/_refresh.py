"""Writing a result into a Labels layer and showing only the part that changed. No Qt.

``layer.refresh()`` re-slices the whole layer and makes the canvas upload the whole texture
again (a 12 MP mask, or a 256^3 volume in 3-D view, on every stroke). napari's painting tools
avoid that with a partial refresh: they write into the layer's current slice and its texture
values inside a bounding box and emit ``labels_update`` with that box, which the canvas uploads
alone. :func:`write_labels` does the same for a result's changed region. That path uses
napari's internals of the Labels layer (napari 0.5 to 0.9); where any of them is missing or the
layer is displayed in a way it does not cover (contours, multiscale, non-NumPy data, transposed
axes), it falls back to ``layer.refresh()``.
"""

from __future__ import annotations

import logging

import numpy as np

log = logging.getLogger("graphcut.gui")


def write_labels(layer, values, region=None) -> bool:
    """Write ``values`` into ``layer.data[region]`` and show the change.

    Parameters
    ----------
    layer : napari.layers.Labels
        The layer to write into (its data a NumPy array).
    values : numpy.ndarray
        The new labels of ``region`` (broadcastable to it).
    region : tuple of slice, optional
        One slice per axis of the layer's data, with explicit bounds; None: the whole layer.

    Returns
    -------
    bool
        True when only the changed part was refreshed, False when the whole layer was
        (``region`` None, or a display the partial path does not cover).

    Examples
    --------
    >>> from napari.layers import Labels
    >>> layer = Labels(np.zeros((4, 6), np.uint8))
    >>> write_labels(layer, np.ones((2, 2), np.uint8), (slice(1, 3), slice(2, 4)))
    True
    >>> int(layer.data.sum())
    4
    """
    if region is None:
        layer.data[...] = values
        layer.refresh()
        return False
    layer.data[region] = values
    return show_region(layer, region)


def show_region(layer, region) -> bool:
    """Show a change already written into ``layer.data[region]``.

    Parameters
    ----------
    layer : napari.layers.Labels
        The layer written into (its data a NumPy array).
    region : tuple of slice
        One slice per axis of the layer's data, with explicit bounds, holding the change.

    Returns
    -------
    bool
        True when only the region was refreshed, False when the whole layer was.
    """
    try:
        partial = _refresh_region(layer, region)
    except (AttributeError, TypeError, IndexError, ValueError) as error:  # another napari
        log.debug("partial labels refresh unavailable: %s", error)
        partial = False
    if not partial:
        layer.refresh()
    return partial


def _refresh_region(layer, region) -> bool:
    """Bring the layer's displayed slice and texture values up to date inside ``region`` and
    emit napari's partial update; False when this display needs a full refresh."""
    if (not layer.visible or layer.contour != 0 or layer.multiscale
            or not isinstance(layer.data, np.ndarray)
            or not layer._slicing_state.loaded or layer._slice.empty):
        return False
    slice_input = layer._slice.slice_input
    displayed = list(slice_input.displayed)
    if displayed != sorted(displayed) or len(region) != layer.ndim:
        return False  # transposed view: the slice's axes are not the data's order
    point = layer._get_pt_not_disp()
    index = []
    for axis, part in enumerate(region):
        if axis in point:
            at = int(point[axis])
            if not part.start <= at < part.stop:
                return True  # the change is off the displayed slice: nothing shown changed
            index.append(at)
        else:
            index.append(part)
    shown = tuple(region[axis] for axis in displayed)
    raw, view = layer._slice.image.raw, layer._slice.image.view
    if raw.shape != tuple(np.shape(layer.data)[axis] for axis in displayed):
        return False
    if not np.may_share_memory(raw, layer.data):
        raw[shown] = layer.data[tuple(index)]
    if view is not raw:
        view[shown] = layer.colormap._data_to_texture(raw[shown])
    layer._accumulate_updated_slice(tuple(region))
    layer._partial_labels_refresh()
    if slice_input.ndisplay == 2:
        layer._update_thumbnail()
    return True
