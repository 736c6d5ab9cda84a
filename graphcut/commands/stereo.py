"""``graphcut stereo``: disparity of a rectified pair by alpha-expansion."""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np

from .common import (FiniteFloatRange, device_option, memory_error_message, overwrite_option,
                     refuse_existing_output, resolve_device_or_usage_error)

_GREY_MODES = {"L", "I;16", "I", "F"}


def _read_image(path: Path) -> np.ndarray:
    """The image as a grey (H, W) or RGB (H, W, 3) array; alpha and palettes are dropped."""
    from graphcut.io import open_image
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


def _read_truth(path: Path, shape) -> np.ndarray:
    from graphcut.stereo.io import read_disparity
    try:
        truth = np.asarray(read_disparity(path), dtype=np.float64)
    except (OSError, ValueError, MemoryError) as error:
        raise click.ClickException(f"cannot read ground truth {path}: {error}") from None
    if truth.shape != tuple(shape):
        raise click.ClickException(f"ground truth {path} is {truth.shape[1]}x{truth.shape[0]}, "
                                   f"the images are {shape[1]}x{shape[0]}")
    return truth


@click.command("stereo")
@click.argument("left", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("right", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--max-disparity", "-d", type=click.IntRange(min=0), required=True,
              help="Largest disparity in pixels; labels are 0..N (left x matches right x-d).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Disparity map: .npy (exact int32 values) or .png (16-bit, disparity x 256, "
                   "KITTI convention).")
@click.option("--preview", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write a colour map with a colour bar (far = blue, near = red), PNG.")
@click.option("--ground-truth", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Known disparities (.png KITTI, .npy or .pfm; NaN/0/inf = unknown): print "
                   "the bad-pixel rate.")
@click.option("--bad-threshold", type=FiniteFloatRange(min=0, max=1e6), default=1.0,
              show_default=True, help="A pixel is bad when |d - d_true| exceeds this.")
@device_option
@click.option("--dump-instances", type=click.Path(file_okay=False, path_type=Path),
              help="Write every move's network to DIR as DIMACS .max files plus DIR/index.json "
                   "with each flow.")
@click.option("--data-cost", type=click.Choice(["ad-census", "bt", "ad"]), default="ad-census",
              show_default=True,
              help="AD-census with aggregation, or per-pixel Birchfield-Tomasi / absolute "
                   "difference clipped at --truncation.")
@click.option("--aggregation-radius", type=click.IntRange(0, 15), default=2, show_default=True,
              help="--aggregation box: AD-census costs are averaged over (2r+1) x (2r+1) "
                   "boxes.")
@click.option("--aggregation", type=click.Choice(["box", "cross"]), default=None,
              help="AD-census costs are averaged over boxes, or over cross-based support "
                   "regions that stop at colour edges of the left image [default: the "
                   "library's, CensusParameters().aggregation].")
@click.option("--cross-threshold", type=click.IntRange(0, 255), default=None,
              help="--aggregation cross: arms stop before a pixel differing by more grey levels "
                   "than this in some channel [default: the library's].")
@click.option("--cross-length", type=click.IntRange(0, 64), default=None,
              help="--aggregation cross: longest arm, in pixels [default: the library's].")
@click.option("--truncation", type=click.IntRange(0, 255), default=20, show_default=True,
              help="bt/ad data costs are clipped to this many grey levels (0..255 scale).")
@click.option("--smoothness", type=click.IntRange(0, 1 << 20), default=8, show_default=True,
              help="Smoothness weight per pixel of disparity step across intensity edges.")
@click.option("--flat-factor", type=click.IntRange(0, 1024), default=4, show_default=True,
              help="The smoothness weight is multiplied by this between similar neighbours.")
@click.option("--edge-threshold", type=FiniteFloatRange(0, 255), default=8.0,
              show_default=True,
              help="Neighbours differing by more grey levels than this count as an edge.")
@click.option("--smoothness-truncation", type=click.IntRange(1, 1 << 16), default=3,
              show_default=True,
              help="Pairwise cost = weight x min(|d_p - d_q|, this); 1 = Potts.")
@click.option("--fill-occlusions/--no-fill-occlusions", default=True, show_default=True,
              help="Replace pixels failing the left-right check by the nearest background "
                   "disparity on their row.")
@click.option("--border-extrapolation/--no-border-extrapolation", default=False,
              show_default=True,
              help="With --fill-occlusions: continue the slope of the surface next to the "
                   "left border into the strip the right camera does not see.")
@click.option("--plane-fill/--no-plane-fill", default=False, show_default=True,
              help="With --fill-occlusions: pixels failing the left-right check take the "
                   "plane fitted to the consistent pixels of their colour segment, where it "
                   "fits them well.")
@click.option("--edge-refinement/--no-edge-refinement", default=False, show_default=True,
              help="With --fill-occlusions: pixels near depth edges take the colour-weighted "
                   "median of the disparities around them.")
@click.option("--foreground-trim/--no-foreground-trim", default=True, show_default=True,
              help="With --fill-occlusions: give a flat background back the pixels a nearer "
                   "object's disparity spread over, up to its colour edge.")
@click.option("--max-cycles", type=click.IntRange(1, 1000), default=2, show_default=True,
              help="Passes over the labels (the moves stop earlier when none helps).")
@overwrite_option
def stereo(left, right, max_disparity, output, preview, ground_truth, bad_threshold, device,
           dump_instances, data_cost, aggregation_radius, aggregation, cross_threshold,
           cross_length, truncation, smoothness, flat_factor, edge_threshold,
           smoothness_truncation, fill_occlusions, border_extrapolation, plane_fill,
           edge_refinement, foreground_trim, max_cycles, overwrite):
    """Disparity map of LEFT (rectified with RIGHT) by alpha-expansion with graph cuts.

    Prints the final energy, the moves, the time per stage and the max-flow time per backend,
    the share of pixels filled as occluded, and the bad-pixel rate with --ground-truth.
    """
    from tqdm import tqdm

    from graphcut.solver.memory import HostMemoryError
    from graphcut.stereo import (BorderExtrapolation, CensusParameters, EdgeRefinement,
                                 ForegroundTrim, PlaneFill, bad_pixel_rate,
                                 check_energy_range, disparity)
    from graphcut.stereo.io import DISPARITY_SUFFIXES, InstanceDump, write_disparity, \
        write_preview

    if output.suffix.lower() not in DISPARITY_SUFFIXES:
        raise click.BadParameter(f"{output} must end in .npy or .png", param_hint="-o/--output")
    if preview is not None and preview.suffix.lower() != ".png":
        raise click.BadParameter(f"{preview} must end in .png", param_hint="--preview")
    for option, path in (("-o/--output", output), ("--preview", preview)):
        if path is not None and any(_same_file(path, p) for p in (left, right, ground_truth)
                                    if p is not None):
            raise click.BadParameter(f"{path} is an input file; refusing to overwrite it",
                                     param_hint=option)
    if preview is not None and _same_file(preview, output):
        raise click.BadParameter("--preview and -o name the same file", param_hint="--preview")
    census = CensusParameters(aggregation_radius=aggregation_radius)
    for name, value in (("aggregation", aggregation), ("cross_threshold", cross_threshold),
                        ("cross_length", cross_length)):
        if value is not None:
            census = census._replace(**{name: value})
    try:
        check_energy_range(max_disparity=max_disparity, data_cost=data_cost, census=census,
                           truncation=truncation, smoothness=smoothness,
                           flat_factor=flat_factor, smoothness_truncation=smoothness_truncation)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--smoothness/--flat-factor/"
                                                        "--smoothness-truncation") from None
    refuse_existing_output(output, "-o/--output", overwrite)
    refuse_existing_output(preview, "--preview", overwrite)
    _refuse_existing_dump(dump_instances, overwrite)
    backend = resolve_device_or_usage_error(device)

    # from the headers, before anything is decoded: the pair's sizes and the memory it needs
    _check_pair_memory(left, right, max_disparity, backend, data_cost)
    left_image, right_image = _read_image(left), _read_image(right)
    if left_image.shape != right_image.shape:
        raise click.ClickException(
            f"the images differ in size or colour: {left} is {_describe(left_image)}, {right} "
            f"is {_describe(right_image)}; a rectified pair must match")
    width = left_image.shape[1]
    if max_disparity >= width:
        raise click.BadParameter(f"{max_disparity} is not below the image width {width}",
                                 param_hint="--max-disparity")
    truth = _read_truth(ground_truth, left_image.shape[:2]) if ground_truth else None

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
            left_image, right_image, max_disparity=max_disparity, data_cost=data_cost,
            census=census, truncation=truncation, smoothness=smoothness,
            flat_factor=flat_factor, edge_threshold=edge_threshold,
            smoothness_truncation=smoothness_truncation, fill_occlusions=fill_occlusions,
            channel_axis=-1 if left_image.ndim == 3 else None,
            device="auto" if device == "auto" else backend, max_cycles=max_cycles,
            callback=callback,
            border_extrapolation=BorderExtrapolation() if border_extrapolation else None,
            edge_refinement=EdgeRefinement() if edge_refinement else None,
            plane_fill=PlaneFill() if plane_fill else None,
            foreground_trim=ForegroundTrim() if foreground_trim else None)
        if dump is not None:
            index = dump.write_index()
    except OSError as error:
        raise click.ClickException(f"writing instances failed: {error}") from None
    except HostMemoryError as error:  # refused before anything was built; says why
        raise click.ClickException(str(error)) from None
    except MemoryError as error:
        raise click.ClickException(memory_error_message(error, device)) from None
    finally:
        progress.close()

    try:
        write_disparity(output, result.disparity)
        if preview is not None:
            write_preview(preview, result.disparity, max_disparity=max_disparity)
    except (OSError, ValueError) as error:
        raise click.ClickException(str(error)) from None

    seconds = result.stage_seconds
    click.echo(f"disparity: {output} ({left_image.shape[1]}x{left_image.shape[0]}, labels "
               f"0..{max_disparity}, {result.backend})")
    click.echo(f"energy: {result.energy} (initial {result.initial_energy})")
    click.echo(f"moves: {result.num_moves} solved, {result.accepted_moves} accepted, "
               f"{result.cycles} cycles, {'converged' if result.converged else 'not converged'}")
    for name, value in sorted(result.maxflow_seconds.items()):
        click.echo(f"max-flow time [{name}]: {value:.3f} s")
    click.echo(f"time: costs {seconds['costs']:.3f} s, expansion {seconds['expansion']:.3f} s "
               f"(network build {result.build_seconds:.3f} s), post {seconds['post']:.3f} s; "
               f"total {seconds['total']:.3f} s")
    if result.inconsistent is not None:
        click.echo(f"occluded or inconsistent (filled): {result.inconsistent.mean():.1%} of "
                   f"pixels")
    if truth is not None:
        known = np.isfinite(truth)
        if not known.any():
            click.echo(f"bad pixels: no known disparity in {ground_truth}")
        else:
            rate = bad_pixel_rate(result.disparity, truth, threshold=bad_threshold)
            click.echo(f"bad pixels (|d - d_true| > {bad_threshold:g}): {rate:.2%} of "
                       f"{int(known.sum())} pixels with ground truth")
    if dump is not None:
        click.echo(f"instances: {len(dump.instances)} in {dump_instances} (index {index})")
    if preview is not None:
        click.echo(f"preview: {preview}")


