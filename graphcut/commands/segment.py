"""``graphcut segment``: one image + its seeds -> mask PNG (and an optional overlay); a volume
(multi-page TIFF, .npy, folder of slices) + its seeds -> multi-page mask TIFF (or .npy)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import click

from graphcut.segmentation import SIGMA_MIN

from .common import (FiniteFloatRange, device_option, max_pixels_option, memory_error_message,
                     overwrite_option, refuse_existing_output, resolve_device_or_usage_error)

lam_option = click.option(
    "--lam", type=FiniteFloatRange(min=0), default=None,
    help="Weight of the boundary term against the colour term; larger = smoother boundaries. "
         "Default: the seeds' settings file, else the model's: 10 (histogram), 35 (gmm, auto "
         "on photographs) or 4 (learned, auto on micrographs and volumes).")


class BoxType(click.ParamType):
    """``row0,col0,row1,col1``: four integers, half-open; a volume's ``z0,y0,x0,z1,y1,x1``."""

    name = "R0,C0,R1,C1"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        parts = [p.strip() for p in str(value).split(",")]
        try:
            numbers = tuple(int(p) for p in parts)
        except ValueError:
            numbers = ()
        if len(numbers) not in (4, 6):
            self.fail(f"{value!r} is not four comma-separated integers row0,col0,row1,col1 "
                      "(nor a volume's six, z0,y0,x0,z1,y1,x1)", param, ctx)
        return numbers


model_option = click.option(
    "--model", type=click.Choice(["auto", "histogram", "gmm", "learned"]), default=None,
    help="Appearance model: histogram (Boykov-Jolly), gmm (GrabCut's Gaussian mixtures), "
         "learned (a classifier on filter features trained on the seeds) or auto (gmm with "
         "a box core and live strokes on colour and grey photographs, learned on "
         "micrographs and volumes). "
         "Default: the seeds' settings file, else auto.")
iterations_option = click.option(
    "--iterations", type=click.IntRange(min=0), default=None,
    help="GrabCut re-estimation iterations at most (re-fit the colour models, re-cut). "
         "Default: the settings file, else the model's: 5 (gmm, auto on colour photos) or "
         "0 (histogram, learned).")
keep_option = click.option(
    "--keep", type=click.Choice(["all", "connected"]), default=None,
    help="connected: keep only object parts that touch a seed of their object or the "
         "box's centre. Default: the settings file, else all.")
fill_holes_option = click.option(
    "--fill-holes", "fill_holes", type=click.IntRange(min=0), default=None, metavar="AREA",
    help="Fill holes of fewer than AREA pixels inside objects. Default: the settings file, "
         "else 0 (none).")


def segment_options(function):
    """The colour-model and clean-up options shared by ``segment`` and ``batch``."""
    for option in (fill_holes_option, keep_option, iterations_option, model_option):
        function = option(function)
    return function


class SigmaRange(FiniteFloatRange):
    """A finite float > 0 that is also at least :data:`graphcut.energy.SIGMA_MIN`."""

    def convert(self, value, param, ctx):
        value = super().convert(value, param, ctx)
        if value is not None and value < SIGMA_MIN:
            self.fail(f"{value:g} is too small: sigma must be at least {SIGMA_MIN:g} (below it "
                      "2 sigma**2 underflows and the boundary weights cannot be computed)",
                      param, ctx)
        return value


sigma_option = click.option(
    "--sigma", type=SigmaRange(min=0, min_open=True), default=None,
    help="Colour difference (intensities scaled to 0..1) at which a boundary weight is "
         "exp(-1/2). Default: estimated from the image.")


class _DeviceStart:
    """A thread that resolves ``--device`` (a usage error when it cannot be used) and, for the
    GPU, creates the CUDA context and loads the segmentation's kernels
    (:func:`graphcut.solver.prepare_gpu_process`), while the main thread imports what
    it needs and decodes the image and the seeds (Pillow and the CUDA driver release the GIL)."""

    def __init__(self, device: str):
        self._device = device
        self._cancelled = False
        self._resolved = threading.Event()
        self._backend = self._error = None
        self._thread = threading.Thread(target=self._run, name="graphcut-device-start")
        self._thread.start()

    def _run(self) -> None:
        try:
            self._backend = resolve_device_or_usage_error(self._device)
        except BaseException as error:  # re-raised by result() in the main thread
            self._error = error
        finally:
            self._resolved.set()
        if self._backend == "cuda" and not self._cancelled:
            try:
                from graphcut.solver import prepare_gpu_process as prepare_process
                prepare_process()
            except Exception:  # a head start only: the segmentation reports the failure
                pass

    def result(self) -> str:
        """The backend ``--device`` resolves to; raises its usage error."""
        self._resolved.wait()
        if self._error is not None:
            raise self._error
        return self._backend

    def cancel(self) -> None:
        """Skip the GPU preparation if it has not started (the command failed)."""
        self._cancelled = True

    def join(self) -> None:
        """Wait for the thread (so that it never runs into the interpreter's exit)."""
        self._thread.join()


