"""The CLI's note that a first GPU run waits for CuPy's compiler: shown exactly when the run is
on the GPU and CuPy's on-disk kernel cache holds nothing yet."""

from __future__ import annotations

import pytest

from graphcut.commands import common


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "kernel_cache"
    monkeypatch.setenv("CUPY_CACHE_DIR", str(folder))
    monkeypatch.delenv("CUPY_CACHE_IN_MEMORY", raising=False)
    return folder


def test_a_gpu_run_with_no_cache_folder_is_told_once(cache):
    note = common.first_gpu_run_note("cuda")
    assert note is not None and str(cache) in note and "10-40 s" in note


def test_an_empty_cache_folder_still_means_a_first_run(cache):
    cache.mkdir()
    assert common.first_gpu_run_note("cuda") is not None


def test_a_cache_with_kernels_or_a_cpu_run_gets_no_note(cache):
    assert common.first_gpu_run_note("cpu") is None
    cache.mkdir()
    (cache / "0123abcd_2.cubin").write_bytes(b"kernel")
    assert common.first_gpu_run_note("cuda") is None


def test_an_in_memory_cache_gets_no_note(cache, monkeypatch):
    monkeypatch.setenv("CUPY_CACHE_IN_MEMORY", "1")
    assert common.first_gpu_run_note("cuda") is None


def test_the_device_check_prints_it_on_stderr_only_for_the_gpu(cache, monkeypatch, capsys):
    import graphcut.solver
    monkeypatch.setattr(graphcut.solver, "resolve_device", lambda device: device)
    assert common.resolve_device_or_usage_error("cuda") == "cuda"
    captured = capsys.readouterr()
    assert captured.out == "" and "first GPU run" in captured.err
    assert common.resolve_device_or_usage_error("cpu") == "cpu"
    assert capsys.readouterr().err == ""
