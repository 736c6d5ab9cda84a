"""``graphcut batch`` on a Dask cluster of local worker processes (CPU backend).

One two-worker cluster serves most tests; its workers (one thread each) offer ``GPU=1`` each,
pinned with ``CUDA_VISIBLE_DEVICES`` 0 and 1 (nothing here touches a GPU, the pinning is only
checked). Tests of hung workers start their own small clusters.
"""

from __future__ import annotations

import csv
import functools
import logging
import math
import os
import re
import signal
import subprocess
import sys
import time
from asyncio import CancelledError
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

distributed = pytest.importorskip("distributed", reason="needs graphcut[distributed]")
dask = pytest.importorskip("dask")
psutil = pytest.importorskip("psutil", reason="psutil comes with distributed")

from graphcut.batch import FAILED, OK, SKIPPED, read_summary, run_batch, segment_file  # noqa: E402,I001
from graphcut.batch import dask as gd  # noqa: E402
from graphcut.cli import main  # noqa: E402
from synthetic import disc_image, disc_seeds, sample_folder  # noqa: E402

# local Dask clusters: seconds to start each; a run that hangs fails (pytest-timeout)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


# ---- fixtures -------------------------------------------------------------------------------

def _children() -> set[int]:
    """This process's descendants, but for multiprocessing's resource tracker and fork server
    (started with the first worker process, they live as long as this process)."""
    found = set()
    for child in psutil.Process().children(recursive=True):
        try:
            command = " ".join(child.cmdline())
            if "resource_tracker" not in command and "forkserver" not in command:
                found.add(child.pid)
        except psutil.Error:
            pass
    return found


def _wait_gone(pids, timeout=10.0) -> set[int]:
    deadline = time.monotonic() + timeout
    alive = {p for p in pids if psutil.pid_exists(p)}
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = {p for p in alive
                 if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE}
    return alive


@pytest.fixture(scope="module")
def client():
    before = _children()
    cluster = gd.local_cluster(2, gpus=["0", "1"], threads_per_worker=1)
    with cluster, distributed.Client(cluster) as connected:
        connected.wait_for_workers(2)
        yield connected
    assert _wait_gone(_children() - before) == set(), "worker processes left behind"


