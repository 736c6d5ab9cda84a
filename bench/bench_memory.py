"""Peak memory of a segmentation per pixel, against the estimate checked before it starts.

For grey and RGB images of the given sizes (random pixels, a row of background seeds and one
object seed), each case in a fresh process:
- CPU: peak resident memory (``VmHWM``, reset just before) above the resident memory at the
  start of ``graphcut.segment(..., device="cpu")``, image and seeds already in memory; against
  ``graphcut.memory.segmentation_bytes(..., "cpu")``;
- GPU (``--devices cpu,cuda``): peak bytes in use in CuPy's memory pool (every allocation goes
  through a counting allocator) during ``graphcut.segment(..., device="cuda")`` with NumPy
  inputs (upload included); against ``segmentation_bytes(..., "cuda")``.

    python bench/bench_memory.py [--sizes 1500x2000,3000x4000] [--devices cpu,cuda]

Prints a Markdown table. Memory figures do not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CASE = r"""
import json, sys
import numpy as np
import graphcut
import graphcut.solver.cpu
from graphcut.segmentation import segmentation_bytes
h, w, colour, device = {h}, {w}, {colour}, {device!r}
rng = np.random.default_rng(0)
image = rng.integers(0, 256, (h, w, 3) if colour else (h, w), dtype=np.uint8)
seeds = np.zeros((h, w), np.uint8)
seeds[:20] = 2
seeds[h // 2, w // 2] = 1

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024

if device == "cpu":
    graphcut.solver.cpu.release_free_heap()
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")  # resets VmHWM
    before = status("VmRSS")
    graphcut.segment(image, seeds, device="cpu")
    peak = status("VmHWM") - before
else:
    import cupy
    pool = cupy.get_default_memory_pool()
    warm = np.zeros((64, 64), np.uint8)
    warm[0], warm[32, 32] = 2, 1
    graphcut.segment(image[:64, :64], warm, device="cuda")  # loads the kernels
    from graphcut.solver.cuda.grid import release_cached_state
    release_cached_state()
    pool.free_all_blocks()
    base, peak = pool.used_bytes(), 0

    def counting(size):
        global peak
        memory = pool.malloc(size)
        peak = max(peak, pool.used_bytes() - base)
        return memory

    cupy.cuda.set_allocator(counting)
    graphcut.segment(image, seeds, device="cuda")
print(json.dumps({{"peak": peak, "estimate": segmentation_bytes(h, w, 3 if colour else 1,
                                                                device)}}))
"""


def measure(h: int, w: int, colour: bool, device: str) -> dict:
    code = CASE.format(h=h, w=w, colour=colour, device=device)
    process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if process.returncode:
        raise SystemExit(f"the {device} case {w}x{h} failed:\n{process.stderr}")
    return json.loads(process.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1500x2000,3000x4000",
                        help="comma-separated HxW image sizes")
    parser.add_argument("--devices", default="cpu", help="cpu, cuda or cpu,cuda")
    args = parser.parse_args()
    print("| device | image | pixels | peak (bytes/px) | estimate (bytes/px) | estimate / peak |")
    print("|---|---|---|---|---|---|")
    for device in args.devices.split(","):
        for size in args.sizes.split(","):
            h, w = (int(v) for v in size.split("x"))
            for colour in (False, True):
                found = measure(h, w, colour, device)
                pixels = h * w
                print(f"| {device} | {w}x{h} {'RGB' if colour else 'grey'} | {pixels} | "
                      f"{found['peak'] / pixels:.1f} | {found['estimate'] / pixels:.1f} | "
                      f"{found['estimate'] / found['peak']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
