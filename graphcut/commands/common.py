"""Options and helpers shared by the sub-commands."""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

import click

from graphcut.solver import DEVICES

device_option = click.option(
    "--device", type=click.Choice(DEVICES), default="auto", show_default=True,
    help="auto: the GPU when CuPy sees one, else the CPU; cpu: PyMaxflow; cuda: the GPU core.")


class FiniteFloatRange(click.FloatRange):
    """click.FloatRange that also refuses NaN and infinity (usage error, exit 2)."""

    def convert(self, value, param, ctx):
        value = super().convert(value, param, ctx)
        if value is not None and not math.isfinite(value):
            self.fail(f"{value} is not a finite number in the range {self._describe_range()}",
                      param, ctx)
        return value


def setup_logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="graphcut: %(levelname)s: %(message)s")


def resolve_device_or_usage_error(device: str) -> str:
    """The backend that will run, or a click usage error (exit 2) saying why it cannot; on
    the GPU with an empty CuPy kernel cache, a note on stderr that this first run waits for
    CuPy's compiler (:func:`first_gpu_run_note`)."""
    from graphcut.solver import BackendUnavailableError, resolve_device
    try:
        backend = resolve_device(device)
    except BackendUnavailableError as error:
        raise click.BadParameter(str(error), param_hint="--device") from None
    note = first_gpu_run_note(backend)
    if note:
        click.echo(note, err=True)
    return backend


def first_gpu_run_note(backend: str) -> str | None:
    """What to tell a user whose GPU run will first compile CuPy's kernels, or None.

    CuPy compiles the kernels the default models use the first time each runs on a machine
    and keeps them in its kernel cache (``CUPY_CACHE_DIR``, default ``~/.cupy/kernel_cache``):
    the first run waits about 10-40 s (an H200; ``docs/getting-started.md``), later ones about
    a second. None when ``backend`` is not "cuda", when that folder holds anything, or with
    ``CUPY_CACHE_IN_MEMORY=1`` (every process compiles: nothing to announce once).

    Examples
    --------
    >>> first_gpu_run_note("cpu") is None
    True
    """
    if backend != "cuda" or os.environ.get("CUPY_CACHE_IN_MEMORY", "") == "1":
        return None
    folder = Path(os.environ.get("CUPY_CACHE_DIR") or Path.home() / ".cupy" / "kernel_cache")
    try:
        with os.scandir(folder) as entries:
            if next(entries, None) is not None:
                return None
    except OSError:  # absent (a fresh machine) or unreadable: CuPy will compile
        pass
    return (f"graphcut: CuPy's kernel cache ({folder}) is empty: this first GPU run on the "
            "machine compiles CuPy's kernels, about 10-40 s once; later runs start in about "
            "a second")


max_pixels_option = click.option(
    "--max-pixels", type=click.IntRange(min=1), default=None, metavar="N",
    help="Largest image (width x height) to open. Default: Pillow's decompression-bomb limit "
         "(about 89 million); raise it to open larger images deliberately.")


overwrite_option = click.option(
    "--overwrite", is_flag=True, help="Replace output files that exist already.")


def refuse_existing_output(path: Path | None, option: str, overwrite: bool) -> None:
    """Usage error (exit 2) when ``path`` exists and ``--overwrite`` was not given."""
    if path is not None and not overwrite and path.exists():
        raise click.BadParameter(f"{path} exists already; pass --overwrite to replace it",
                                 param_hint=option)


def memory_error_message(error: MemoryError, device: str) -> str:
    """A one-line explanation of an out-of-memory error during a solve, with what to try."""
    reason = str(error) or type(error).__name__
    gpu = "GPU" in type(error).__name__ or type(error).__module__.startswith("cupy")
    if gpu:
        hint = ("use --device cpu, or --device auto, which falls back to the CPU when the GPU "
                "runs out of memory" if device == "cuda" else "use --device cpu")
        return f"the GPU ran out of memory: {reason}; {hint}"
    return f"out of memory: {reason}; the input is too large for this machine's memory"