@pytest.fixture
def folders(tmp_path):
    """images/: 6 good images, a broken file, one with wrong-size seeds, one without seeds and
    a text file; seeds/: their seed files."""
    images, seeds = tmp_path / "images", tmp_path / "seeds"
    images.mkdir()
    seeds.mkdir()
    for i in range(6):
        kind = "grey" if i % 2 else "colour"
        Image.fromarray(disc_image(kind, seed=i)).save(images / f"good{i}.png")
        Image.fromarray(disc_seeds()).save(seeds / f"good{i}.png")
    (images / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n not a png")
    Image.fromarray(disc_seeds()).save(seeds / "broken.png")
    Image.fromarray(disc_image("grey")).save(images / "small.png")
    Image.fromarray(disc_seeds()[:-4]).save(seeds / "small.png")
    Image.fromarray(disc_image("grey")).save(images / "unseeded.png")
    (images / "notes.txt").write_text("not an image")
    return images, seeds


def summary_rows(out: Path) -> list[dict]:
    """Summary rows without the columns that legitimately differ between runs."""
    with open(out / "summary.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        assert row.pop("mask") == str(out / Path(row["image"]).with_suffix(".png").name)
        row.pop("seconds")
    return rows


def outputs(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.png"))}


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.name.startswith(".") or p.suffix == ".tmp"]


# ---- tasks run on the workers (module-level so that workers can import them) ----------------

def kill_worker_once(marker: str, **kwargs):
    """The first call kills its own worker process (SIGKILL) in the middle of writing a mask
    (a temporary file exists); every later call is segment_file."""
    try:
        descriptor = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return segment_file(**kwargs)
    os.write(descriptor, str(os.getpid()).encode())
    os.close(descriptor)
    out = Path(kwargs["out_path"])
    (out.parent / f".{out.name}.abcd1234.tmp").write_bytes(b"half a mask")
    os.kill(os.getpid(), signal.SIGKILL)


def kill_worker_on(poison: str, marker_dir: str, **kwargs):
    """Kills its worker every time it is given the image named ``poison``."""
    if Path(kwargs["image_path"]).name == poison:
        (Path(marker_dir) / f"death-{os.getpid()}").touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return segment_file(**kwargs)


def stop_worker_once(marker: str, **kwargs):
    """The first call stops its own worker process (SIGSTOP: it neither works nor answers
    heartbeats, as a hung machine); every later call is segment_file."""
    try:
        descriptor = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return segment_file(**kwargs)
    os.write(descriptor, str(os.getpid()).encode())
    os.close(descriptor)
    os.kill(os.getpid(), signal.SIGSTOP)
    return segment_file(**kwargs)


def hang_once(marker: str, **kwargs):
    """The first call hangs for ten minutes without holding the GIL (its worker still answers
    heartbeats); every later call is segment_file."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return segment_file(**kwargs)
    time.sleep(600)
    return segment_file(**kwargs)


def kill_worker_unless_alone(marker_dir: str, **kwargs):
    """On good2.png, kills its worker while the task holds only a share of the GPU (other
    images may be on the same worker); run with the whole card it does the image."""
    worker = distributed.get_worker()
    alone = worker.state.available_resources.get("GPU") == 0
    if Path(kwargs["image_path"]).name == "good2.png" and not alone:
        (Path(marker_dir) / f"death-{os.getpid()}").touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return segment_file(**kwargs)


def hog_the_gil_then_segment(backtracks: int, **kwargs):
    """On good0.png, first holds the GIL in one C call for several seconds (a regular
    expression that backtracks ``2**backtracks`` times), as PyMaxflow does for a whole solve;
    then segment_file."""
    if Path(kwargs["image_path"]).name == "good0.png":
        re.match(r"(a+)+$", "a" * backtracks + "b")
    return segment_file(**kwargs)


def _backtracks_for(seconds: float) -> int:
    """The ``backtracks`` for which hog_the_gil_then_segment holds the GIL ``seconds`` here."""
    started = time.perf_counter()
    re.match(r"(a+)+$", "a" * 18 + "b")
    elapsed = max(time.perf_counter() - started, 1e-4)
    return 18 + max(0, int(round(math.log2(seconds / elapsed))))


def gpu_task(**kwargs):
    """Records which card the worker sees and the share of its GPU left while the task runs."""
    record = segment_file(**kwargs)
    worker = distributed.get_worker()
    record["reason"] = (f"{os.environ.get('CUDA_VISIBLE_DEVICES')}:"
                        f"{worker.state.available_resources.get('GPU')}")
    return record


# ---- tests ----------------------------------------------------------------------------------

def test_same_masks_and_summary_as_the_serial_run(client, folders, tmp_path):
    images, seeds = folders
    inputs = (outputs(images), outputs(seeds))
    serial = run_batch(images, seeds, tmp_path / "serial", device="cpu", overlay=True,
                       progress=False)
    dask = gd.run_batch_dask(images, seeds, tmp_path / "dask", client=client, device="cpu",
                             overlay=True, progress=False)
    assert [r["status"] for r in dask] == [r["status"] for r in serial]
    assert {r["status"] for r in dask} == {OK, FAILED, SKIPPED}
    assert outputs(tmp_path / "dask") == outputs(tmp_path / "serial")  # byte-identical
    assert len(outputs(tmp_path / "dask")) == 12  # 6 masks + 6 overlays
    assert summary_rows(tmp_path / "dask") == summary_rows(tmp_path / "serial")
    by_name = {Path(r["image"]).name: r for r in dask}
    assert "not an image file" in by_name["broken.png"]["reason"]
    assert "same size" in by_name["small.png"]["reason"]
    assert leftovers(tmp_path) == [] and (outputs(images), outputs(seeds)) == inputs

    again = gd.run_batch_dask(images, seeds, tmp_path / "dask", client=client, device="cpu",
                              overlay=True, progress=False)
    assert [r["status"] for r in again].count(SKIPPED) == 7  # done images are skipped
    assert [str(r["flow"]) for r in again] == [str(r["flow"]) for r in dask]  # carried over


def test_a_worker_killed_mid_task_has_its_task_run_elsewhere(client, folders, tmp_path):
    images, seeds = folders
    marker = tmp_path / "killed"
    serial = run_batch(images, seeds, tmp_path / "serial", device="cpu", progress=False)
    task = functools.partial(kill_worker_once, str(marker))
    records = gd.run_batch_dask(images, seeds, tmp_path / "dask", client=client, device="cpu",
                                progress=False, task=task)
    killed = int(marker.read_text())
    assert not psutil.pid_exists(killed) or psutil.Process(killed).status() == "zombie"
    assert [r["status"] for r in records] == [r["status"] for r in serial]
    assert outputs(tmp_path / "dask") == outputs(tmp_path / "serial")
    assert summary_rows(tmp_path / "dask") == summary_rows(tmp_path / "serial")
    assert leftovers(tmp_path / "dask") == []  # the dead worker's temporary file is gone
    client.wait_for_workers(2, timeout=30)  # the nanny restarted it


def test_an_image_that_keeps_killing_workers_is_reported_not_retried_forever(
        client, folders, tmp_path):
    images, seeds = folders
    task = functools.partial(kill_worker_on, "good3.png", str(tmp_path))
    records = gd.run_batch_dask(images, seeds, tmp_path / "out", client=client, device="cpu",
                                progress=False, task=task)
    by_name = {Path(r["image"]).name: r for r in records}
    poisoned = by_name.pop("good3.png")
    assert poisoned["status"] == FAILED
    assert poisoned["reason"] == (f"the worker processes running this image died "
                                  f"{gd.ALLOWED_FAILURES + 1} times (KilledWorker); it may need "
                                  "more memory than a worker has")
    assert len(list(tmp_path.glob("death-*"))) == gd.ALLOWED_FAILURES + 1
    assert [by_name[f"good{i}.png"]["status"] for i in (0, 1, 2, 4, 5)] == [OK] * 5
    assert not (tmp_path / "out" / "good3.png").exists()
    client.wait_for_workers(2, timeout=30)


def test_gpu_tasks_hold_one_pinned_card_each(client, folders, tmp_path):
    images, seeds = folders
    assert gd.gpu_worker_count(client) == 2
    records = gd.run_batch_dask(images, seeds, tmp_path / "out", client=client, device="auto",
                                progress=False, task=gpu_task)
    held = [r["reason"] for r in records if r["status"] == OK]
    left = 1 - gd.GPU_TASK_SHARE  # each task holds 1/8 of the card: 8 images in flight
    assert len(held) == 6 and set(held) <= {f"0:{left}", f"1:{left}"}
    with pytest.raises(ValueError, match="CPU tasks need no GPU"):
        gd.run_batch_dask(images, seeds, tmp_path / "x", client=client, device="cpu",
                          gpu_resource=True)


def test_gpu_workers_keep_the_adaptive_malloc_threshold(client):
    # Dask's MALLOC_TRIM_THRESHOLD_ fixes glibc's mmap threshold (every large array a fresh
    # mmap); GPU workers are started without it
    nannies = client.cluster.workers.values()
    assert nannies and all("MALLOC_TRIM_THRESHOLD_" not in n.pre_spawn_env for n in nannies)
    with gd.local_cluster(1) as cpu_cluster:  # CPU workers keep Dask's default
        assert all(n.pre_spawn_env.get("MALLOC_TRIM_THRESHOLD_")
                   for n in cpu_cluster.workers.values())


def test_gpu_resource_is_required_only_where_workers_offer_it():
    class FakeClient:
        def __init__(self, resources):
            self.workers = {f"w{i}": {"resources": r} for i, r in enumerate(resources)}

        def scheduler_info(self, n_workers=-1):
            return {"workers": self.workers}

    plain, gpus = FakeClient([{}, {}]), FakeClient([{"GPU": 1}, {}])
    assert gd.gpu_worker_count(gpus) == 1 and gd.gpu_worker_count(plain) == 0
    assert gd._use_gpu_resource(gpus, "auto", None) is True
    assert gd._use_gpu_resource(gpus, "cuda", None) is True
    assert gd._use_gpu_resource(gpus, "cpu", None) is False
    assert gd._use_gpu_resource(gpus, "auto", False) is False
    assert gd._use_gpu_resource(plain, "auto", None) is False
    with pytest.raises(ValueError, match="--resources GPU=1"):
        gd._use_gpu_resource(plain, "cuda", True)


def test_cli_with_a_scheduler_address(client, folders, tmp_path):
    images, seeds = folders
    address = client.scheduler.address
    result = CliRunner().invoke(main, ["batch", str(images), "--seeds-dir", str(seeds), "-o",
                                       str(tmp_path / "out"), "--scheduler", address,
                                       "--device", "cpu", "--no-progress"])
    assert result.exit_code == 1, result.output  # two images fail
    assert "9 images: 6 ok, 1 skipped, 2 failed" in result.stdout
    run_batch(images, seeds, tmp_path / "serial", device="cpu", progress=False)
    assert outputs(tmp_path / "out") == outputs(tmp_path / "serial")


def test_cli_usage_errors(folders, tmp_path, monkeypatch):
    images, seeds = folders
    base = ["batch", str(images), "--seeds-dir", str(seeds), "-o", str(tmp_path / "out")]
    cases = [
        (["--scheduler", "tcp://127.0.0.1:1", "--local-cluster", "2"], 2, "not both"),
        (["--gpu-resource"], 2, "only with --scheduler or --local-cluster"),
        (["--local-cluster", "0"], 2, "--local-cluster"),
        (["--local-cluster", "1", "--gpu-resource", "--device", "cpu"], 2, "--gpu-resource"),
        (["--local-cluster", "40", "--device", "cpu"], 2, "use at most"),
        (["--local-cluster", "1", "--jobs", "2"], 2, "--jobs"),
        (["--task-timeout", "5"], 2, "--task-timeout"),
    ]
    monkeypatch.setattr(gd, "usable_cores", lambda: 2)  # a 2-core machine
    for extra, code, message in cases:
        result = CliRunner().invoke(main, base + extra)
        assert result.exit_code == code and message in result.output, (extra, result.output)
    monkeypatch.setattr(gd, "CONNECT_TIMEOUT", 1)
    result = CliRunner().invoke(main, base + ["--scheduler", "tcp://127.0.0.1:9"])
    assert result.exit_code == 1 and "cannot connect to the Dask scheduler" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_cli_local_cluster_and_ctrl_c(tmp_path):
    """A real `graphcut batch --local-cluster 2` process, interrupted (SIGINT to its process
    group, as Ctrl-C in a terminal) after its first mask: it exits 130 promptly and leaves no
    process, no temporary file, no summary, and only complete masks, equal to the serial
    run's."""
    # 160 images: the run must still be going when the signal arrives on a loaded machine
    (tmp_path / "all").mkdir()
    images, seeds = sample_folder(tmp_path / "all", copies=40)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "graphcut.cli", "batch", str(images), "--seeds-dir",
               str(seeds), "-o", str(out), "--local-cluster", "2", "--device", "cpu"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True, text=True)
    try:
        deadline = time.monotonic() + 60
        while not list(out.glob("*.png")) and time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()
            time.sleep(0.02)
        group = {p.pid for p in psutil.process_iter(["pid"])
                 if _session(p.pid) == process.pid}
        assert len(group) >= 3  # the driver and its two workers
        os.killpg(process.pid, signal.SIGINT)
        interrupted = time.monotonic()
        _, stderr = process.communicate(timeout=30)
        assert time.monotonic() - interrupted < 10
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert _wait_gone(group) == set(), "processes left behind"
    masks = outputs(out)
    assert 1 <= len(masks) < 160
    assert leftovers(out) == []
    listed = {Path(i).name for i, r in read_summary(out / "summary.csv").items()
              if r["status"] == OK}
    assert listed <= set(masks)  # what the summary lists as done is done
    # copy i of a sample equals the serial run's mask of that sample's first copy
    (tmp_path / "one").mkdir()
    one_images, one_seeds = sample_folder(tmp_path / "one", copies=1)
    run_batch(one_images, one_seeds, tmp_path / "serial", device="cpu", progress=False)
    for name in masks:  # pixels (the files' metadata name their different input folders)
        done = np.asarray(Image.open(out / name))
        assert np.array_equal(done, np.asarray(Image.open(tmp_path / "serial" / f"00{name[2:]}")))


def _raise_in(filename: str, function: str) -> NameError:
    """A NameError raised by ``function`` of a module compiled as ``filename``."""
    namespace: dict = {}
    exec(compile(f"def {function}():\n    return unset_name\n", filename, "exec"), namespace)
    try:
        namespace[function]()
    except NameError as error:
        return error
    raise AssertionError("no NameError")


@pytest.mark.parametrize("filename, function, dropped", [
    (os.path.join("site-packages", "distributed", "utils.py"), "cancel", True),
    (os.path.join("site-packages", "distributed", "utils.py"), "wait", False),
    (os.path.join("site-packages", "graphcut", "utils.py"), "cancel", False),
])
def test_only_dasks_cancel_race_on_ctrl_c_is_kept_from_the_user(filename, function, dropped,
                                                                caplog):
    # distributed's sync() logs this NameError through Tornado when Ctrl-C comes before its
    # task started (seen in CI); every other callback error must still be shown
    error = _raise_in(filename, function)
    with caplog.at_level(logging.ERROR), gd.quiet_dask_logs():
        logging.getLogger("tornado.application").error(
            "Exception in callback", exc_info=(type(error), error, error.__traceback__))
    assert (caplog.records == []) is dropped


def test_a_workers_heartbeat_loss_is_kept_from_the_user(caplog):
    # a local cluster's worker whose heartbeat finds the scheduler gone (the driver closing
    # it after Ctrl-C) logs an OSError traceback (seen in CI): the workers' preload drops it
    from graphcut.batch import _cluster
    logger = logging.getLogger("distributed.worker")
    before = list(logger.filters)
    try:
        _cluster.quiet_worker_logs()
        _cluster.quiet_worker_logs()  # once only
        assert len(logger.filters) == len(before) + 1
        with caplog.at_level(logging.WARNING, logger="distributed.worker"):
            try:
                raise OSError("Stream is closed")
            except OSError:
                logger.exception("Failed to communicate with scheduler during heartbeat.")
                logger.exception("Unexpected exception during heartbeat. Closing worker.")
        assert [r.getMessage() for r in caplog.records] == [
            "Unexpected exception during heartbeat. Closing worker."]
    finally:
        logger.filters[:] = before


def _session(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


# ---- hung workers, GPU tasks given up -------------------------------------------------------

def test_a_stopped_worker_is_evicted_and_its_image_run_elsewhere(folders, tmp_path):
    """A worker stopped with SIGSTOP mid-task (heartbeats stop): the scheduler restarts it
    after the worker TTL and its image is done by the other worker; the run ends in seconds
    (Dask's default TTL would wait five minutes)."""
    images, seeds = folders
    marker = tmp_path / "stopped"
    task = functools.partial(stop_worker_once, str(marker))
    with gd.local_cluster(2, worker_ttl=1.0) as cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(2)
        started = time.monotonic()
        records = gd.run_batch_dask(images, seeds, tmp_path / "out", client=client,
                                    device="cpu", progress=False, task=task)
        assert time.monotonic() - started < 40
        stopped = int(marker.read_text())
        assert _wait_gone({stopped}) == set()  # killed by its nanny
    by_name = {Path(r["image"]).name: r["status"] for r in records}
    assert [by_name[f"good{i}.png"] for i in range(6)] == [OK] * 6


def test_a_task_over_its_timeout_has_its_worker_restarted(folders, tmp_path):
    images, seeds = folders
    task = functools.partial(hang_once, str(tmp_path / "hung"))
    with gd.local_cluster(2) as cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(2)
        started = time.monotonic()
        records = gd.run_batch_dask(images, seeds, tmp_path / "out", client=client,
                                    device="cpu", progress=False, task=task, task_timeout=2)
        assert time.monotonic() - started < 40
    by_name = {Path(r["image"]).name: r["status"] for r in records}
    assert [by_name[f"good{i}.png"] for i in range(6)] == [OK] * 6


def test_a_gpu_task_given_up_is_tried_alone(client, folders, tmp_path):
    """GPU tasks share workers; one given up (KilledWorker) after its workers died runs once
    more asking for the whole card, so an image that only failed beside others is done."""
    images, seeds = folders
    task = functools.partial(kill_worker_unless_alone, str(tmp_path))
    records = gd.run_batch_dask(images, seeds, tmp_path / "out", client=client, device="auto",
                                progress=False, task=task)
    by_name = {Path(r["image"]).name: r["status"] for r in records}
    assert [by_name[f"good{i}.png"] for i in range(6)] == [OK] * 6
    assert len(list(tmp_path.glob("death-*"))) == gd.ALLOWED_FAILURES + 1
    client.wait_for_workers(2, timeout=30)


def test_a_long_cpu_solve_does_not_get_its_worker_evicted(folders, tmp_path):
    """PyMaxflow holds the GIL for a whole solve; CPU tasks run it in a child process of the
    worker, so the worker keeps answering heartbeats through an 8 s hold with a 5 s TTL and
    is never restarted."""
    images, seeds = folders
    task = functools.partial(gd.segment_file_on_worker,
                             work=functools.partial(hog_the_gil_then_segment,
                                                    _backtracks_for(8.0)))
    with gd.local_cluster(2, worker_ttl=1.0) as cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(2)
        pids = client.run(os.getpid)
        records = gd.run_batch_dask(images, seeds, tmp_path / "out", client=client,
                                    device="cpu", progress=False, task=task)
        assert client.run(os.getpid) == pids  # no worker was restarted
    by_name = {Path(r["image"]).name: r["status"] for r in records}
    assert [by_name[f"good{i}.png"] for i in range(6)] == [OK] * 6


# ---- runs that could wait forever ----------------------------------------------------------

def test_a_local_cluster_keeps_its_nannies_when_a_worker_dies(tmp_path):
    """SpecCluster closes the nanny of a worker it finds missing when its lost-worker timer
    fires; with a zero timeout that is at once, while the nanny restarts it. Both nannies
    must stay and restart their workers (a cluster without nannies hangs the run)."""
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "0s"}), \
            gd.local_cluster(2) as cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(2)
        for pid in client.run(os.getpid).values():
            os.kill(pid, signal.SIGKILL)
            time.sleep(0.5)
        client.wait_for_workers(2, timeout=60)
        assert len(cluster.workers) == 2
        assert all(nanny.status.name == "running" for nanny in cluster.workers.values())


