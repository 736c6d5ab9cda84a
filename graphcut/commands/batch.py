"""``graphcut batch``: segment every image of a folder that has a seed file of the same stem."""

from __future__ import annotations

from pathlib import Path

import click

from .common import device_option, max_pixels_option, resolve_device_or_usage_error
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
@max_pixels_option
@click.option("--overwrite", is_flag=True, help="Redo images whose outputs exist already.")
@click.option("--overlay", is_flag=True, help="Also write overlays to OUTPUT_DIR/overlays/.")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Progress bar on stderr.")
@click.option("--scheduler", metavar="ADDRESS",
              help="Run one task per image on the Dask cluster of this scheduler "
                   "(e.g. tcp://10.0.0.5:8786); the folders must be on a filesystem the "
                   "workers share, at the same paths.")
@click.option("--local-cluster", "n_workers", type=click.IntRange(min=1), metavar="N",
              help="Start a Dask cluster of N worker processes on this machine for the run "
                   "(with the GPU: one worker per GPU).")
@click.option("--gpu-resource/--no-gpu-resource", default=None,
              help="With --scheduler / --local-cluster: each task asks for one GPU=1 resource "
                   "(one image per GPU at a time). Default: when the device is not cpu and "
                   "the cluster's workers offer GPU resources.")
def batch(images_dir, seeds_dir, out_dir, device, lam, sigma, max_pixels, overwrite, overlay,
          progress, scheduler, n_workers, gpu_resource):
    """Segment every image in IMAGES_DIR that has a seed file in SEEDS_DIR.

    Writes OUTPUT_DIR/<stem>.png per image and OUTPUT_DIR/summary.csv (status, reason, size,
    flow, seconds, backend per image). A failed image is reported and the others go on; the
    exit status is 1 when any image failed. Images done by an earlier run are skipped unless
    --overwrite. Ctrl-C cancels the run (exit status 130): finished masks stay, no partial
    file is left, the summary is not written.
    """
    from graphcut.batch import FAILED, OK, SKIPPED, SUMMARY_NAME, counts, run_batch

    if scheduler is not None and n_workers is not None:
        raise click.UsageError("give either --scheduler or --local-cluster, not both")
    if gpu_resource is not None and scheduler is None and n_workers is None:
        raise click.BadParameter("only with --scheduler or --local-cluster",
                                 param_hint="--gpu-resource")
    if scheduler is None:  # with a remote cluster, the workers' GPUs count, not this machine's
        resolve_device_or_usage_error(device)
    options = dict(lam=lam, sigma=sigma, device=device, overwrite=overwrite, overlay=overlay,
                   progress=progress, max_pixels=max_pixels)
    try:
        if scheduler is None and n_workers is None:
            records = run_batch(images_dir, seeds_dir, out_dir, **options)
        else:
            try:
                from graphcut.distributed import run_batch_dask
            except ImportError as error:  # distributed is an optional extra
                raise click.UsageError(f"--scheduler / --local-cluster need Dask distributed "
                                       f"(pip install 'graphcut[distributed]'): {error}") \
                    from None
            records = run_batch_dask(images_dir, seeds_dir, out_dir, scheduler=scheduler,
                                     n_workers=n_workers, gpu_resource=gpu_resource,
                                     **options)
    except KeyboardInterrupt:
        click.echo("interrupted: unfinished images cancelled; finished masks are complete, "
                   "no partial files were left; the summary was not written", err=True)
        raise SystemExit(130) from None
    except (NotADirectoryError, ValueError) as error:
        raise click.UsageError(str(error)) from None
    except OSError as error:  # an unwritable output folder, an unreachable scheduler
        raise click.ClickException(str(error)) from None
    totals = counts(records)
    click.echo(f"{len(records)} images: {totals[OK]} ok, {totals[SKIPPED]} skipped, "
               f"{totals[FAILED]} failed; summary in {out_dir / SUMMARY_NAME}")
    if totals[FAILED]:
        raise SystemExit(1)
