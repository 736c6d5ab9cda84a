"""Options and helpers shared by the sub-commands."""

from __future__ import annotations

import logging

import click

from graphcut.solver import DEVICES

device_option = click.option(
    "--device", type=click.Choice(DEVICES), default="auto", show_default=True,
    help="auto: the GPU when CuPy sees one, else the CPU; cpu: PyMaxflow; cuda: the GPU core.")


def setup_logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="graphcut: %(levelname)s: %(message)s")


def resolve_device_or_usage_error(device: str) -> str:
    """The backend that will run, or a click usage error (exit 2) saying why it cannot."""
    from graphcut.solver import BackendUnavailableError, resolve_device
    try:
        return resolve_device(device)
    except BackendUnavailableError as error:
        raise click.BadParameter(str(error), param_hint="--device") from None
