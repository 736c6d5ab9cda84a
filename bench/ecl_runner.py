"""Run ECL-MaxFlow (Vanausdal and Burtscher, IPCCC 2025; github.com/burtscher/ECL-MaxFlow)
live on our instances, for bench/bench_csr.py.

Nothing of ECL-MaxFlow is in this repository, and this module does not build it: it takes the
path of an executable built from its published source (its ``main.cu``) by the person running
the benchmark. The executable reads a binary ECL graph file
(int32 little-endian: nodes, edges, nindex[nodes + 1], nlist[edges], eweight[edges]; the
capacities are the absolute weights) and the source and sink vertex numbers, runs its GPU
push-relabel ``runs`` times and prints, per run, its phases' times and the flow value.

What is compared:

- ECL phase I: "initial global relabel from sink ... in X s" plus "Phase 1 complete, minimum
  cut found in Y s": from the residual network on the GPU to the maximum preflow (the minimum
  cut), as our "GPU phase I" (capacities already on the device; the initial saturating pushes
  from the source, a few microseconds, are not in either printed time).
- ECL total: its own "runtime", phase I plus its phase II (returning the excess to the source
  to make a flow), which our core does not do.

Medians are over the runs after the first (the first pays lazy CUDA module loading).
"""

from __future__ import annotations

import re
import statistics
import subprocess
import tempfile
from pathlib import Path

import sys

import numpy as np

INT32_MAX = 2**31 - 1

_FLOW = re.compile(r"Maximum flow from nodes (\d+) to (\d+): (-?\d+)")
_RUNTIME = re.compile(r"^runtime: ([0-9.eE+-]+)s", re.MULTILINE)
_INITIAL = re.compile(r"initial global relabel from sink: \d+ iters in ([0-9.eE+-]+)s")
_PHASE1 = re.compile(r"Phase 1 complete, minimum cut found in ([0-9.eE+-]+)s")


class ECLError(RuntimeError):
    """ECL-MaxFlow could not be run on an instance, or its output was not understood."""


def why_not(network) -> str | None:
    """Why ECL-MaxFlow cannot take ``network`` (its flows and excesses are int32), or None."""
    offsets = np.asarray(network.offsets)
    capacities = np.asarray(network.capacities, dtype=np.int64)
    out_of_source = int(capacities[offsets[network.source]:offsets[network.source + 1]].sum())
    if out_of_source > INT32_MAX:
        return f"its excesses are int32 and the source sends up to {out_of_source:,}"
    if network.num_arcs > INT32_MAX:
        return "more than 2**31 - 1 arcs"
    return None


def write_ecl_graph(network, path: Path) -> None:
    """Write ``network`` (a CSRNetwork on the host) as an ECL graph file with capacities as
    edge weights."""
    offsets = np.asarray(network.offsets, dtype="<i4")
    heads = np.asarray(network.heads, dtype="<i4")
    capacities = np.asarray(network.capacities, dtype="<i4")
    with open(path, "wb") as file:
        np.array([network.num_vertices, heads.size], dtype="<i4").tofile(file)
        offsets.tofile(file)
        heads.tofile(file)
        capacities.tofile(file)


def parse_output(text: str, source: int, sink: int) -> dict:
    """Per-run flows and times from ECL-MaxFlow's standard output."""
    flows = [(int(s), int(t), int(f)) for s, t, f in _FLOW.findall(text)]
    totals = [float(x) for x in _RUNTIME.findall(text)]
    initial = [float(x) for x in _INITIAL.findall(text)]
    phase1 = [float(x) for x in _PHASE1.findall(text)]
    if not flows or not (len(flows) == len(totals) == len(initial) == len(phase1)):
        raise ECLError(f"could not read ECL-MaxFlow's output ({len(flows)} flows, "
                       f"{len(totals)} runtimes, {len(initial)} initial BFS, {len(phase1)} "
                       f"phase I times):\n{text[-2000:]}")
    if any((s, t) != (source, sink) for s, t, _ in flows):
        raise ECLError(f"ECL-MaxFlow solved for other terminals: {flows[0][:2]}")
    values = {f for _, _, f in flows}
    if len(values) != 1:
        raise ECLError(f"ECL-MaxFlow's runs disagree on the flow: {sorted(values)}")
    timed = slice(1, None) if len(flows) > 1 else slice(None)
    return {"flow": values.pop(), "runs": len(flows[timed]),
            "phase1": statistics.median(a + b for a, b in zip(initial[timed], phase1[timed])),
            "total": statistics.median(totals[timed])}


def run_ecl(binary: Path, network, repeats: int, timeout: float = 600.0) -> dict:
    """Run the ECL-MaxFlow executable ``binary`` on ``network`` ``repeats`` + 1 times.

    Returns {"flow", "runs", "phase1", "total"} (seconds, medians over the runs after the
    first). Raises ECLError when it fails, times out or prints something unexpected.
    """
    with tempfile.TemporaryDirectory(prefix="ecl-") as folder:
        path = Path(folder) / "network.egr"
        write_ecl_graph(network, path)
        command = [str(binary), str(path), str(network.source), str(network.sink),
                   str(repeats + 1)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                  check=False)
        except subprocess.TimeoutExpired as error:
            raise ECLError(f"ECL-MaxFlow took more than {timeout:.0f} s") from error
    if done.returncode != 0 or "ERROR" in done.stderr:
        raise ECLError(f"ECL-MaxFlow failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return parse_output(done.stdout, network.source, network.sink)


def ecl_column(binary, network, repeats: int, flow: int, name: str, fmt) -> tuple:
    """bench_csr's table cell for one instance and ECL's phase-I seconds (None when not run).

    ``binary`` None means not asked for; ECL's flow must equal ``flow`` (AssertionError)."""
    if binary is None:
        return "not run", None
    reason = why_not(network)
    if reason:
        return f"not run: {reason}", None
    try:
        ecl = run_ecl(binary, network, repeats)
    except ECLError as error:
        print(f"{name}: ECL-MaxFlow: {error}", file=sys.stderr, flush=True)
        return "failed (see log)", None
    if ecl["flow"] != flow:
        raise AssertionError(f"{name}: ECL-MaxFlow flow {ecl['flow']} != GPU flow {flow}")
    return f"{fmt(ecl['phase1'])} ({fmt(ecl['total'])})", ecl["phase1"]
