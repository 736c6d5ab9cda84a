"""bench/real_data.py and bench/quality_real.py: the DSB 2018 stage-1 test images' seeded
split (deterministic, disjoint, every acquisition group in both), the loader's cache checks
and messages, the run-length decoding, and Otsu's polarity (bench/quality_baselines.py).
The checks that read the images themselves are skipped when the cache is empty."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "bench")
sys.path.insert(0, BENCH)

import quality_baselines  # noqa: E402
import quality_real  # noqa: E402
import real_data  # noqa: E402


def _cached() -> bool:
    return all((real_data.CACHE / real_data.relative_path(key)).is_file()
               for key in real_data.DIGESTS)


def test_dsb_split_is_the_seeded_one_disjoint_and_covers_every_group():
    first, second = quality_real.dsb_split(), quality_real.dsb_split()
    assert first == second == quality_real.DSB_SPLIT
    assert set(first["dev"]) == set(first["test"]) == set(real_data.GROUPS)
    every = {image_id[:8] for ids in real_data.GROUPS.values() for image_id in ids}
    assert len(every) == sum(len(ids) for ids in real_data.GROUPS.values()) == 65
    dev = {p for ids in first["dev"].values() for p in ids}
    test = {p for ids in first["test"].values() for p in ids}
    assert dev.isdisjoint(test) and dev | test <= every
    for group, ids in real_data.GROUPS.items():
        prefixes = {image_id[:8] for image_id in ids}
        assert set(first["dev"][group]) <= prefixes and set(first["test"][group]) <= prefixes
        assert len(first["dev"][group]) == len(first["test"][group]) >= 2
    # the cache holds exactly the split's images and the solution
    chosen = {image_id for ids in real_data.GROUPS.values() for image_id in ids
              if image_id[:8] in dev | test}
    assert set(real_data.DIGESTS) == chosen | {real_data.SOLUTION}
    # the stardist quadrants keep their split
    assert quality_real.split() == {"dev": ("q01", "q11"), "test": ("q00", "q10")}


def test_another_seed_gives_another_split(monkeypatch):
    monkeypatch.setattr(quality_real, "DSB_SEED", quality_real.DSB_SEED + 1)
    with pytest.raises(AssertionError):
        quality_real.dsb_split()


def test_a_missing_cache_says_what_is_missing_and_how_to_fetch_it(tmp_path, monkeypatch):
    monkeypatch.setattr(real_data, "CACHE", tmp_path / "empty")
    monkeypatch.setattr(real_data, "_RUNS", {})
    image_id = next(iter(key for key in real_data.DIGESTS if key != real_data.SOLUTION))
    with pytest.raises(real_data.MissingData) as caught:
        real_data.load_image(image_id)
    message = str(caught.value)
    assert str(tmp_path / "empty") in message and image_id in message
    assert "python bench/real_data.py" in message and "--from" in message
    with pytest.raises(real_data.MissingData):
        quality_real.real_set("dev", "all", sources=("dsb",))


def test_a_changed_file_is_refused_with_its_checksum(tmp_path, monkeypatch):
    monkeypatch.setattr(real_data, "CACHE", tmp_path)
    monkeypatch.setattr(real_data, "_RUNS", {})
    (tmp_path / real_data.SOLUTION).write_text("ImageId,EncodedPixels,Height,Width,Usage\n")
    with pytest.raises(real_data.MissingData, match=real_data.DIGESTS[real_data.SOLUTION]):
        real_data.solution_runs()


def _encode(mask: np.ndarray) -> str:
    """Column-major, 1-based runs of a boolean mask (the oracle's own encoder)."""
    flat = np.concatenate([[0], mask.T.ravel().astype(np.int8), [0]])
    edges = np.flatnonzero(np.diff(flat))
    return " ".join(f"{start + 1} {stop - start}" for start, stop in zip(edges[::2], edges[1::2]))


def test_rle_labels_decodes_what_an_independent_encoder_wrote():
    rng = np.random.default_rng(5)
    shape = (13, 7)
    owner = rng.integers(0, 4, size=shape)  # 0 background, 1..3 three disjoint masks
    runs = [_encode(owner == k) for k in (1, 2, 3)]
    np.testing.assert_array_equal(real_data.rle_labels(runs, shape), owner)
    with pytest.raises(ValueError, match="leaves"):
        real_data.rle_labels(["90 5"], shape)
    with pytest.raises(ValueError, match="overlaps"):
        real_data.rle_labels(["1 3", "2 1"], shape)


def test_fetch_copies_from_a_git_directory_and_checks_each_file(tmp_path, monkeypatch):
    clone = tmp_path / "clone"
    clone.mkdir()
    content = b"ImageId,EncodedPixels,Height,Width,Usage\nabc,1 2,2,2,Public\n"
    (clone / real_data.SOLUTION).write_bytes(content)
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "data"], check=True)
    commit = subprocess.run(git[:3] + ["rev-parse", "HEAD"], check=True, capture_output=True,
                            text=True).stdout.strip()
    (clone / real_data.SOLUTION).unlink()  # only the git directory holds it now
    monkeypatch.setattr(real_data, "COMMIT", commit)
    monkeypatch.setattr(real_data, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(real_data, "DIGESTS",
                        {real_data.SOLUTION: hashlib.sha256(content).hexdigest()})
    real_data.fetch(clone / ".git")
    assert (tmp_path / "cache" / real_data.SOLUTION).read_bytes() == content
    (tmp_path / "cache" / real_data.SOLUTION).unlink()
    monkeypatch.setattr(real_data, "DIGESTS", {real_data.SOLUTION: "0" * 64})
    with pytest.raises(real_data.MissingData, match="does not match"):
        real_data.fetch(clone / ".git")
    assert not any((tmp_path / "cache").iterdir())


def test_busiest_window_holds_the_most_whole_nuclei():
    labels = np.zeros((300, 400), np.int32)
    for k, (r, c) in enumerate([(250, 350), (260, 380), (280, 360), (20, 20)], start=1):
        labels[r:r + 10, c:c + 10] = k
    window = quality_real.busiest_window(labels, size=128, stride=32)
    assert labels[window].shape == (128, 128)
    assert set(np.unique(labels[window])) == {0, 1, 2, 3}
    small = np.ones((50, 60), np.int32)
    assert labels[quality_real.busiest_window(small)].shape == small.shape


def test_chosen_nuclei_are_whole_large_enough_and_from_both_halves():
    labels = np.zeros((80, 80), np.int32)
    sizes = {1: 4, 2: 6, 3: 7, 4: 8, 5: 9, 6: 10}  # squares of side n: areas 16..100
    for k, n in sizes.items():
        labels[5 + (k - 1) * 12:5 + (k - 1) * 12 + n // 2 * 2, 10:10 + n] = k
    labels[0:9, 60:70] = 7  # touches the edge: never chosen
    picked = quality_real.chosen_nuclei(labels, np.random.default_rng(0), 4)
    areas = {k: int((labels == k).sum()) for k in sizes}
    qualified = sorted(k for k, a in areas.items() if a >= quality_real.MIN_NUCLEUS_AREA)
    assert len(picked) == 4 and 7 not in picked and set(picked) <= set(qualified)
    by_area = sorted(qualified, key=lambda k: areas[k])
    half = len(by_area) // 2
    assert len(set(picked) & set(by_area[:half])) == 2
    assert len(set(picked) & set(by_area[half:])) == 2


@pytest.mark.slow
@pytest.mark.skipif(not _cached(), reason="the DSB files are not in bench/real_data.py's cache")
def test_cached_items_are_real_annotated_crops():
    for which in ("dev",):  # the test split is read for the final report only
        every = quality_real.real_set(which, "all", sources=("dsb",))
        one = quality_real.real_set(which, "one", sources=("dsb",))
        assert len(every) == sum(len(v) for v in quality_real.DSB_SPLIT[which].values())
        assert {item.image.ndim for item in every} == {2, 3}  # grey and colour
        for item in every:
            assert item.image.dtype == np.uint8 and item.image.shape[:2] == item.truth.shape
            assert max(item.truth.shape) <= quality_real.CROP
            assert 0 < item.truth.mean() < 0.9
        for item in one:
            assert item.truth.sum() >= quality_real.MIN_NUCLEUS_AREA
            edge = np.r_[item.truth[0], item.truth[-1], item.truth[:, 0], item.truth[:, -1]]
            assert not edge.any()
        names = [item.name for item in every + one]
        assert len(names) == len(set(names))


def test_otsu_takes_the_dark_side_when_the_seeds_or_the_box_say_so():
    image = np.full((40, 40), 200, np.uint8)
    image[10:20, 10:20] = 40  # a dark nucleus on a bright background (brightfield)
    truth = image < 100
    seeds = np.zeros(image.shape, np.uint8)
    seeds[14, 14], seeds[30, 30] = 1, 2
    assert (quality_baselines.run_otsu(image, seeds, None) == truth).all()
    only_object = np.where(seeds == 1, 1, 0).astype(np.uint8)
    assert (quality_baselines.run_otsu(image, only_object, None) == truth).all()
    box = (7, 7, 23, 23)
    assert (quality_baselines.run_otsu(image, np.zeros_like(seeds), box) == truth).all()
    # a bright nucleus (fluorescence): the brighter side, as before
    inverted = 255 - image
    assert (quality_baselines.run_otsu(inverted, seeds, None) == truth).all()
    assert (quality_baselines.run_otsu(inverted, np.zeros_like(seeds), box) == truth).all()
