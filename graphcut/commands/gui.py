"""``graphcut gui``: the desktop app (needs the ``gui`` extra, PyQt6)."""

from __future__ import annotations

import sys

import click

from graphcut.segmentation import DEFAULT_LAM

from .common import device_option, max_pixels_option, resolve_device_or_usage_error


@click.command()
@click.argument("image", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--seeds", type=click.Path(exists=True, dir_okay=False),
              help="Seed file to load with IMAGE (label PNG 0/1/2 or red/blue stroke PNG).")
@click.option("--lam", type=click.FloatRange(min=0.0), default=DEFAULT_LAM, show_default=True,
              help="Initial smoothness weight (adjustable in the window).")
@device_option
@max_pixels_option
def gui(image, seeds, lam, device, max_pixels):
    """Open the desktop app, optionally with IMAGE (and its --seeds).

    Paint foreground with the left button and background with the right button; the object
    is segmented again after every stroke. Help > Controls lists every key.
    """
    if seeds is not None and image is None:
        raise click.UsageError("--seeds needs an IMAGE to go with")
    resolve_device_or_usage_error(device)
    try:
        from graphcut.gui import run
    except ImportError as error:
        raise click.ClickException(
            f"the desktop app needs PyQt6, which cannot be loaded ({error}); install it with: "
            "pip install 'graphcut[gui]'") from None
    sys.exit(run(image, seeds=seeds, device=device, lam=lam, max_pixels=max_pixels))
