"""``graphcut batch``: segment every image of a folder that has a seed file of the same stem."""

from __future__ import annotations

from pathlib import Path

import click

from .common import (FiniteFloatRange, device_option, max_pixels_option,
                     resolve_device_or_usage_error)
from .segment import lam_option, segment_options, sigma_option


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
@segment_options
@max_pixels_option
@click.option("--overwrite", is_flag=True, help="Redo images whose outputs exist already.")
@click.option("--overlay", is_flag=True, help="Also write overlays to OUTPUT_DIR/overlays/.")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Progress bar on stderr.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), metavar="N",
              help="Images processed at once on this machine. CPU: worker processes, one "
                   "image each (default: the cores; 1 = in this process). GPU: images in the "
                   "pipeline around the card, one solving while the others are read and "
                   "written (default 8).")
@click.option("--scheduler", metavar="ADDRESS",
              help="Run one task per image on the Dask cluster of this scheduler "
                   "(e.g. tcp://10.0.0.5:8786); the folders must be on a filesystem the "
                   "workers share, at the same paths.")
@click.option("--local-cluster", "n_workers", type=click.IntRange(min=1), metavar="N",
              help="Start a Dask cluster of N worker processes on this machine for the run "
                   "(with the GPU: one worker per GPU).")
@click.option("--gpu-resource/--no-gpu-resource", default=None,
              help="With --scheduler / --local-cluster: each task asks for 1/8 of a GPU "
                   "resource (8 images in flight per GPU worker, one solving). Default: when "
                   "the device is not cpu and the cluster's workers offer GPU resources.")
@click.option("--task-timeout", type=FiniteFloatRange(min=0, min_open=True), metavar="SECONDS",
              help="With --scheduler / --local-cluster: restart the worker of an image that "
                   "runs longer than this; the image runs again elsewhere.")
def batch(images_dir, seeds_dir, out_dir, device, lam, sigma, model, iterations, keep,
          fill_holes, max_pixels, overwrite, overlay, progress, jobs, scheduler, n_workers,
          gpu_resource, task_timeout):
    """Segment every image in IMAGES_DIR that has a seed file in SEEDS_DIR.

    Each seed file's settings (<stem>.json next to it: model, lam, box, ...) are used when
    present; options given here win over them. Seeds of several objects (labels 1, 3, 4, ...)
    give a label image instead of the 0/255 mask.

    Writes OUTPUT_DIR/<stem>.png per image and OUTPUT_DIR/summary.csv (status, reason, size,
    flow, seconds, backend, parameters per image; a row as each image finishes). A failed
    image is reported and the others go on; the exit status is 1 when any image failed.
    Images done by an earlier run with the same parameters and inputs are skipped unless
    --overwrite. Ctrl-C cancels the run (exit status 130; SIGTERM: 143): finished masks stay
    and are in the summary, no partial file is left. One run at a time per OUTPUT_DIR.
    """
    from graphcut.batch import (FAILED, OK, SKIPPED, SUMMARY_NAME, OutputFolderBusyError, counts,
                                run_batch)

    if scheduler is not None and n_workers is not None:
        raise click.UsageError("give either --scheduler or --local-cluster, not both")
    distributed = scheduler is not None or n_workers is not None
    if gpu_resource is not None and not distributed:
        raise click.BadParameter("only with --scheduler or --local-cluster",
                                 param_hint="--gpu-resource")
    if task_timeout is not None and not distributed:
        raise click.BadParameter("only with --scheduler or --local-cluster",
                                 param_hint="--task-timeout")
    if jobs is not None and distributed:
        raise click.BadParameter("not with --scheduler or --local-cluster (each worker runs "
                                 "as many images as it has threads)", param_hint="--jobs")
    if scheduler is None:  # with a remote cluster, the workers' GPUs count, not this machine's
        resolve_device_or_usage_error(device)
    chosen = dict(model=model, iterations=iterations, keep=keep, fill_holes=fill_holes)
    options = dict(lam=lam, sigma=sigma, device=device, overwrite=overwrite, overlay=overlay,
                   progress=progress, max_pixels=max_pixels,
                   segment_options={k: v for k, v in chosen.items() if v is not None} or None)
    try:
        if not distributed:
            records = run_batch(images_dir, seeds_dir, out_dir, jobs=jobs, **options)
        else:
            try:
                from graphcut.batch.dask import run_batch_dask
            except ImportError as error:  # distributed is an optional extra
                raise click.UsageError(f"--scheduler / --local-cluster need Dask distributed "
                                       f"(pip install 'graphcut[distributed]'): {error}") \
                    from None
            records = run_batch_dask(images_dir, seeds_dir, out_dir, scheduler=scheduler,
                                     n_workers=n_workers, gpu_resource=gpu_resource,
                                     task_timeout=task_timeout, **options)
    except KeyboardInterrupt as interrupt:
        click.echo("interrupted: unfinished images cancelled; finished masks are complete and "
                   "listed in the summary, no partial files were left", err=True)
        raise SystemExit(128 + int(getattr(interrupt, "signal", 2))) from None
    except OutputFolderBusyError as error:
        raise click.ClickException(str(error)) from None
    except (NotADirectoryError, ValueError) as error:
        raise click.UsageError(str(error)) from None
    except OSError as error:  # an unwritable output folder, an unreachable scheduler
        raise click.ClickException(str(error)) from None
    except MemoryError as error:  # a previous summary.csv too large to read
        raise click.ClickException(str(error) or type(error).__name__) from None
    totals = counts(records)
    click.echo(f"{len(records)} images: {totals[OK]} ok, {totals[SKIPPED]} skipped, "
               f"{totals[FAILED]} failed; summary in "
               f"{click.format_filename(out_dir / SUMMARY_NAME)}")
    if totals[FAILED]:
        raise SystemExit(1)
