"""``graphcut batch`` under faults: kill -9, Ctrl-C, a second run, images too large for the
memory, worker processes that die. Real processes where the fault is a process's."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from graphcut.batch import FAILED, OK, SKIPPED, ProcessRunner, read_summary, run_batch
from graphcut.batch._runners import cpu_image_bytes
from synthetic import disc_image, disc_seeds, sample_folder

psutil = pytest.importorskip("psutil", reason="psutil comes with distributed")


def batch_command(images, seeds, out, *extra) -> list[str]:
    return [sys.executable, "-m", "graphcut.cli", "batch", str(images), "--seeds-dir",
            str(seeds), "-o", str(out), "--device", "cpu", "--no-progress", *map(str, extra)]


def wait_for_masks(process, out: Path, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while len(list(out.glob("*.png"))) < count:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no masks appeared"
        time.sleep(0.02)


def temporaries(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.suffix == ".tmp"]


def descendants_gone(pids, timeout=10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = [p for p in pids if psutil.pid_exists(p)
                 and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
        if not alive:
            return True
        time.sleep(0.1)
    return False


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """A folder of 24 sample images and the records of a complete serial run on it."""
    folder = tmp_path_factory.mktemp("reference")
    images, seeds = sample_folder(folder, copies=6)
    records = run_batch(images, seeds, folder / "out", device="cpu", jobs=1, progress=False)
    return images, seeds, {Path(r["image"]).name: r for r in records}


def test_kill_9_loses_no_finished_image(reference, tmp_path):
    """kill -9 in the middle of a run: every row in summary.csv is whole, every image listed ok
    has its mask, and the re-run skips every finished image with its numbers (none empty)."""
    images, seeds, expected = reference
    out = tmp_path / "out"
    process = subprocess.Popen(batch_command(images, seeds, out, "--jobs", 1),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for_masks(process, out, 5)
        process.kill()
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    rows = read_summary(out / "summary.csv")
    done = {name for name in (p.name for p in out.glob("*.png"))}
    assert 5 <= len(done) < 24
    listed = {Path(image).name for image, row in rows.items() if row["status"] == OK}
    assert listed <= done and len(done - listed) <= 1  # killed between mask and row at most
    for image, row in rows.items():
        assert row["flow"] == str(expected[Path(image).name]["flow"])
    again = run_batch(images, seeds, out, device="cpu", jobs=1, progress=False)
    for record in again:
        name = Path(record["image"]).name
        assert record["status"] == (SKIPPED if name in done else OK)
        assert str(record["flow"]) == str(expected[name]["flow"])
        assert record["width"] != "" and record["height"] != ""
    assert temporaries(out) == []


def test_ctrl_c_stops_the_worker_processes_and_keeps_the_finished_rows(reference, tmp_path):
    """SIGINT to the process group (Ctrl-C in a terminal) of a run with two worker processes:
    exit 130 within seconds, no process or temporary file left, the summary lists exactly
    finished images, all of whose masks are complete."""
    _, _, expected = reference
    # Many more images than the reference run, so that the run is still going when the signal
    # arrives on a loaded machine (24 images take about 2 s with two workers); copy i of a
    # sample has the reference's numbers for that sample.
    images, seeds = sample_folder(tmp_path, copies=40)
    shapes = {name[3:]: (int(r["height"]), int(r["width"])) for name, r in expected.items()}
    out = tmp_path / "out"
    process = subprocess.Popen(batch_command(images, seeds, out, "--jobs", 2),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        wait_for_masks(process, out, 2)
        group = [p.pid for p in psutil.process_iter(["pid"]) if _session(p.pid) == process.pid]
        assert len(group) >= 3  # the driver and two workers (and the fork server)
        os.killpg(process.pid, signal.SIGINT)
        interrupted = time.monotonic()
        _, stderr = process.communicate(timeout=30)
        assert time.monotonic() - interrupted < 10
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert descendants_gone(group), "processes left behind"
    assert temporaries(out) == [] and not (out / ".graphcut-batch.lock").exists()
    rows = read_summary(out / "summary.csv")
    masks = {p.name for p in out.glob("*.png")}
    assert {Path(i).name for i, r in rows.items() if r["status"] == OK} <= masks
    assert 2 <= len(masks) < 40 * len(shapes)
    for name in masks:
        mask = np.asarray(Image.open(out / name))
        assert mask.shape == shapes[name[3:]]


def _session(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


def test_two_runs_at_once_into_one_folder(reference, tmp_path):
    """Two real runs started together into the same folder: one does every image, the other
    is refused at once and touches nothing."""
    images, seeds, expected = reference
    out = tmp_path / "out"
    runs = [subprocess.Popen(batch_command(images, seeds, out, "--jobs", 1),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    results = [(run.wait(timeout=300), *run.communicate()) for run in runs]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 1], results
    refused = next(stderr for code, _, stderr in results if code == 1)
    assert "another graphcut batch" in refused
    rows = read_summary(out / "summary.csv")
    assert len(rows) == 24 and {r["status"] for r in rows.values()} == {OK}
    assert all(r["flow"] == str(expected[Path(i).name]["flow"]) for i, r in rows.items())
    assert temporaries(out) == []


def huge_flat_image(folder: Path, side: int) -> None:
    """A side x side grey PNG of a few kilobytes (one value) with valid seeds."""
    Image.new("L", (side, side), 90).save(folder / "images" / "huge.png")
    seeds = np.zeros((side, side), np.uint8)
    seeds[:4] = 2
    seeds[side // 2, side // 2] = 1
    Image.fromarray(seeds).save(folder / "seeds" / "huge.png")


def small_folder(folder: Path, count: int) -> tuple[Path, Path]:
    images, seeds = folder / "images", folder / "seeds"
    images.mkdir()
    seeds.mkdir()
    for i in range(count):
        Image.fromarray(disc_image("grey", seed=i)).save(images / f"disc{i}.png")
        Image.fromarray(disc_seeds()).save(seeds / f"disc{i}.png")
    return images, seeds


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_image_too_large_for_the_memory_fails_alone(tmp_path, jobs):
    """Under a 3 GB address-space limit (ulimit -v), a 64-megapixel image (needing ~19 GB on
    the CPU) fails with a message naming the need, before it is decoded; the others are done;
    the summary is written. With worker processes the driver refuses it; in process, the
    image's own pre-check does."""
    images, seeds = small_folder(tmp_path, 3)
    huge_flat_image(tmp_path, 8000)
    out = tmp_path / "out"
    limit = 3 * 2**30
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, "
            f"({limit}, {limit})); from graphcut.cli import main; sys.exit(main())")
    command = [sys.executable, "-c", code] + batch_command(images, seeds, out, "--jobs",
                                                           jobs)[3:]
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "3 ok, 0 skipped, 1 failed" in result.stdout
    assert time.monotonic() - started < 60
    with open(out / "summary.csv", newline="") as handle:
        rows = {Path(r["image"]).name: r for r in csv.DictReader(handle)}
    assert rows["huge.png"]["status"] == FAILED
    assert "out of memory" in rows["huge.png"]["reason"]
    assert "8000x8000" in rows["huge.png"]["reason"] or "needs about" in rows["huge.png"]["reason"]
    assert all(rows[f"disc{i}.png"]["status"] == OK for i in range(3))


