"""``graphcut maxflow`` on files and folders, with and without an index, and on bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphcut.cli import main
from graphcut.solver import cuda_status

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "dimacs"


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert "Traceback" not in result.output + result.stderr
    return result


@pytest.fixture
def folder(tmp_path):
    target = tmp_path / "instances"
    shutil.copytree(SAMPLES, target)
    (target / "make_samples.py").unlink()
    return target


def expected_flows():
    data = json.loads((SAMPLES / "index.json").read_text())
    return {entry["file"]: entry["flow"] for entry in data["instances"]}


def test_file_text_output():
    result = run("maxflow", SAMPLES / "textbook_6.max", "--device", "cpu")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("textbook_6.max: flow 23, source side 4 of 6 vertices, "
                                    "backend cpu, ")
    assert result.output.rstrip().endswith(" s")


@pytest.mark.parametrize("name", ["genrmf_3x4.max", "acyclic_dense_12.max.gz",
                                  "random_grid_8x10.max.bz2"])
def test_file_json_output(name):
    result = run("maxflow", SAMPLES / name, "--device", "cpu", "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert {"flow", "source_side_size", "backend", "seconds", "file", "vertices",
            "arcs"} <= set(record)
    assert record["flow"] == expected_flows()[name]
    assert record["backend"] == "cpu"
    assert 1 <= record["source_side_size"] < record["vertices"]
    assert record["seconds"] >= 0


def test_folder_with_index(folder):
    result = run("maxflow", folder, "--device", "cpu")
    assert result.exit_code == 0, result.output + result.stderr
    lines = result.stdout.splitlines()
    flows = expected_flows()
    assert [line.split(":")[0] for line in lines[:-1]] == sorted(flows)
    for line in lines[:-1]:
        name = line.split(":")[0]
        assert f"flow {flows[name]}," in line and line.endswith("[ok]")
    assert lines[-1].startswith("total max-flow time: cpu ") and "over 5 instances" in lines[-1]


def test_repository_samples_folder_passes():
    result = run("maxflow", SAMPLES, "--device", "cpu", "--json")
    assert result.exit_code == 0, result.output + result.stderr
    report = json.loads(result.stdout)
    assert report["failed"] == 0
    assert {r["status"] for r in report["instances"]} == {"ok"}
    assert set(report["total_seconds"]) == {"cpu"}


def test_folder_with_mismatching_index(folder):
    data = json.loads((folder / "index.json").read_text())
    data["instances"][1]["flow"] += 1
    (folder / "index.json").write_text(json.dumps(data))
    result = run("maxflow", folder, "--device", "cpu")
    assert result.exit_code == 1
    wrong = data["instances"][1]["file"]
    bad = [line for line in result.stdout.splitlines() if "MISMATCH" in line]
    assert len(bad) == 1 and bad[0].startswith(wrong)
    assert f"index says {data['instances'][1]['flow']}" in bad[0]
    assert "1 of 5 instances failed" in result.stderr


def test_folder_json_reports_mismatch(folder):
    data = json.loads((folder / "index.json").read_text())
    data["instances"][0]["flow"] = 0
    (folder / "index.json").write_text(json.dumps(data))
    result = run("maxflow", folder, "--device", "cpu", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    statuses = {Path(r["file"]).name: r["status"] for r in report["instances"]}
    assert statuses[data["instances"][0]["file"]] == "mismatch"
    assert report["failed"] == 1


def test_folder_without_index_is_unchecked(folder):
    (folder / "index.json").unlink()
    result = run("maxflow", folder, "--device", "cpu")
    assert result.exit_code == 0
    assert "flows not checked" in result.stderr
    assert "[ok]" not in result.stdout


def test_folder_with_a_bad_file_reports_it_and_goes_on(folder):
    (folder / "broken.max").write_text("p max 3 1\nn 1 s\nn 3 t\na 1 2 oops\n")
    result = run("maxflow", folder, "--device", "cpu")
    assert result.exit_code == 1
    assert "broken.max: ERROR" in result.stderr and "line 4" in result.stderr
    assert result.stdout.count("[ok]") == 5


def test_index_entry_without_file_fails(folder):
    (folder / "genrmf_3x4.max").unlink()
    result = run("maxflow", folder, "--device", "cpu")
    assert result.exit_code == 1
    assert "genrmf_3x4.max: MISSING" in result.stderr


def test_invalid_index_fails(folder):
    (folder / "index.json").write_text('{"instances": [{"file": "x.max"}]}')
    result = run("maxflow", folder, "--device", "cpu")
    assert result.exit_code == 1
    assert "index.json: not a valid index" in result.stderr


@pytest.mark.parametrize("suffix", [".max", ".max.gz"])
def test_bad_file_exits_1_with_line_number(tmp_path, suffix):
    text = "c bad\np max 3 2\nn 1 s\nn 3 t\na 1 2 5\na 2 7 5\n"
    path = tmp_path / f"bad{suffix}"
    if suffix == ".max.gz":
        import gzip
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    result = run("maxflow", path, "--device", "cpu")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert f"{path}, line 6: arc head 7 is out of range" in result.stderr


def test_corrupt_compressed_file_exits_1(tmp_path):
    path = tmp_path / "corrupt.max.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00not really gzip")
    result = run("maxflow", path, "--device", "cpu")
    assert result.exit_code == 1
    assert "Error:" in result.stderr


def test_usage_errors_exit_2(tmp_path):
    assert run("maxflow", tmp_path / "missing.max").exit_code == 2
    assert run("maxflow", SAMPLES / "textbook_6.max", "--device", "tpu").exit_code == 2
    empty = run("maxflow", tmp_path)
    assert empty.exit_code == 2 and "no .max" in empty.stderr


@pytest.mark.skipif(cuda_status()[0], reason="a GPU is present, so --device cuda is valid")
def test_cuda_without_gpu_is_a_usage_error():
    result = run("maxflow", SAMPLES / "textbook_6.max", "--device", "cuda")
    assert result.exit_code == 2
    assert "--device" in result.stderr
