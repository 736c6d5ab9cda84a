"""The Examples sections of the public API's docstrings run, and print what they show.

Every name exported by the public packages (their ``__all__``) is looked up through the
package, so the examples are found wherever the code that defines them lives. They run on the
CPU, each with the names of the module that defines its object (as ``doctest`` gives them);
an example marked ``# doctest: +GPU`` needs a GPU (CuPy and a device) and is skipped without
one.
"""

from __future__ import annotations

import doctest
import importlib
import inspect

import pytest

PUBLIC_PACKAGES = ("graphcut", "graphcut.solver", "graphcut.solver.generators",
                   "graphcut.segmentation", "graphcut.io", "graphcut.stereo", "graphcut.labeling",
                   "graphcut.batch", "graphcut.models")
MIN_DOCUMENTED = 15  # issue #26: at least this many public names have examples that run
GPU = doctest.register_optionflag("GPU")
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _gpu_available() -> bool:
    from graphcut.solver import cuda_status
    return cuda_status()[0]


def public_doctests() -> list[doctest.DocTest]:
    """One DocTest per docstring with examples: the packages' own docstrings and those of
    every public name (methods of public classes included), each object once."""
    finder = doctest.DocTestFinder(exclude_empty=True)
    own_docstring = doctest.DocTestFinder(recurse=False, exclude_empty=True)
    tests, seen = {}, set()
    for package_name in PUBLIC_PACKAGES:
        package = importlib.import_module(package_name)
        objects = [(package_name, package)]
        objects += [(f"{package_name}.{name}", getattr(package, name))
                    for name in sorted(package.__all__)]
        for name, obj in objects:
            if id(obj) in seen or not (callable(obj) or obj is package):
                continue
            seen.add(id(obj))
            find = own_docstring.find if obj is package else finder.find
            home = inspect.getmodule(obj)  # the examples see their module's names, as in doctest
            globs = dict(vars(home)) if home is not None else {}
            for test in find(obj, name, module=False, globs=globs):
                if test.examples and test.name not in tests:
                    tests[test.name] = test
    return [tests[name] for name in sorted(tests)]


TESTS = public_doctests()


def _run(test: doctest.DocTest, gpu: bool) -> doctest.TestResults:
    for example in test.examples:
        if example.options.get(GPU) and not gpu:
            example.options[doctest.SKIP] = True
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    report = []
    results = runner.run(test, out=report.append)
    assert results.failed == 0, "".join(report)
    return results


@pytest.mark.parametrize("test", TESTS, ids=[test.name for test in TESTS])
def test_docstring_examples_run(test, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that writes a file writes it here
    _run(test, _gpu_available())


def test_enough_public_examples():
    on_cpu = [test for test in TESTS
              if any(not example.options.get(GPU) for example in test.examples)]
    assert len(on_cpu) >= MIN_DOCUMENTED, (
        f"only {len(on_cpu)} public docstrings have examples that run on the CPU")
    documented = {test.name.rsplit(".", 1)[-1] for test in TESTS}
    for name in ("segment", "Segmenter", "min_cut", "GridNetwork", "CSRNetwork", "read_dimacs",
                 "disparity", "read_volume", "run_batch"):
        assert name in documented, f"{name} has no docstring example"