def kill_own_process_on(poison: str, **kwargs):
    """segment_file, but the worker process kills itself (SIGKILL) on the image ``poison``."""
    from graphcut.batch import segment_file
    if Path(kwargs["image_path"]).name == poison:
        os.kill(os.getpid(), signal.SIGKILL)
    return segment_file(**kwargs)


def test_a_dying_worker_process_fails_only_its_image(tmp_path):
    import functools
    images, seeds = small_folder(tmp_path, 5)
    runner = ProcessRunner(2, task=functools.partial(kill_own_process_on, "disc2.png"))
    records = {Path(r["image"]).name: r for r in
               run_batch(images, seeds, tmp_path / "out", device="cpu", progress=False,
                         runner=runner)}
    assert records["disc2.png"]["status"] == FAILED
    assert records["disc2.png"]["reason"].startswith(
        "the worker process segmenting this image killed by SIGKILL")
    assert [records[f"disc{i}.png"]["status"] for i in (0, 1, 3, 4)] == [OK] * 4


def timed_segment_file(log: str, **kwargs):
    """segment_file, appending "start end" (monotonic seconds) to the file ``log``; it
    lingers 0.3 s so that images in flight together overlap."""
    from graphcut.batch import segment_file
    started = time.monotonic()
    record = segment_file(**kwargs)
    time.sleep(0.3)
    with open(log, "a") as handle:
        handle.write(f"{started} {time.monotonic()}\n")
    return record


def _overlaps(log: Path) -> int:
    spans = sorted(tuple(map(float, line.split())) for line in log.read_text().splitlines())
    return sum(1 for (_, end), (start, _) in zip(spans, spans[1:]) if start < end)


def test_the_memory_budget_bounds_the_images_in_flight(tmp_path):
    import functools
    images, seeds = small_folder(tmp_path, 4)
    per_image = cpu_image_bytes(images / "disc0.png")  # the CPU estimate for one 80x60 image
    for budget, name in ((2 * per_image, "two"), (per_image, "one")):
        log = tmp_path / f"{name}.log"
        runner = ProcessRunner(2, memory_budget=budget,
                               task=functools.partial(timed_segment_file, str(log)))
        records = run_batch(images, seeds, tmp_path / name, device="cpu", progress=False,
                            runner=runner)
        assert [r["status"] for r in records] == [OK] * 4
        assert (_overlaps(log) > 0) == (name == "two")  # room for one: never two at once
    runner = ProcessRunner(2, memory_budget=per_image - 1)  # no image fits
    records = run_batch(images, seeds, tmp_path / "none", device="cpu", progress=False,
                        runner=runner)
    assert [r["status"] for r in records] == [FAILED] * 4
    assert "more than the" in records[0]["reason"] and "this batch may use" in records[0]["reason"]
