"""The import contracts of pyproject.toml ([tool.importlinter]), run by import-linter through
.ci/lint_imports.py (CI runs the same): they hold for this checkout, and each one breaks when a
copy of the checkout gets an import it forbids."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: import-linter depends on tomli there
    import tomli as tomllib

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / ".ci" / "lint_imports.py"

pytestmark = pytest.mark.skipif(importlib.util.find_spec("importlinter") is None,
                                reason="import-linter is not installed (the test extra has it)")


def lint(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)],
                          capture_output=True, text=True, timeout=600)


def test_the_checkout_keeps_every_contract():
    done = lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert done.stdout.count(" KEPT") == len(contracts["contracts"]) >= 4


@pytest.fixture(scope="module")
def checkout_copy(tmp_path_factory):
    """A copy of the checkout's packages and pyproject.toml, to add forbidden imports to."""
    copy = tmp_path_factory.mktemp("checkout")
    shutil.copy(ROOT / "pyproject.toml", copy)
    for folder in ("graphcut", "solver", "gui"):
        shutil.copytree(ROOT / folder, copy / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "_binaries"))
    return copy


VIOLATIONS = [
    ("graphcut/segmentation/masks.py", "import PyQt6.QtCore", "No Qt or napari outside"),
    ("solver/networks.py", "import napari", "No Qt or napari outside"),
    ("solver/cut.py", "from graphcut.segmentation import masks", "The solver imports nothing"),
    ("solver/cuda/launch.py", "import graphcut.stereo", "The solver imports nothing"),
    ("graphcut/stereo/_cuda.py", "from graphcut.solver.cuda import grid",
     "use only the solver's public names"),
    ("gui/sharing.py", "from graphcut.solver.cuda._loader import kernel",
     "use only the solver's public names"),
    ("solver/networks.py", "from . import api", "No import cycles between the solver's modules"),
    ("graphcut/io/_overlay.py", "from graphcut.segmentation import clean_mask",
     "Files in and out (graphcut.io) segment nothing"),
    ("graphcut/models/_gmm.py", "import graphcut.batch", "The appearance models do not reach"),
]


@pytest.mark.slow
@pytest.mark.parametrize("path, line, contract", VIOLATIONS,
                         ids=[f"{path}:{line}" for path, line, _ in VIOLATIONS])
def test_each_contract_catches_its_violation(checkout_copy, path, line, contract):
    target = checkout_copy / path
    original = target.read_text()
    target.write_text(original + f"\n\ndef _violation():\n    {line}\n")
    try:
        done = lint(checkout_copy)
    finally:
        target.write_text(original)
    assert done.returncode != 0, done.stdout
    flat = " ".join(done.stdout.split())  # contract names may wrap over lines
    assert re.search(re.escape(contract) + r"(?:(?!KEPT).){0,120}? BROKEN", flat), done.stdout
