"""Benchmark: the seed checks of several objects on the GPU (``graphcut.io.checked_objects``
on device seeds) and the whole seeds given again to a ``Segmenter``'s kept copy
(``DeviceSeeds.take``), with this session's paths and with the host paths before them.

Input: ``--megapixels`` of uint8 seeds (a square), a background frame and one 10 x 10 square
each of labels 1, 3 and 4. Each figure: the median of ``--repeats`` synchronised calls after
three of warm-up, wall milliseconds; "before" sets ``graphcut.io._seeds.DEVICE_HISTOGRAM`` and
``graphcut.segmentation._device_seeds.DIFF_WHOLE`` to False. Alternates before / after
``--rounds`` times. Needs CuPy and a GPU.

    python3 bench/bench_seed_checks.py --megapixels 4
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np


def timed(call, repeats, synchronise) -> float:
    """Median wall milliseconds of ``call`` over ``repeats`` runs after three of warm-up."""
    times = []
    for _ in range(repeats + 3):
        synchronise()
        started = time.perf_counter()
        call()
        synchronise()
        times.append(time.perf_counter() - started)
    return statistics.median(times[3:]) * 1e3


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megapixels", type=float, default=4.0)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    import cupy

    from graphcut.io import _seeds, checked_objects
    from graphcut.segmentation import _device_seeds
    side = int(round(math.sqrt(args.megapixels * 1e6)))
    seeds = np.zeros((side, side), np.uint8)
    seeds[:4], seeds[-4:] = 2, 2
    for i, label in enumerate((1, 3, 4)):
        row = side // 4 + i * side // 5
        seeds[row:row + 10, side // 2:side // 2 + 10] = label
    device = cupy.asarray(seeds)
    kept = _device_seeds.DeviceSeeds(seeds.shape)
    synchronise = cupy.cuda.Device().synchronize

    def stroke():  # a 9 x 9 stroke changes, then the whole seeds are given again
        seeds[side // 2:side // 2 + 9, side // 3:side // 3 + 9] ^= 2
        kept.take(seeds)

    print(f"# {side}x{side} uint8 seeds, labels 1, 2, 3, 4; "
          f"{cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    for round_ in range(1, args.rounds + 1):
        for name, on in (("before (host paths)", False), ("after", True)):
            _seeds.DEVICE_HISTOGRAM = _device_seeds.DIFF_WHOLE = on
            kept.take(seeds)
            check = timed(lambda: checked_objects(device, seeds.shape), args.repeats,
                          synchronise)
            take = timed(stroke, args.repeats, synchronise)
            print(f"round {round_} {name}: checked_objects {check:.2f} ms (objects "
                  f"{checked_objects(device, seeds.shape)[1]}), whole seeds again "
                  f"{take:.2f} ms")
    _seeds.DEVICE_HISTOGRAM = _device_seeds.DIFF_WHOLE = True


if __name__ == "__main__":
    main()