def _check_box(image: Path, box) -> None:
    """Usage error (exit 2) for a box outside the image (its size read from the header)."""
    from graphcut.io import image_info

    try:  # the header only; a FIFO or a device is refused, never opened
        info = image_info(image, max_pixels=0)
        width, height = info.width, info.height
    except Exception:  # noqa: BLE001 - an unreadable image is reported when it is read
        return
    r0, c0, r1, c1 = box
    if not (0 <= r0 < r1 <= height and 0 <= c0 < c1 <= width):
        raise click.BadParameter(
            f"{r0},{c0},{r1},{c1} must satisfy 0 <= row0 < row1 <= {height} and "
            f"0 <= col0 < col1 <= {width} (half-open, inside the {width}x{height} image)",
            param_hint="--box")


def _same_file(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def _spacing(ctx, param, value):
    if value is None:
        return None
    try:
        spacing = tuple(float(v) for v in value.split(","))
    except ValueError:
        spacing = ()
    if len(spacing) != 3 or not all(0 < v < float("inf") for v in spacing):
        raise click.BadParameter(f"{value!r} is not three positive numbers DZ,DY,DX")
    return spacing


@click.command("segment")
@click.argument("image", type=click.Path(exists=True, path_type=Path))
@click.option("--seeds", "seeds_path",
              type=click.Path(exists=True, path_type=Path),
              help="Seed PNG, same size as IMAGE: labels 0 none / 1 object / 2 background "
                   "(further objects 3, 4, ...), or red/blue strokes; its settings file "
                   "(same name, .json) is used when present. For a volume: a multi-page TIFF "
                   "or .npy of labels, or a folder of seed slices.")
@click.option("--box", type=BoxType(), default=None,
              help="Box around the object, half-open pixel rows and columns: outside is "
                   "background. With or without --seeds. A volume's box (with --seeds): "
                   "z0,y0,x0,z1,y1,x1.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Mask to write (0 = background, 255 = object; always lossless): .png or "
                   ".tif, or for a volume a multi-page TIFF (.tif) or .npy. With several "
                   "objects a label image (0 = background, each object its seed label).")
@click.option("--overlay", "overlay_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the image with the object tinted and outlined (for a volume: "
                   "a multi-page RGB TIFF).")
@device_option
@lam_option
@sigma_option
@click.option("--spacing", callback=_spacing, metavar="DZ,DY,DX",
              help="Voxel size of a volume along z, y, x (e.g. 2,1,1 for slices twice as far "
                   "apart as pixels); n-links along an axis are weighed by min/size. "
                   "Default: isotropic.")
@segment_options
@max_pixels_option
@overwrite_option
def segment(image, seeds_path, box, output, overlay_path, device, lam, sigma, spacing, model,
            iterations, keep, fill_holes, max_pixels, overwrite):
    """Segment IMAGE (or a volume: multi-page TIFF, .npy, folder of slices) from the
    scribbles in SEEDS and / or a --box, and write the mask.

    Prints one line to stdout: size, flow, object share, backend and seconds. Existing output
    files are replaced only with --overwrite.
    """
    if seeds_path is None and box is None:
        raise click.UsageError("give --seeds, --box or both")
    chosen = dict(box=box, model=model, iterations=iterations, keep=keep, fill_holes=fill_holes)
    options = {key: value for key, value in chosen.items() if value is not None}
    device_ready = _DeviceStart(device)  # resolves the device while the imports and reads run
    try:
        _segment(device_ready, image, seeds_path, output, overlay_path, device, lam, sigma,
                 spacing, max_pixels, overwrite, options)
    except BaseException:
        device_ready.cancel()
        raise
    finally:
        device_ready.join()


def _segment(device_ready, image, seeds_path, output, overlay_path, device, lam, sigma, spacing,
             max_pixels, overwrite, options):
    from graphcut.batch import segment_paths
    from graphcut.io import (MASK_SUFFIXES, TIFF_SUFFIXES, check_lossless_suffix,
                             check_writable_image_suffix, segments_as_volume)
    from graphcut.segmentation import check_image_file, segment_volume_paths

    volume = seeds_path is not None and segments_as_volume(image, seeds_path)
    box_size = len(options.get("box") or ()) or (6 if volume else 4)
    if box_size != (6 if volume else 4):
        raise click.BadParameter("a volume's box is six integers z0,y0,x0,z1,y1,x1" if volume
                                 else "six integers are a volume's box; an image's is "
                                 "row0,col0,row1,col1", param_hint="--box")
    if options.get("box") is not None and not volume:
        _check_box(image, options["box"])
    if volume and output.suffix.lower() not in MASK_SUFFIXES:
        raise click.BadParameter(f"{output}: the mask of a volume is written as a multi-page "
                                 "TIFF (.tif, .tiff) or .npy", param_hint="-o/--output")
    if volume and overlay_path is not None and overlay_path.suffix.lower() not in TIFF_SUFFIXES:
        raise click.BadParameter(f"{overlay_path}: the overlay of a volume is written as a "
                                 "multi-page TIFF (.tif, .tiff)", param_hint="--overlay")
    if spacing is not None and not volume:
        raise click.BadParameter("only for volumes", param_hint="--spacing")
    if not volume and (image.is_dir() or (seeds_path is not None and seeds_path.is_dir())):
        raise click.BadParameter(f"{image if image.is_dir() else seeds_path} is a folder; "
                                 "only a volume's slices and seeds may be folders",
                                 param_hint="IMAGE" if image.is_dir() else "--seeds")

    checks = () if volume else (("-o/--output", output, check_lossless_suffix),
                                ("--overlay", overlay_path, check_writable_image_suffix))
    for option, path, check in checks:
        try:
            if path is not None:
                check(path)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint=option) from None
    for option, path in (("-o/--output", output), ("--overlay", overlay_path)):
        if path is None:
            continue
        for what, source in (("IMAGE", image), ("--seeds", seeds_path)):
            if source is not None and _same_file(path, source):
                raise click.BadParameter(f"{path} is the {what} file; outputs never overwrite "
                                         "inputs", param_hint=option)
            if source is not None and source.is_dir() and _same_file(path.parent, source):
                raise click.BadParameter(f"{path} is inside the {what} folder; outputs are "
                                         "never written among the input slices",
                                         param_hint=option)
    if overlay_path is not None and _same_file(output, overlay_path):
        raise click.BadParameter("the overlay and the mask must be different files",
                                 param_hint="--overlay")
    refuse_existing_output(output, "-o/--output", overwrite)
    refuse_existing_output(overlay_path, "--overlay", overwrite)
    device_ready.result()  # the device's usage error (exit 2), if any, before any reading
    started = time.perf_counter()
    try:
        if volume:  # its memory is checked from the headers (memory.check_volume_file)
            mask, result = segment_volume_paths(image, seeds_path, output,
                                                overlay_path=overlay_path,
                                                lam=lam, sigma=sigma, device=device,
                                                spacing=spacing, max_pixels=max_pixels,
                                                segment_options=options)
        else:
            # from the image's header, before decoding: refuse what cannot fit
            check_image_file(image, device, max_pixels=max_pixels, model=options.get("model"),
                             region=options.get("box") is not None)
            mask, result = segment_paths(image, seeds_path, output, overlay_path=overlay_path,
                                         lam=lam, sigma=sigma, device=device,
                                         max_pixels=max_pixels, segment_options=options)
    except (OSError, ValueError, TypeError) as error:
        raise click.ClickException(str(error)) from None
    except MemoryError as error:
        raise click.ClickException(memory_error_message(error, device)) from None
    seconds = time.perf_counter() - started
    size = "x".join(str(n) for n in mask.shape[::-1]) + (" voxels" if volume else " px")
    labels = "" if mask.dtype == bool else \
        f" (labels {', '.join(str(v) for v in sorted(set(mask.ravel().tolist()) - {0}))})"
    click.echo(f"{image.name}: {size}, flow {result.flow}, object "
               f"{100.0 * (mask != 0).mean():.1f} %{labels}, backend {result.backend}, "
               f"{seconds:.3f} s (solve {result.seconds:.3f} s) -> {output}")
