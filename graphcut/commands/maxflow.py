"""``graphcut maxflow``: maximum flow of a DIMACS file, or of every DIMACS file in a folder."""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

import click

from graphcut.solver.files import open_regular_file

from .common import device_option, resolve_device_or_usage_error

SUFFIXES = (".max", ".max.gz", ".max.bz2")
INDEX_NAME = "index.json"

log = logging.getLogger("graphcut.maxflow")


# index.json files larger than this are refused (an index of a million instances is ~60 MB).
INDEX_MAX_BYTES = 64 << 20


def _is_instance(path: Path) -> bool:
    """Whether a folder entry is to be solved: its name ends in a DIMACS suffix. Entries that
    are not regular files (folders, FIFOs, devices) are kept, to be reported as errors rather
    than silently left out."""
    return path.name.lower().endswith(SUFFIXES)


def _outside(folder: Path, path: Path) -> bool:
    """Whether ``path`` (a symbolic link, or inside one) resolves to a place outside
    ``folder``."""
    root = os.path.realpath(folder)
    return os.path.commonpath([root, os.path.realpath(path)]) != root


def _refuse_outside(folder: Path, path: Path) -> None:
    if _outside(folder, path):
        raise OSError(f"{path}: a link to a file outside {folder}; not read (files outside the "
                      "folder are never read when a folder is given)")


def solve_file(path: Path, device: str) -> dict:
    """Read and solve one DIMACS file; the record printed by the command (raises on bad input).

    ``seconds`` is the backend's own time for the max-flow (graph build, solve, cut);
    ``read_seconds`` the time to parse the file.
    """
    from graphcut.solver import min_cut
    from graphcut.solver.dimacs import read_dimacs

    started = time.perf_counter()
    network = read_dimacs(path)
    read_seconds = time.perf_counter() - started
    result = min_cut(network, device=device)
    return {
        "file": str(path),
        "vertices": network.num_vertices,
        "arcs": network.num_arcs,
        "flow": result.flow,
        "source_side_size": int(result.source_side.sum()),
        "backend": result.backend,
        "seconds": result.seconds,
        "read_seconds": read_seconds,
    }


def _read_index(folder: Path) -> dict[str, int] | None:
    """``{file name: expected flow}`` from ``folder/index.json``, or None when there is none.

    The index must be a regular file inside the folder, of at most INDEX_MAX_BYTES; anything
    else (a FIFO, a link leading out of the folder, deeply nested or malformed JSON) fails
    the command with a message, without reading what is outside the folder.
    """
    path = folder / INDEX_NAME
    if not os.path.lexists(path):
        return None
    try:
        _refuse_outside(folder, path)
        handle, size = open_regular_file(path)
        with handle:
            if size > INDEX_MAX_BYTES:
                raise ValueError(f"{size} bytes, more than the {INDEX_MAX_BYTES} an index may "
                                 "have")
            text = handle.read(INDEX_MAX_BYTES + 1).decode("utf-8")
        try:
            data = json.loads(text)
        except RecursionError:
            raise ValueError("nested too deeply") from None
        expected = {}
        for number, entry in enumerate(data["instances"], 1):
            name, flow = entry["file"], entry["flow"]
            if not isinstance(name, str) or not isinstance(flow, int) or isinstance(flow, bool):
                raise ValueError(f"instance {number}: expected a string 'file' and an integer "
                                 f"'flow', got {_short(repr(entry))}")
            expected[name] = flow
        return expected
    except (OSError, ValueError, KeyError, TypeError) as error:
        what = f"missing key {_short(str(error))}" if isinstance(error, KeyError) else str(error)
        if isinstance(error, OSError):
            raise click.ClickException(f"cannot read the index: {what}") from None
        raise click.ClickException(
            f"{path}: not a valid index ({what}); expected "
            '{"instances": [{"file": "NAME.max", "flow": 123}, ...]}') from None


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _describe(record: dict) -> str:
    return (f"flow {record['flow']}, source side {record['source_side_size']} of "
            f"{record['vertices']} vertices, backend {record['backend']}, "
            f"{record['seconds']:.4f} s")


_READ_ERRORS = (OSError, EOFError, ValueError, MemoryError, RuntimeError)


@click.command("maxflow")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@device_option
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object instead of text.")
def maxflow(path: Path, device: str, as_json: bool) -> None:
    """Maximum flow and minimum cut of the DIMACS max-flow file PATH (.max, .max.gz, .max.bz2).

    When PATH is a folder, every such file in it is solved in name order; where the folder holds
    an index.json ({"instances": [{"file": ..., "flow": ...}, ...]}), each flow is checked
    against it and any mismatch fails the job (exit status 1). The source side counts the
    vertices that cannot reach the sink in the final residual network, the source included.
    """
    resolve_device_or_usage_error(device)
    if path.is_dir():
        _solve_folder(path, device, as_json)
        return
    try:
        record = solve_file(path, device)
    except _READ_ERRORS as error:
        log.debug("solving %s failed", path, exc_info=True)
        raise click.ClickException(str(error)) from None
    if as_json:
        click.echo(json.dumps(record))
    else:
        click.echo(f"{path.name}: {_describe(record)}")


def _solve_folder(folder: Path, device: str, as_json: bool) -> None:
    files = sorted(p for p in folder.iterdir() if _is_instance(p))
    if not files:
        raise click.BadParameter(f"no {', '.join(SUFFIXES)} files in {folder}",
                                 param_hint="PATH")
    expected = _read_index(folder)
    records, failed = [], 0
    totals: dict[str, list] = {}
    for path in files:
        try:
            _refuse_outside(folder, path)
            record = solve_file(path, device)
        except _READ_ERRORS as error:
            log.debug("solving %s failed", path, exc_info=True)
            record = {"file": str(path), "status": "error", "error": str(error)}
        else:
            totals.setdefault(record["backend"], [0.0, 0])
            totals[record["backend"]][0] += record["seconds"]
            totals[record["backend"]][1] += 1
            if expected is None or path.name not in expected:
                record["status"] = "unchecked"
            else:
                record["expected_flow"] = expected[path.name]
                record["status"] = "ok" if record["flow"] == expected[path.name] else "mismatch"
        failed += record["status"] in ("error", "mismatch")
        records.append(record)
        if not as_json:
            _echo_record(path.name, record)
    present = {p.name for p in files}
    for name in sorted(set(expected or ()) - present):
        records.append({"file": str(folder / name), "status": "missing",
                        "error": f"listed in {INDEX_NAME} but not in {folder}"})
        failed += 1
        if not as_json:
            click.echo(f"{name}: MISSING (listed in {INDEX_NAME})", err=True)
    total_seconds = {backend: seconds for backend, (seconds, _) in totals.items()}
    if as_json:
        click.echo(json.dumps({"directory": str(folder), "instances": records,
                               "total_seconds": total_seconds, "failed": failed}))
    else:
        for backend, (seconds, count) in totals.items():
            click.echo(f"total max-flow time: {backend} {seconds:.3f} s over {count} "
                       f"instance{'s' if count != 1 else ''}")
        if expected is None:
            click.echo(f"no {INDEX_NAME} in {folder}: flows not checked", err=True)
    if failed:
        raise click.ClickException(f"{failed} of {len(records)} instances failed")


def _echo_record(name: str, record: dict) -> None:
    status = record["status"]
    if status == "error":
        click.echo(f"{name}: ERROR {record['error']}", err=True)
        return
    line = f"{name}: {_describe(record)}"
    if status == "ok":
        line += " [ok]"
    elif status == "mismatch":
        line += f" [MISMATCH: index says {record['expected_flow']}]"
    click.echo(line)