def test_images_no_worker_can_run_are_failed_not_waited_for(folders, tmp_path):
    """GPU tasks on a cluster without GPU workers, then any task on a cluster whose workers
    are all gone: the scheduler keeps them waiting; the run reports them as failed after
    no_worker_timeout and ends."""
    images, seeds = folders
    with gd.local_cluster(1) as cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(1)
        calls = [(i, {"image_path": images / f"good{i}.png", "seeds_path": seeds / f"good{i}.png",
                      "out_path": tmp_path / "gpu" / f"good{i}.png"}) for i in range(3)]
        started = time.monotonic()
        records = list(gd.DaskRunner(client, gpu=True, no_worker_timeout=1.0)(calls))
        assert time.monotonic() - started < 30
        assert sorted(i for i, _ in records) == [0, 1, 2]
        assert {r["reason"] for _, r in records} == {
            "no worker of the cluster could run this image for more than 1 s: no running "
            f"worker offers GPU={gd.GPU_TASK_SHARE:g}"}

        cluster.scale(0)
        deadline = time.monotonic() + 30
        while client.scheduler_info()["workers"] and time.monotonic() < deadline:
            time.sleep(0.1)
        started = time.monotonic()
        records = gd.run_batch_dask(images, seeds, tmp_path / "out", client=client,
                                    device="cpu", progress=False, no_worker_timeout=1.0)
        assert time.monotonic() - started < 30
    by_name = {Path(r["image"]).name: r for r in records}
    assert [by_name[f"good{i}.png"]["status"] for i in range(6)] == [FAILED] * 6
    assert by_name["good0.png"]["reason"] == ("no worker of the cluster could run this image "
                                              "for more than 1 s: the cluster has no running "
                                              "worker")
    assert outputs(tmp_path / "out") == {} and leftovers(tmp_path / "out") == []


class _Future:
    """A stand-in for a distributed Future in a given state."""

    def __init__(self, status, result=None, error=None):
        self.status, self._result, self._error = status, result, error

    def result(self, timeout=None):
        if isinstance(self._result, BaseException):
            raise self._result
        return self._result

    def exception(self):
        return self._error


def test_a_result_lost_with_its_worker_is_waited_for_again():
    from graphcut.batch._cluster import _outcome
    record = {"status": OK}
    assert _outcome(_Future("finished", record)) == (record, None)
    assert _outcome(_Future("pending")) is None  # reported done, then its data was lost
    assert _outcome(_Future("lost")) is None
    assert _outcome(_Future("finished", TimeoutError())) is None  # it runs again
    killed = distributed.KilledWorker("key", "worker", 2)
    assert _outcome(_Future("finished", killed)) == (None, killed)  # ran again and given up
    cancelled = CancelledError()
    assert _outcome(_Future("finished", cancelled)) == (None, cancelled)
    assert _outcome(_Future("error", error=killed)) == (None, killed)
    assert _outcome(_Future("cancelled")) == (None, None)