def _refuse_existing_dump(folder: Path | None, overwrite: bool) -> None:
    """Usage error (exit 2) when the --dump-instances folder already holds instances (an
    index.json or move_*.max files) and --overwrite was not given."""
    if folder is None or overwrite or not folder.is_dir():
        return
    found = sorted(p.name for p in folder.iterdir()
                   if p.name == "index.json" or (p.name.startswith("move_") and ".max" in p.name))
    if found:
        raise click.BadParameter(f"{folder} already holds dumped instances ({found[0]}"
                                 f"{', ...' if len(found) > 1 else ''}); pass --overwrite to "
                                 "replace them", param_hint="--dump-instances")


def _check_pair_memory(left: Path, right: Path, max_disparity: int, backend: str,
                       data_cost: str) -> None:
    """From the two images' headers: a ClickException when their sizes differ, or when
    decoding them and computing the disparity would not fit in the memory available."""
    from graphcut.io import decode_bytes, image_info
    from graphcut.solver.memory import HostMemoryError, require_host_memory
    from graphcut.stereo import host_memory_needed, memory_needed
    try:
        infos = [image_info(path) for path in (left, right)]
    except (OSError, ValueError) as error:  # ImageReadError names the file and the reason
        raise click.ClickException(f"cannot read image: {error}") from None
    (h, w), (h2, w2) = [(info.height, info.width) for info in infos]
    if (h, w) != (h2, w2):
        raise click.ClickException(f"the images differ in size: {left} is {w}x{h}, {right} is "
                                   f"{w2}x{h2}; a rectified pair must match")
    if max_disparity >= w:
        raise click.BadParameter(f"{max_disparity} is not below the image width {w}",
                                 param_hint="--max-disparity")
    decode = 2 * decode_bytes(w, h, "RGB")  # both images: Pillow's copy and the array
    solve = (memory_needed((h, w), max_disparity, "cpu", data_cost) if backend == "cpu"
             else host_memory_needed((h, w), max_disparity, data_cost))
    try:
        require_host_memory(decode + solve, f"a {max_disparity + 1}-label cost volume for a "
                                            f"{w}x{h} pair and its expansion moves, with "
                                            f"decoding {left.name} and {right.name}")
    except HostMemoryError as error:
        raise click.ClickException(str(error)) from None


def _describe(image: np.ndarray) -> str:
    h, w = image.shape[:2]
    kind = "grey" if image.ndim == 2 else f"{image.shape[2]}-channel"
    return f"{w}x{h} {kind}"
