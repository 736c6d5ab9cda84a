"""The development-pair sweep (bench/stereo_sweep.py): one setting changed at a time, and the
held-out and final pairs refused unless asked for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from graphcut.stereo import CensusParameters


BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import stereo_sweep  # noqa: E402

SCRIPT = BENCH / "stereo_sweep.py"


def test_each_setting_changes_exactly_one_field_of_the_defaults():
    for text in stereo_sweep.DEFAULT_GRID:
        for name, value in stereo_sweep.parse_setting(text):
            options = stereo_sweep.keywords(name, value)
            if name in stereo_sweep.CENSUS_FIELDS:
                census = options.pop("census")
                changed = [f for f in CensusParameters._fields
                           if getattr(census, f) != getattr(CensusParameters(), f)]
                assert changed == [name] and getattr(census, name) == value
            assert options in ({}, {name: value})
    assert stereo_sweep.keywords(None, None) == {}


def test_values_take_the_fields_type_and_unknown_names_are_refused():
    assert stereo_sweep.parse_setting("aggregation_radius=1,3") == [
        ("aggregation_radius", 1), ("aggregation_radius", 3)]
    assert isinstance(stereo_sweep.parse_setting("edge_threshold=6")[0][1], float)
    with pytest.raises(ValueError, match="aggregation_radius"):
        stereo_sweep.parse_setting("census_window=3")
    with pytest.raises(ValueError):
        stereo_sweep.parse_setting("smoothness=")


def test_base_settings_carry_into_each_run_and_lambdas_set_both():
    base = stereo_sweep.keywords("lambdas", 20.0)
    assert base["census"] == CensusParameters(census_lambda=20.0, colour_lambda=20.0)
    options = stereo_sweep.keywords(*stereo_sweep.parse_setting("window=7x5")[0], base)
    assert options["census"] == CensusParameters(window=(7, 5), census_lambda=20.0,
                                                 colour_lambda=20.0)
    options = stereo_sweep.keywords("smoothness", 6, base)
    assert options == {"census": base["census"], "smoothness": 6}
    assert stereo_sweep.keywords(None, None, base) == base


@pytest.mark.parametrize("scene", ["motorcycle", "pillars"])
def test_scored_pairs_are_refused_without_allow_scored(scene):
    done = subprocess.run([sys.executable, str(SCRIPT), "--scenes", scene],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "--allow-scored" in done.stderr


def test_post_processing_fields_and_switches():
    from graphcut.stereo import BorderExtrapolation, EdgeRefinement, MedianFill
    (name, value), = stereo_sweep.parse_setting("border_fit_width=20")
    assert stereo_sweep.keywords(name, value) == {
        "border_extrapolation": BorderExtrapolation(fit_width=20)}
    (name, value), = stereo_sweep.parse_setting("refine_colour_sigma=5")
    assert stereo_sweep.keywords(name, value) == {
        "edge_refinement": EdgeRefinement(colour_sigma=5.0)}
    assert [stereo_sweep.keywords(*s) for s in stereo_sweep.parse_setting("refine=on,off")] \
        == [{"edge_refinement": EdgeRefinement()}, {"edge_refinement": None}]
    assert stereo_sweep.keywords("border", False) == {"border_extrapolation": None}
    assert stereo_sweep.keywords("median_fill", True) == {"median_fill": MedianFill()}
    with pytest.raises(ValueError):
        stereo_sweep.parse_setting("refine_window=3")
