"""Batch segmentation on a Dask cluster: the public name of :mod:`graphcut.batch.dask`.

Needs the ``distributed`` extra: ``pip install 'graphcut[distributed]'``.
"""

from .batch.dask import (ALLOWED_FAILURES, GPU_TASK_SHARE, WORKER_TTL, DaskRunner,  # noqa: F401
                         check_local_workers, gpu_worker_count, local_cluster, run_batch_dask,
                         visible_gpus)
from .batch.dask import __all__  # noqa: F401
