"""HPF (``thinhpf``) timed fairly: over the arc orders a user would give it and its own options.

HPF's running time depends on the order in which its arcs are given (each vertex's arc list
keeps that order) and on its two compile-time options, the label order (``hf``: highest label
first, ``lf``: lowest) and the root order (``lifo``/``fifo``). Each baseline is tuned by a
stated sweep and its best reported, so ``bench/bench_csr.py`` times HPF on every order of
``--hpf-orders`` (and option pair of ``--hpf-configs``, default ``hf-lifo,hf-fifo``: the
lowest-label-first pairs were left out after a run of ``lf-lifo`` on genrmf-wide-a64 did not
end within 300 s, against at most 1.5 s for the ``hf`` pairs) and reports the fastest as "HPF".

Arc orders (all the same network; only the order of the arrays handed to ``add_edges``
differs):

- ``generator``: the arcs as the instance's generator produced them (the arrays it passed to
  ``CSRNetwork.from_arcs``, captured while building; for an instance read from a DIMACS file
  by ``read_dimacs``, the file's order; for a network not built by ``from_arcs``,
  or generated in CSR order already (Washington RLG), the CSR order: timed once, as "csr");
- ``csr``: CSR order, sorted by tail (then head), what ``network.arcs()`` returns;
- ``head``: sorted by head (stable, so by tail within a head);
- ``reversed``: CSR order reversed;
- ``shuffle``: a fixed-seed random permutation (seed 0).

Run alone (no GPU needed) to compare the orders on this machine::

    python bench/hpf_orders.py --instances genrmf-wide-a64,rlg-long-512x1024 --repeats 3
    python bench/hpf_orders.py --configs hf-lifo,hf-fifo,lf-lifo,lf-fifo --orders csr
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ORDERS = ("generator", "csr", "head", "reversed", "shuffle")
CONFIGS = ("hf-lifo", "hf-fifo", "lf-lifo", "lf-fifo")
DEFAULT_CONFIG = "hf-lifo"  # thinhpf.hpf()'s defaults


@contextlib.contextmanager
def captured_arcs():
    """Record the arrays passed to every ``CSRNetwork.from_arcs`` call inside the block.

    Yields
    ------
    list
        Filled with ``(network, (tails, heads, capacities))`` per call, in call order.
    """
    from graphcut.solver import CSRNetwork

    calls = []
    original = CSRNetwork.__dict__["from_arcs"]

    def recording(cls, n, source, sink, tails, heads, capacities):
        network = original.__func__(cls, n, source, sink, tails, heads, capacities)
        calls.append((network, tuple(np.asarray(a) for a in (tails, heads, capacities))))
        return network

    CSRNetwork.from_arcs = classmethod(recording)
    try:
        yield calls
    finally:
        CSRNetwork.from_arcs = original


def build_with_order(builder):
    """Call ``builder()``; return (network, the generator's arcs or None).

    The generator's arcs are those of the ``from_arcs`` call that made the returned network
    (None if it was made otherwise, e.g. by ``GridNetwork.to_csr``).
    """
    with captured_arcs() as calls:
        network = builder()
    for made, arcs in calls:
        if made is network:
            return network, arcs
    return network, None


def arcs_in_order(network, order: str, generated=None):
    """(tails, heads, capacities) of ``network`` in one of ORDERS, and the order actually used
    ("csr" for "generator" when ``generated`` is None or already in CSR order, as RLG's)."""
    tails, heads, caps = network.arcs()
    if order == "generator":
        same = generated is None or (generated[0].size == tails.size and all(
            np.array_equal(a, b) for a, b in zip(generated, (tails, heads, caps))))
        if not same:
            return generated, order
        order = "csr"
    if order == "csr":
        pick = slice(None)
    elif order == "head":
        pick = np.argsort(heads, kind="stable")
    elif order == "reversed":
        pick = slice(None, None, -1)
    elif order == "shuffle":
        pick = np.random.default_rng(0).permutation(tails.size)
    else:
        raise ValueError(f"unknown arc order {order!r}; known: {', '.join(ORDERS)}")
    return (tails[pick], heads[pick], caps[pick]), order


def hpf_times(n: int, source: int, sink: int, arcs, repeats: int,
              config: str = DEFAULT_CONFIG) -> tuple[list[float], int]:
    """Seconds of each of ``repeats`` runs of thinhpf's ``mincut()`` (phase I; the graph is
    built beforehand, not timed) on these arcs, and the flow value (int32: wraps above 2**31-1).
    """
    import thinhpf

    label_order, root_order = config.split("-")
    tails, heads, caps = arcs
    tails, heads = tails.astype(np.uint32), heads.astype(np.uint32)
    caps = caps.astype(np.int32)
    times, flow = [], None
    for _ in range(repeats):
        graph = thinhpf.hpf(n, tails.size, label_order=label_order, root_order=root_order)
        graph.add_node(n)
        graph.add_edges(tails, heads, caps)
        graph.set_source(source)
        graph.set_sink(sink)
        started = time.perf_counter()
        graph.mincut()
        times.append(time.perf_counter() - started)
        flow = int(graph.compute_maxflow())
    return times, flow


def hpf_sweep(network, generated, orders, configs, repeats: int) -> dict:
    """Time HPF on every (order, config); {(order, config): (median s, flow, times)}.

    The repeats go round-robin (every pair once, then every pair again, ...), so a change in
    the machine's load during the sweep falls on every pair alike rather than on one.

    Raises
    ------
    AssertionError
        Two runs disagree on the flow value.
    """
    pairs = []
    for order in orders:
        arcs, used = arcs_in_order(network, order, generated)
        if used != order and used in orders:
            continue  # the same arrays are timed under their own name
        label = order if used == order else f"{order} (= csr)"
        pairs += [((label, config), arcs, config) for config in configs]
    times = {key: [] for key, _, _ in pairs}
    flows = set()
    for _ in range(repeats):
        for key, arcs, config in pairs:
            took, flow = hpf_times(network.num_vertices, network.source, network.sink, arcs, 1,
                                   config)
            times[key] += took
            flows.add(flow)
    if len(flows) != 1:
        raise AssertionError(f"HPF's flow depends on the arc order: {sorted(flows)}")
    flow = flows.pop()
    return {key: (statistics.median(t), flow, t) for key, t in times.items()}


def best_hpf(results: dict) -> tuple[float, int, str]:
    """(median seconds, flow, label) of the fastest entry of :func:`hpf_sweep`'s results."""
    (order, config), (seconds, flow, _) = min(results.items(), key=lambda kv: kv[1][0])
    return seconds, flow, f"{order}, {config}"


def describe(results: dict, fmt) -> str:
    """One line: each (order, config)'s median time."""
    return "; ".join(f"{order}{'' if config == DEFAULT_CONFIG else ' ' + config} {fmt(v[0])}"
                     for (order, config), v in results.items())


def main(argv=None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_csr import INSTANCES, fmt

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", default="rlg-long-512x1024,genrmf-wide-a64")
    parser.add_argument("--orders", default=",".join(ORDERS))
    parser.add_argument("--configs", default=DEFAULT_CONFIG)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    orders, configs = args.orders.split(","), args.configs.split(",")
    print("Per instance and (arc order, label-root order): median seconds, each run's seconds, "
          "and the median over rounds of (this run / the CSR hf-lifo run of the same round): "
          "the runs go round-robin, so a round shares the machine's load.", flush=True)
    for name in args.instances.split(","):
        network, generated = build_with_order(INSTANCES[name][0])
        results = hpf_sweep(network, generated, orders, configs, args.repeats)
        base = results.get(("csr", DEFAULT_CONFIG))
        print(f"\n{name} (flow {next(iter(results.values()))[1]:,}):")
        for (order, config), (median, _, times) in results.items():
            ratio = "-" if base is None else \
                f"{statistics.median(np.array(times) / np.array(base[2])):.2f}"
            runs = ", ".join(f"{x:.2f}" for x in times)
            print(f"  {order:>18} {config}: {fmt(median):>9} ({runs}) ratio {ratio}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
