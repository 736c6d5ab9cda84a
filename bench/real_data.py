"""Real microscopy annotated by people for bench/quality_real.py: the 65 images of the 2018
Data Science Bowl's stage-1 test set (BBBC038v1) with their official solution masks.

The Broad Bioimage Benchmark Collection releases BBBC038v1 (Caicedo et al., Nature Methods
16, 2019) under CC0 1.0: images from many laboratories, fluorescence (several instruments,
magnifications and cell types), brightfield and H&E-stained tissue, each nucleus outlined by
people (the solution of stage 1, ``stage1_solution.csv``: one run-length encoded nucleus a
row, column-major, 1-based). They are read from the GitHub repository
yuanqing811/DSB2018_stage1_test at a pinned commit (images and solution as Kaggle released
them; every file is checked against its SHA-256); nothing of it is committed here: the files
are kept in an ignored cache folder, ``bench/.real-data`` (or ``$GRAPHCUT_REAL_DATA``).

    python bench/real_data.py                  # download into the cache (needs network)
    python bench/real_data.py --from CLONE     # copy from a local clone or its git directory

:data:`GROUPS` sorts the images by acquisition, from what the files show (size, grey or
colour): these are the "sources" of the split in quality_real.py.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np

SOURCE = "yuanqing811/DSB2018_stage1_test"
COMMIT = "ee7c37eb666b7d697269149b6902f2ff3062dcd0"
URL = f"https://raw.githubusercontent.com/{SOURCE}/{COMMIT}"
CACHE = Path(os.environ.get("GRAPHCUT_REAL_DATA",
                            Path(__file__).resolve().parent / ".real-data"))
SOLUTION = "stage1_solution.csv"

#: the images by acquisition: "fluo-small" 256 x 256 grey fluorescence, small nuclei;
#: "fluo-large" 512 x 640 grey, high magnification (nuclei of 300-15 000 pixels);
#: "fluo-screen" 520 x 696 grey, a high-throughput screen (BBBC039-like); "fluo-dense" grey
#: tiles of tissue or dense cultures (many touching nuclei, bright background);
#: "he-tissue" 512 x 680 colour, H&E-stained tissue; "stained-tissue" 524 x 348 colour,
#: purple-stained nuclei on a light background
GROUPS = {
    "fluo-small": (
        "0114f484a16c152baa2d82fdd43740880a762c93f436c8988ac461c5c9dbe7d5",
        "0a849e0eb15faa8a6d7329c3dd66aabe9a294cccb52ed30a90c8ca99092ae732",
        "0e132f71c8b4875c3c2dd7a22997468a3e842b46aa9bd47cf7b0e8b7d63f0925",
        "0ed3555a4bd48046d3b63d8baf03a5aa97e523aa483aaa07459e7afa39fb96c6",
        "191b2b2205f2f5cc9da04702c5d422bc249faf8bca1107af792da63cccfba829",
        "1ef68e93964c2d9230100c1347c328f6385a7bc027879dc3d4c055e6fe80cb3c",
        "295682d9eb5acb5c1976a460c085734bfaf38482b0a3f02591c2bfdcd4128549",
        "31f1fbe85b8899258ea5bcf5f93f7ac8238660c386aeab40649c715bd2e38a0a",
        "38f5cfb55fc8b048e82a5c895b25fefae7a70c71ab9990c535d1030637bf6a1f",
        "4727d94c6a57ed484270fdd8bbc6e3d5f2f15d5476794a4e37a40f2309a091e2",
        "4be73d68f433869188fe5e7f09c7f681ed51003da6aa5d19ce368726d8e271ee",
        "519dc0d672d1c295fc69b629af8721ccb1a1f136d1976685a68487e62547ffe0",
        "51c70bb8a299943b27f8b354571272692d8f2705036a1a9562156c76da5f025b",
        "53df5150ee56253fe5bc91a9230d377bb21f1300f443ba45a758bcb01a15c0e4",
        "648c8ffa496e1716017906d0bf135debfc93386ae86aa3d4adbda9a505985fd9",
        "697a05c6fe4a07c601d46da80885645ad574ea19b47ee795ccff216c9f1f1808",
        "7f4cbe0b36b5d09466476a7d4e01f4f976c67872d549f4ff47b3e1e3a2b403af",
        "912a679e4b9b1d1a75170254fd675b8c24b664d80ad7ea7e460241a23535a406",
        "ab298b962a63e4be9582513aaa84a5e270adba5fd2b16a50e59540524f63c3b8",
        "d8d4bf68a76e4e4c5f21de7ac613451f7115a04db686151e78b8ec0b6a22022b",
        "dab46d798d29aff2e99c23f47ed3064f5cafb1644629b015c95a2dd2ee593bb4",
        "e17b7aedd251a016c01ef9158e6e4aa940d9f1b35942d86028dc1222192a9258",
        "fac507fa4d1649e8b24c195d990f1fc3ca3633d917839e1751a9d412a14ab5e3",
        "fe9adb627a6f45747c5a8223b671774791ededf9364f6544be487c540107fa4f",
    ),
    "fluo-dense": (
        "0999dab07b11bc85fb8464fc36c947fbd8b5d6ec49817361cb780659ca805eac",
        "1962d0c5faf3e85cda80e0578e0cb7aca50826d781620e5c1c4cc586bc69f81a",
        "336d3e4105766f8ad328a7ee9571e743f376f8cbcf6a969ca7e353fe3235c523",
        "432f367a4c5b5674de2e2977744d10289a064e5704b21af6607b4975be47c580",
        "43a71aeb641faa18742cb826772a8566c6c947d7050f9ab15459de6cc2b3b6af",
        "4f949bd8d914bbfa06f40d6a0e2b5b75c38bf53dbcbafc48c97f105bee4f8fac",
        "52b267e20519174e3ce1e1994b5d677804b16bc670aa5f6ffb6344a0fdf63fde",
        "550450e4bff4036fd671decdc5d42fec23578198d6a2fd79179c4368b9d6da18",
        "699f2992cd71e2e28cf45f81347ff22e76b37541ce88087742884cd0e9aadc68",
        "78a981bd27ba0c65a9169548665a17bda9f49050d0d3893a6567d1eb92cd003d",
        "a4816cc1fb76cb3c5e481186833fc0ae9cf426a1406a2607e974e65e9cddba4f",
        "a984e7fb886aa02e29d112766d3ce26a4f78eac540ce7bbdbd42af2761928f6d",
        "ca20076870e8fb604e61802605a9ac45419c82dd3e23404c56c4869f9502a5ef",
        "d616d323a9eeb9da1b66f8d5df671d63c092c9919cb2c0b223e29c63257c944d",
        "d6eb7ce7723e2f6dc13b90b41a29ded27dbd815bad633fdf582447c686018896",
        "df40099c6306ca1f47fcc8a62e2fa39486d4e223177afdc51b2ad189691802d8",
        "eea70a7948d25a9a791dbcb39228af4ea4049fe5ebdee9c04884be8cca3da835",
    ),
    "he-tissue": (
        "0f1f896d9ae5a04752d3239c690402c022db4d72c0d2c087d73380896f72c466",
        "17b9bf4356db24967c4677b8376ac38f826de73a88b93a8d73a8b452e399cdff",
        "259b35151d4a7a5ffdd7ab7f171b142db8cfe40beeee67277fac6adca4d042c4",
        "44afae184c89e6ba55985b4d341acc1ae1e8b6ef96312064e0e6e630e022b078",
        "472b1c5ff988dadc209faea92499bc07f305208dbda29d16262b3d543ac91c71",
        "9f17aea854db13015d19b34cb2022cfdeda44133323fcd6bb3545f7b9404d8ab",
        "da6c593410340b19bb212b9f6d274f95b08c0fc8f2570cd66bc5ed42c560acab",
        "f5effed21f671bbf4551ecebb7fe95f3be1cf09c16a60afe64d2f0b95be9d1eb",
    ),
    "fluo-large": (
        "1747f62148a919c8feb6d607faeebdf504b5e2ad42b6b1710b1189c37ebcdb2c",
        "1879f4f4f05e2bada0ffeb46c128b8df7a79b14c84f38c3e216a69653495153b",
        "1cdbfee1951356e7b0a215073828695fe1ead5f8b1add119b6645d2fdc8d844e",
        "505bc0a3928d8aef5ce441c5a611fdd32e1e8eccdc15cc3a52b88030acb50f81",
        "5cee644e5ffbef1ba021c7f389b33bafd3b1841f04d3edd7922d5084c2c4e0c7",
        "7bdb668e6127b7eafc837a883f0648002bd063c736f55a4f673e787250a3fb04",
        "8922a6ac8fd0258ec27738ca101867169b20d90a60fc84f93df77acd5bf7c80b",
        "9ab2d381f90b485a68b82bc07f94397a0373e3215ad20935a958738e55f3cfc2",
    ),
    "stained-tissue": (
        "1d9eacb3161f1e2b45550389ecf7c535c7199c6b44b1c6a46303f7b965e508f1",
        "3c4c675825f7509877bc10497f498c9a2e3433bf922bd870914a2eb21a54fd26",
        "b83d1d77935b6cfd44105b54600ffc4b6bd82de57dec65571bcb117fa8398ba3",
        "c8e79ff4ac55f4b772057de28e539727b7f4f2a3de73bf7a082a0ace86d609eb",
    ),
    "fluo-screen": (
        "8b59819fbc92eefe45b1db95c0cc3a467ddcfc755684c7f2ba2f6ccb9ad740ab",
        "ade080c6618cbbb0a25680cf847f312b5e19b22bfe1cafec0436987ebe5b1e7e",
        "bdc789019cee8ddfae20d5f769299993b4b330b2d38d1218646cf89e77fbbd4d",
        "f0d0ab13ff53adc3c4d57e95a5f83d80b06f2cbc0bf002b52cf7b496612e0ce4",
    ),
}

#: SHA-256 of every file that quality_real.py reads: the images of its dev and test splits
#: (by image id) and the solution (:data:`SOLUTION`)
DIGESTS = {
    SOLUTION:
        "b697d9ae093d72079f45adea7e9823204d3f67dd5ab657f68ce86ab988fc32f9",
    "0999dab07b11bc85fb8464fc36c947fbd8b5d6ec49817361cb780659ca805eac":
        "65c1895f8a507102b1356169f7c76a2c5bc3035f552792bca4cffcc231a91b73",
    "0f1f896d9ae5a04752d3239c690402c022db4d72c0d2c087d73380896f72c466":
        "61be1b40461ae4facb651a9de14963ae56cbc58f49f988006ad8e2df0711aecd",
    "1747f62148a919c8feb6d607faeebdf504b5e2ad42b6b1710b1189c37ebcdb2c":
        "e607497df8db2b3a25065e8c9cafe94d1ba95f9529ef06fab7e96d62fb152267",
    "17b9bf4356db24967c4677b8376ac38f826de73a88b93a8d73a8b452e399cdff":
        "c114e7d2224345d0b7beb0e97f8eed27bbd4f583e61d18886c91cb28c8b29432",
    "1879f4f4f05e2bada0ffeb46c128b8df7a79b14c84f38c3e216a69653495153b":
        "9a8c9c9c7d17af85c611b06ccbb921b1c072d6b97b664de5e8eead19de88913b",
    "1962d0c5faf3e85cda80e0578e0cb7aca50826d781620e5c1c4cc586bc69f81a":
        "778a34c819eb740c63937efc779207dcbd1bc39fec0542db20f7a56685f92839",
    "1d9eacb3161f1e2b45550389ecf7c535c7199c6b44b1c6a46303f7b965e508f1":
        "07f5807e154f297e6629dd49625c84523690872f6b967e570a19ed4fa378194f",
    "31f1fbe85b8899258ea5bcf5f93f7ac8238660c386aeab40649c715bd2e38a0a":
        "889172fb3652072989aa637c31b3aaeb376cc7d5e56f094f6e96075678f99e70",
    "3c4c675825f7509877bc10497f498c9a2e3433bf922bd870914a2eb21a54fd26":
        "5ee274d252c13cf3317ff619a10eead1cf287340aed3656ad33aebb8a93a09c8",
    "44afae184c89e6ba55985b4d341acc1ae1e8b6ef96312064e0e6e630e022b078":
        "f5abb067aadd54f43725c47b8ba693ffa20b1c643116857832d2d8f57f29408e",
    "4727d94c6a57ed484270fdd8bbc6e3d5f2f15d5476794a4e37a40f2309a091e2":
        "6e1efb0d3f2479d2df10f55e605338044772753a69ec56cf6166d70afbccf729",
    "472b1c5ff988dadc209faea92499bc07f305208dbda29d16262b3d543ac91c71":
        "49828e8d68354b75a4b34c69129ca54987303535414d586f21eec48249aeed3f",
    "505bc0a3928d8aef5ce441c5a611fdd32e1e8eccdc15cc3a52b88030acb50f81":
        "2012b3861860dee2ab5cfc5fb7e7a53464f837a402ac9f0a04f39f6671ce092a",
    "52b267e20519174e3ce1e1994b5d677804b16bc670aa5f6ffb6344a0fdf63fde":
        "0cee54736008e833729628487aedf70a9ef0b75c5f5543001844b9e8aa089392",
    "53df5150ee56253fe5bc91a9230d377bb21f1300f443ba45a758bcb01a15c0e4":
        "fcaecaf7f57ae17926b1ff5c29537d33c4e81f3228c49b54284d6d15090cbe8a",
    "550450e4bff4036fd671decdc5d42fec23578198d6a2fd79179c4368b9d6da18":
        "50fd914597c8e2f95ba8f7d33198e492ce64377ea8720b11b5d269025ab9073f",
    "5cee644e5ffbef1ba021c7f389b33bafd3b1841f04d3edd7922d5084c2c4e0c7":
        "568c4fca55a0625ddce99108a7e28bb6662aceee6c05c5bf301456234e7aa2a6",
    "7bdb668e6127b7eafc837a883f0648002bd063c736f55a4f673e787250a3fb04":
        "4d56393929cd23da6e0a04254ea4e35f330cb8967f7ad977d3e01dc632896f0b",
    "8b59819fbc92eefe45b1db95c0cc3a467ddcfc755684c7f2ba2f6ccb9ad740ab":
        "a3b1ca0ba17703fe3dc04088b9aab07a7f6afdb5698e0707e7b87f65332a02bd",
    "9ab2d381f90b485a68b82bc07f94397a0373e3215ad20935a958738e55f3cfc2":
        "48a0dbe658192c662cdf37b47361033dbfe066c0c1f925cccace740fd8d9f6c6",
    "9f17aea854db13015d19b34cb2022cfdeda44133323fcd6bb3545f7b9404d8ab":
        "04aeeae5f5c66495a1183c0a54653eebf18a90055a40bfa36379c863ebd0ffa7",
    "a984e7fb886aa02e29d112766d3ce26a4f78eac540ce7bbdbd42af2761928f6d":
        "9cb4599072cdc2f01e19e3d1346016f974c0d25be81daae68c3db8549bb4003d",
    "ab298b962a63e4be9582513aaa84a5e270adba5fd2b16a50e59540524f63c3b8":
        "a28235dcd29c72ef3b683f0b66d03f699515e1d1b56b0b80636c29eed6c66b5d",
    "ade080c6618cbbb0a25680cf847f312b5e19b22bfe1cafec0436987ebe5b1e7e":
        "ad4310ce15fd01d2d4c182f450e0711150067122a2e2df1e562b191f6d554357",
    "b83d1d77935b6cfd44105b54600ffc4b6bd82de57dec65571bcb117fa8398ba3":
        "2cca81a91dd1c888284da248c0bad5841e5381d8ad49a7deaf530d0ed2cb914a",
    "bdc789019cee8ddfae20d5f769299993b4b330b2d38d1218646cf89e77fbbd4d":
        "31736e329cfe99ff20292e2e576220011de3dc67614227aab655dd599ae21263",
    "c8e79ff4ac55f4b772057de28e539727b7f4f2a3de73bf7a082a0ace86d609eb":
        "95f7bd84a6d30c082396c64c756576fb11049ae3ae933be0b58052c242e80de0",
    "ca20076870e8fb604e61802605a9ac45419c82dd3e23404c56c4869f9502a5ef":
        "3ef77bfec6c4b56e617e77ec5f82bc10ffa50bd26035109ad55a7adcf71c07a9",
    "f0d0ab13ff53adc3c4d57e95a5f83d80b06f2cbc0bf002b52cf7b496612e0ce4":
        "2482778182f92616c8093cb488510c43be94ae1ed8237fa184f9f0a491555a11",
    "f5effed21f671bbf4551ecebb7fe95f3be1cf09c16a60afe64d2f0b95be9d1eb":
        "8feb8e34dc24ab7515ee449ea76460c11027153735eafff83a0fb07ac53a07de",
    "fac507fa4d1649e8b24c195d990f1fc3ca3633d917839e1751a9d412a14ab5e3":
        "a4929ca7b179d8763b42275df591183cd17415feac2cd75e69a0c23a1b2c0c1e",
    "fe9adb627a6f45747c5a8223b671774791ededf9364f6544be487c540107fa4f":
        "258b0cc27019a18015825b54711a4c41830b74e6d5bfaf29e2bcbdd73c26a085",
}


class MissingData(RuntimeError):
    """A file of the set is not in the cache (or does not match its checksum)."""


def image_path(image_id: str) -> str:
    """Path of image ``image_id`` inside the repository."""
    return f"stage1_test/{image_id}/images/{image_id}.png"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def relative_path(key: str) -> str:
    """Path inside the repository (and the cache) of a key of :data:`DIGESTS`."""
    return SOLUTION if key == SOLUTION else image_path(key)


def _checked(key: str) -> Path:
    path = CACHE / relative_path(key)
    if not path.is_file():
        raise MissingData(f"{path} is missing: the real-microscopy set (BBBC038v1, DSB 2018 "
                          f"stage 1 test) is not in the cache {CACHE}; run python "
                          f"bench/real_data.py (needs network) or python bench/real_data.py "
                          f"--from CLONE (a local clone of {SOURCE})")
    expected = DIGESTS[key]
    if _sha256(path) != expected:
        raise MissingData(f"{path} does not match its SHA-256 {expected}; delete it and run "
                          f"python bench/real_data.py again")
    return path


def rle_labels(runs: list[str], shape: tuple[int, int]) -> np.ndarray:
    """Instance labels from run-length encoded masks.

    Parameters
    ----------
    runs : list of str
        One mask each, "start length start length ...": 1-based starts counted down the
        columns (column-major), as the Data Science Bowl encodes them.
    shape : (int, int)
        The image's (height, width) in pixels.

    Returns
    -------
    numpy.ndarray
        int32 (height, width): 0 background, ``i + 1`` the pixels of ``runs[i]``.

    Raises
    ------
    ValueError
        When a run leaves the image or two masks overlap.

    Examples
    --------
    >>> rle_labels(["1 2", "4 1"], (2, 2)).tolist()
    [[1, 0], [1, 2]]
    """
    flat = np.zeros(shape[0] * shape[1], dtype=np.int32)
    for label, run in enumerate(runs, start=1):
        numbers = np.asarray(run.split(), dtype=np.int64)
        for start, length in zip(numbers[0::2] - 1, numbers[1::2]):
            if start < 0 or start + length > flat.size:
                raise ValueError(f"mask {label}: run {start + 1} {length} leaves a {shape} image")
            if flat[start:start + length].any():
                raise ValueError(f"mask {label} overlaps another mask")
            flat[start:start + length] = label
    return flat.reshape(shape[::-1]).T.copy()


def load_image(image_id: str) -> tuple[np.ndarray, np.ndarray]:
    """``(image, labels)`` of one cached image of the set.

    Parameters
    ----------
    image_id : str
        The image's id (a key's folder name in the repository: 64 hex digits).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The image, uint8: (H, W) when its three channels are equal (fluorescence), else
        (H, W, 3) RGB (the PNG's alpha channel is dropped); and the people's instance labels,
        int32 (H, W), 0 background.

    Raises
    ------
    MissingData
        When the image or the solution is not in the cache or does not match its SHA-256.
    """
    from skimage.io import imread

    rgb = imread(_checked(image_id))[..., :3]
    runs = solution_runs()[image_id]
    image = rgb[..., 0] if (rgb == rgb[..., :1]).all() else rgb
    return np.ascontiguousarray(image), rle_labels(runs, rgb.shape[:2])


_RUNS: dict = {}


def solution_runs() -> dict:
    """{image id: [run-length encoded nucleus, ...]} of the cached solution (read once)."""
    if not _RUNS:
        with open(_checked(SOLUTION), newline="") as handle:
            for row in csv.DictReader(handle):
                _RUNS.setdefault(row["ImageId"], []).append(row["EncodedPixels"])
    return _RUNS


def _read_from(source: Path, relative: str) -> bytes:
    """A file of :data:`COMMIT` from a clone's work tree or from a git directory."""
    if (source / relative).is_file():
        return (source / relative).read_bytes()
    result = subprocess.run(["git", f"--git-dir={source}", "show", f"{COMMIT}:{relative}"],
                            capture_output=True, check=False)
    if result.returncode:
        raise MissingData(f"{relative} is neither in {source} nor in its git history at "
                          f"{COMMIT}: {result.stderr.decode(errors='replace').strip()}")
    return result.stdout


def fetch(source: Path | None = None) -> None:
    """Put every file of :data:`DIGESTS` into the cache, checking each SHA-256.

    Parameters
    ----------
    source : pathlib.Path, optional
        A local clone of the repository (its work tree, or its git directory holding
        :data:`COMMIT`) to copy from; without it the pinned commit's files are downloaded.

    Raises
    ------
    MissingData
        When a file cannot be had or does not match its SHA-256 (nothing is left in the
        cache for it).
    """
    for key, digest in DIGESTS.items():
        relative = relative_path(key)
        target = CACHE / relative
        if target.is_file() and _sha256(target) == digest:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".part")
        if source is not None:
            partial.write_bytes(_read_from(source, relative))
        else:
            with urllib.request.urlopen(f"{URL}/{relative}", timeout=60) as response:
                partial.write_bytes(response.read(50_000_000))
        if _sha256(partial) != digest:
            partial.unlink()
            raise MissingData(f"{relative} from {source or URL} does not match its SHA-256 "
                              f"{digest}")
        shutil.move(partial, target)
    print(f"{len(DIGESTS)} files ok in {CACHE}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="source", type=Path, default=None,
                        help=f"a local clone of {SOURCE} (work tree or git directory) to "
                             "copy from instead of downloading")
    args = parser.parse_args(argv)
    try:
        fetch(args.source)
    except (MissingData, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
