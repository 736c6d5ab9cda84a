"""``graphcut batch``: segment every image of a folder that has a seed file of the same stem."""

from __future__ import annotations

from pathlib import Path

import click

from .common import device_option, resolve_device_or_usage_error
from .segment import lam_option, sigma_option


@click.command("batch")
@click.argument("images_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--seeds-dir", required=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Folder of seed PNGs named like the images (<stem>.png).")
@click.option("-o", "--output-dir", "out_dir", required=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the masks <stem>.png and summary.csv (created if needed).")
@device_option
@lam_option
@sigma_option
@click.option("--overwrite", is_flag=True, help="Redo images whose outputs exist already.")
@click.option("--overlay", is_flag=True, help="Also write overlays to OUTPUT_DIR/overlays/.")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Progress bar on stderr.")
def batch(images_dir, seeds_dir, out_dir, device, lam, sigma, overwrite, overlay, progress):
    """Segment every image in IMAGES_DIR that has a seed file in SEEDS_DIR.

    Writes OUTPUT_DIR/<stem>.png per image and OUTPUT_DIR/summary.csv (status, reason, size,
    flow, seconds, backend per image). A failed image is reported and the others go on; the
    exit status is 1 when any image failed. Images done by an earlier run are skipped unless
    --overwrite.
    """
    from graphcut.batch import FAILED, OK, SKIPPED, SUMMARY_NAME, counts, run_batch

    resolve_device_or_usage_error(device)
    try:
        records = run_batch(images_dir, seeds_dir, out_dir, lam=lam, sigma=sigma, device=device,
                            overwrite=overwrite, overlay=overlay, progress=progress)
    except (NotADirectoryError, ValueError) as error:
        raise click.UsageError(str(error)) from None
    except OSError as error:
        raise click.ClickException(str(error)) from None
    totals = counts(records)
    click.echo(f"{len(records)} images: {totals[OK]} ok, {totals[SKIPPED]} skipped, "
               f"{totals[FAILED]} failed; summary in {out_dir / SUMMARY_NAME}")
    if totals[FAILED]:
        raise SystemExit(1)
