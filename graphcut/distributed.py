"""Batch segmentation on a Dask cluster: the public name of :mod:`graphcut.batch.dask`.

Needs the ``distributed`` extra: ``pip install 'graphcut[distributed]'``.
"""

from .batch import dask as _dask
from .batch.dask import *  # noqa: F403

__all__ = _dask.__all__
