"""``graphcut stereo``: disparity of a rectified pair by alpha-expansion."""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np

from .common import (device_option, memory_error_message, overwrite_option,
                     refuse_existing_output, resolve_device_or_usage_error)

_GREY_MODES = {"L", "I;16", "I", "F"}


def _read_image(path: Path) -> np.ndarray:
    """The image as a grey (H, W) or RGB (H, W, 3) array; alpha and palettes are dropped."""
    from graphcut.imageio import open_image
    try:
        with open_image(path) as image:
            if image.mode in ("1", "LA", "La"):
                image = image.convert("L")
            elif image.mode not in _GREY_MODES | {"RGB"}:
                image = image.convert("RGB")
            return np.asarray(image)
    except (OSError, ValueError) as error:  # ImageReadError names the file and the reason
        raise click.ClickException(f"cannot read image {path}: {error}") from None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


@click.command("stereo")
@click.argument("left", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("right", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--max-disparity", "-d", type=click.IntRange(min=0), required=True,
              help="Largest disparity in pixels; labels are 0..N (left x matches right x-d).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Disparity map: .npy (exact int32 values) or .png (16-bit, disparity x 256, "
                   "KITTI convention).")
@click.option("--preview", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write a colour-mapped preview image (far = blue, near = red).")
@device_option
@click.option("--dump-instances", type=click.Path(file_okay=False, path_type=Path),
              help="Write every move's network to DIR as DIMACS .max files plus DIR/index.json "
                   "with each flow.")
@click.option("--truncation", type=click.IntRange(min=0), default=20, show_default=True,
              help="Data costs are clipped to this many grey levels (0..255 scale).")
@click.option("--birchfield-tomasi/--absolute-difference", default=True, show_default=True,
              help="Sampling-insensitive Birchfield-Tomasi data cost, or plain |L - R|.")
@click.option("--smoothness", type=click.IntRange(min=0), default=6, show_default=True,
              help="Potts weight across intensity edges.")
@click.option("--flat-factor", type=click.IntRange(min=0), default=2, show_default=True,
              help="The Potts weight is multiplied by this between similar neighbours.")
@click.option("--edge-threshold", type=click.FloatRange(min=0), default=8.0, show_default=True,
              help="Neighbours differing by more grey levels than this count as an edge.")
@click.option("--max-cycles", type=click.IntRange(min=1), default=20, show_default=True,
              help="Stop after this many passes over the labels.")
@overwrite_option
def stereo(left, right, max_disparity, output, preview, device, dump_instances, truncation,
           birchfield_tomasi, smoothness, flat_factor, edge_threshold, max_cycles, overwrite):
    """Disparity map of LEFT (rectified with RIGHT) by alpha-expansion with graph cuts.

    Prints the final energy, the number of moves and the max-flow time per backend.
    """
    from tqdm import tqdm

    from graphcut.stereo import disparity
    from graphcut.stereo_io import DISPARITY_SUFFIXES, InstanceDump, write_disparity, \
        write_preview

    if output.suffix.lower() not in DISPARITY_SUFFIXES:
        raise click.BadParameter(f"{output} must end in .npy or .png", param_hint="-o/--output")
    for option, path in (("-o/--output", output), ("--preview", preview)):
        if path is not None and (_same_file(path, left) or _same_file(path, right)):
            raise click.BadParameter(f"{path} is an input image; refusing to overwrite it",
                                     param_hint=option)
    if preview is not None and _same_file(preview, output):
        raise click.BadParameter("--preview and -o name the same file", param_hint="--preview")
    refuse_existing_output(output, "-o/--output", overwrite)
    refuse_existing_output(preview, "--preview", overwrite)
    backend = resolve_device_or_usage_error(device)

    left_image, right_image = _read_image(left), _read_image(right)
    if left_image.shape != right_image.shape:
        raise click.ClickException(
            f"the images differ in size or colour: {left} is {_describe(left_image)}, {right} "
            f"is {_describe(right_image)}; a rectified pair must match")
    width = left_image.shape[1]
    if max_disparity >= width:
        raise click.BadParameter(f"{max_disparity} is not below the image width {width}",
                                 param_hint="--max-disparity")

    progress = tqdm(desc="expansion moves", unit="move", disable=None, leave=False)

    def report(move, network, cut):
        progress.update()
        progress.set_postfix(cycle=move.cycle, alpha=move.alpha, energy=min(
            move.energy_before, move.energy_after))

    callbacks = [report]
    dump = None
    if dump_instances is not None:
        try:
            dump = InstanceDump(dump_instances, comment=f"graphcut stereo {left.name} "
                                                        f"{right.name}, max disparity "
                                                        f"{max_disparity}")
        except OSError as error:
            raise click.ClickException(f"cannot create {dump_instances}: {error}") from None
        callbacks.append(dump)

    def callback(move, network, cut):
        for function in callbacks:
            function(move, network, cut)

    try:
        result = disparity(
            left_image, right_image, max_disparity=max_disparity, truncation=truncation,
            birchfield_tomasi=birchfield_tomasi, smoothness=smoothness,
            edge_threshold=edge_threshold, flat_factor=flat_factor,
            channel_axis=-1 if left_image.ndim == 3 else None, device=backend,
            max_cycles=max_cycles, callback=callback)
        if dump is not None:
            index = dump.write_index()
    except OSError as error:
        raise click.ClickException(f"writing instances failed: {error}") from None
    except MemoryError as error:
        raise click.ClickException(memory_error_message(error, device)) from None
    finally:
        progress.close()

    try:
        write_disparity(output, result.labels)
        if preview is not None:
            write_preview(preview, result.labels, max_disparity=max_disparity)
    except (OSError, ValueError) as error:
        raise click.ClickException(str(error)) from None

    click.echo(f"disparity: {output} ({left_image.shape[1]}x{left_image.shape[0]}, labels "
               f"0..{max_disparity})")
    click.echo(f"energy: {result.energy} (initial {result.initial_energy})")
    click.echo(f"moves: {result.num_moves} solved, {result.accepted_moves} accepted, "
               f"{result.cycles} cycles, {'converged' if result.converged else 'not converged'}")
    for name, seconds in sorted(result.maxflow_seconds.items()):
        click.echo(f"max-flow time [{name}]: {seconds:.3f} s")
    click.echo(f"network build time: {result.build_seconds:.3f} s; total: "
               f"{result.seconds:.3f} s")
    if dump is not None:
        click.echo(f"instances: {len(dump.instances)} in {dump_instances} (index {index})")
    if preview is not None:
        click.echo(f"preview: {preview}")


def _describe(image: np.ndarray) -> str:
    h, w = image.shape[:2]
    kind = "grey" if image.ndim == 2 else f"{image.shape[2]}-channel"
    return f"{w}x{h} {kind}"
