"""MNIST and Fashion-MNIST: finding, downloading, verifying and reading them.

The files keep their authors' IDX format and names; see :func:`find_dataset`
for where they are looked for and :func:`read_idx` for the reader.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.client
import os
import sys
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any
from urllib.error import HTTPError

import numpy as np

from .errors import DataError, FormatError
from .formats.fileio import AtomicWriter, open_atomic
from .formats.idx import _GZIP_MAGIC, read_idx

__all__ = ["default_folder", "download", "extract_dataset", "find_dataset", "load_mnist", "read_idx", "verify_checksums"]  # fmt: skip

DOWNLOAD_TIMEOUT_S = 30.0
_CHUNK_BYTES = 1 << 20

_FILES = {  # logical file -> published (gzip) file name
    ("train", "images"): "train-images-idx3-ubyte.gz",
    ("train", "labels"): "train-labels-idx1-ubyte.gz",
    ("test", "images"): "t10k-images-idx3-ubyte.gz",
    ("test", "labels"): "t10k-labels-idx1-ubyte.gz",
}

# (md5, sha256) of the published gzip files.
_CHECKSUMS = {
    "mnist": {
        "train-images-idx3-ubyte.gz": ("f68b3c2dcbeaaa9fbdd348bbdeb94873", "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"),
        "train-labels-idx1-ubyte.gz": ("d53e105ee54ea40749a09fcbcd1e9432", "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"),
        "t10k-images-idx3-ubyte.gz": ("9fb629c4189551a2d022fa330f9573f3", "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"),
        "t10k-labels-idx1-ubyte.gz": ("ec29112dd5afa0611ce80d1b7f02629c", "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"),
    },
    "fashion-mnist": {
        "train-images-idx3-ubyte.gz": ("8d4fb7e6c68d591d4c3dfef9ec88bf0d", "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84"),
        "train-labels-idx1-ubyte.gz": ("25c81989df183df01b3e8a0aad5dffbe", "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845"),
        "t10k-images-idx3-ubyte.gz": ("bef4ecab320f06d8554ea6380940ec79", "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073"),
        "t10k-labels-idx1-ubyte.gz": ("bb300cfdad3c16e7a12a480ee83cd310", "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5"),
    },
}  # fmt: skip

MIRRORS = {  # base URLs, tried in order
    "mnist": ("https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"),
    "fashion-mnist": ("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",),
}  # fmt: skip


def _canonical_name(name: str) -> str:
    key = str(name).lower().replace("_", "-")
    if key not in _CHECKSUMS:
        raise DataError(f"unknown dataset {name!r}, expected one of {list(_CHECKSUMS)}")
    return key


def _locate(folder: Path, published: str) -> Path | None:
    plain = published.removesuffix(".gz")  # train-images-idx3-ubyte
    dotted = plain.replace("-idx", ".idx")  # MXNet's train-images.idx3-ubyte
    for spelling in (published, plain, dotted, dotted + ".gz"):
        if (folder / spelling).is_file():
            return folder / spelling
    return None


def _missing(folder: Path) -> list[str]:
    return [file for file in _FILES.values() if _locate(folder, file) is None]


def default_folder(name: str) -> Path:
    """Where a dataset is downloaded: ``$LAZYND_HOME/datasets/<name>``.

    ``LAZYND_HOME`` defaults to ``~/.lazynd``.

    Examples
    --------
    >>> default_folder("mnist").parts[-2:]
    ('datasets', 'mnist')
    """
    home = Path(os.environ.get("LAZYND_HOME") or "~/.lazynd").expanduser()
    return home / "datasets" / _canonical_name(name)


def _progress_bar(total: str | None, label: str) -> Any:
    if sys.stderr is None or not sys.stderr.isatty():
        return contextlib.nullcontext()
    try:
        from tqdm import tqdm
    except ImportError:
        return contextlib.nullcontext()
    size = int(total) if total and total.isdigit() else None
    return tqdm(total=size, unit="B", unit_scale=True, desc=label, leave=False)


def _digests(source: IO[bytes], copy_to: AtomicWriter | None = None, bar: Any = None) -> tuple[str, str]:
    """(md5, sha256) of what *source* holds, copied to *copy_to* on the way."""
    md5, sha256 = hashlib.md5(usedforsecurity=False), hashlib.sha256()
    while chunk := source.read(_CHUNK_BYTES):
        md5.update(chunk)
        sha256.update(chunk)
        if copy_to is not None:
            copy_to.write(chunk)
        if bar is not None:
            bar.update(len(chunk))
    return md5.hexdigest(), sha256.hexdigest()


def _check_sums(path: object, given: tuple[str, str], expected: tuple[str, str]) -> None:
    for algorithm, got, want in zip(("md5", "sha256"), given, expected, strict=True):
        if got != want:
            raise DataError(f"{path}: {algorithm} is {got}, expected {want}")


def _fetch(url: str, destination: Path, expected: tuple[str, str] | None) -> None:
    """Download *url* to *destination* atomically, or raise and leave nothing; *expected*
    (md5, sha256) is checked when given."""
    request = urllib.request.Request(url, headers={"User-Agent": "lazynd"})
    with (
        open_atomic(destination) as out,
        urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT_S) as response,
        _progress_bar(response.headers["Content-Length"], destination.name) as bar,
    ):
        given = _digests(response, out, bar)
        if expected is not None:
            _check_sums(url, given, expected)  # raising here discards the download


def _where_to_put(name: str, data_dir: str | os.PathLike[str] | None) -> str:
    if data_dir is not None:
        return f"Put the files (gzip-compressed or not) in {Path(data_dir)}."
    env = os.environ.get("LAZYND_DATA_DIR")
    return (
        f"Put the files (gzip-compressed or not) in $LAZYND_DATA_DIR/{name} "
        f"(LAZYND_DATA_DIR is {'now ' + env if env else 'unset'}) "
        f"or in {default_folder(name)}."
    )


def find_dataset(
    name: str = "mnist",
    data_dir: str | os.PathLike[str] | None = None,
    *,
    download: bool = True,
    mirrors: Sequence[str] | None = None,
) -> Path:
    """Return the folder holding a dataset's four files, downloading what is missing.

    Files may be gzipped or not, named ``train-images-idx3-ubyte[.gz]`` or
    ``train-images.idx3-ubyte``.  Downloads are checked against the published
    MD5 and SHA-256 sums and written atomically.

    Parameters
    ----------
    name : {'mnist', 'fashion-mnist'}
    data_dir : str or path-like, optional
        Folder holding the files (or a ``<name>`` folder holding them); when
        given, the only place searched and where downloads go.  Otherwise
        ``$LAZYND_DATA_DIR/<name>`` then :func:`default_folder` are searched
        and downloads go to the latter.
    download : bool
        Whether to download missing files.
    mirrors : sequence of str, optional
        Base URLs tried in order, ``{name}`` replaced by the dataset name;
        defaults to ``$LAZYND_DATASET_MIRROR`` (space- or comma-separated),
        else :data:`MIRRORS`.

    Raises
    ------
    DataError
        Files are missing and could not be downloaded or failed a checksum;
        names the files, each attempt and where to put the files by hand.

    Examples
    --------
    >>> find_dataset("fashion-mnist")  # doctest: +SKIP
    PosixPath('/home/me/.lazynd/datasets/fashion-mnist')
    """
    name = _canonical_name(name)
    if data_dir is not None:
        folders = [Path(data_dir), Path(data_dir) / name]
    else:
        env = os.environ.get("LAZYND_DATA_DIR")
        folders = [Path(env) / name] if env else []
        folders.append(default_folder(name))
    for folder in folders:
        if not _missing(folder):
            return folder
    target = folders[0] if data_dir is not None else folders[-1]
    missing = _missing(target)
    if not download:
        raise DataError(f"{name}: {', '.join(missing)} not found and download=False. " + _where_to_put(name, data_dir))
    if mirrors is None:
        configured = os.environ.get("LAZYND_DATASET_MIRROR", "").replace(",", " ")
        mirrors = configured.split() or MIRRORS[name]
    bases = [base.replace("{name}", name).rstrip("/") for base in mirrors]
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"{name}: {exc}. {_where_to_put(name, data_dir)}") from exc
    attempts: list[str] = []
    failed: list[str] = []
    unreachable: set[str] = set()
    for file in missing:
        for base in (b for b in bases if b not in unreachable):
            try:
                _fetch(f"{base}/{file}", target / file, _CHECKSUMS[name][file])
                break
            # A bad URL is a ValueError; a timeout or refused connection an OSError.
            except (DataError, OSError, http.client.HTTPException, ValueError) as exc:
                attempts.append(f"  {base}/{file}: {exc}")
                # Offline, waiting out a timeout for each file would take minutes.
                if isinstance(exc, OSError) and not isinstance(exc, HTTPError):
                    unreachable.add(base)
        else:
            failed.append(file)
    if failed:
        raise DataError(
            f"{name}: could not download {', '.join(failed)} into {target}.\n"
            + "\n".join(attempts)
            + "\n"
            + _where_to_put(name, data_dir)
        )
    return target


def download(url: str, destination: str | os.PathLike[str], overwrite: bool = False, retries: int = 5) -> Path:
    """Download *url* to the file *destination*, atomically (a failed download leaves nothing);
    an existing file is kept unless *overwrite*.  Up to *retries* tries; then a
    :class:`~lazynd.errors.DataError` names the URL and the last failure."""
    target = Path(destination)
    if target.is_file() and not overwrite:
        return target
    if retries < 1:
        raise DataError(f"download: retries must be at least 1, got {retries}")
    failure: Exception | None = None
    for _ in range(retries):
        try:
            _fetch(url, target, None)
            return target
        except (OSError, http.client.HTTPException, ValueError) as exc:
            failure = exc
    raise DataError(f"download: could not fetch {url} into {target} after {retries} tries: {failure}")


def extract_dataset(
    name: str, destination: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None
) -> list[Path]:
    """The dataset's four files uncompressed in *destination* under their published names less
    ``.gz`` (``train-images-idx3-ubyte``...), found or downloaded by :func:`find_dataset`; files
    already there are kept.  Returns their paths."""
    import gzip
    import shutil

    folder = find_dataset(name, data_dir)
    target = Path(destination)
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"{name}: cannot make {target}: {exc}") from exc
    paths = []
    for published in _FILES.values():
        path = target / published.removesuffix(".gz")
        if not path.is_file():
            source = _locate(folder, published)
            if source is None:  # find_dataset returns a folder holding every file
                raise DataError(f"{name}: {published} vanished from {folder}")
            with open(source, "rb") as probe:
                packed = probe.read(2) == _GZIP_MAGIC
            with gzip.open(source, "rb") if packed else open(source, "rb") as src, open_atomic(path) as out:
                shutil.copyfileobj(src, out, _CHUNK_BYTES)
        paths.append(path)
    return paths


def verify_checksums(name: str, folder: str | os.PathLike[str]) -> list[Path]:
    """Check a dataset's gzip files against the published MD5 and SHA-256 sums.

    Uncompressed copies have no published sums; they are skipped.  Returns
    the files checked.

    Raises
    ------
    DataError
        A file is missing or a sum differs (names the file, given vs expected).

    Examples
    --------
    >>> verify_checksums("mnist", find_dataset("mnist"))  # doctest: +SKIP
    [PosixPath('.../train-images-idx3-ubyte.gz'), ...]
    """
    name, folder = _canonical_name(name), Path(folder)
    checked = []
    for file, expected in _CHECKSUMS[name].items():
        path = _locate(folder, file)
        if path is None:
            raise DataError(f"{name}: {file} is missing from {folder}")
        with open(path, "rb") as stream:
            if stream.read(2) != _GZIP_MAGIC:
                continue
            stream.seek(0)
            given = _digests(stream)
        _check_sums(path, given, expected)
        checked.append(path)
    return checked


@functools.lru_cache(maxsize=8)
def _read_cached(path: str, mtime_ns: int, size: int) -> np.ndarray:
    array = read_idx(path)
    array.flags.writeable = False  # the cache shares it between callers
    return array


def _read_shared(path: Path) -> np.ndarray:
    stat = path.stat()  # a replaced file has a new key, so it is read again
    return _read_cached(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


def load_mnist(
    name: str = "mnist",
    data_dir: str | os.PathLike[str] | None = None,
    train: bool = True,
    *,
    download: bool = True,
    mirrors: Sequence[str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Load MNIST or Fashion-MNIST, finding or downloading it first.

    Parameters
    ----------
    name, data_dir, download, mirrors
        As for :func:`find_dataset`.
    train : bool
        The 60,000 training examples, or else the 10,000 test examples.

    Returns
    -------
    images : numpy.ndarray
        uint8, shape (N, 28, 28), 0 is background.
    labels : numpy.ndarray
        uint8, shape (N,), classes 0-9.

    Both are cached in the process (keyed by path, mtime and size) and are
    read-only because callers share them: copy them to change them.

    Examples
    --------
    >>> images, labels = load_mnist("mnist", train=False)  # doctest: +SKIP
    >>> images.shape, labels[:5]  # doctest: +SKIP
    ((10000, 28, 28), array([7, 2, 1, 0, 4], dtype=uint8))
    """
    folder = find_dataset(name, data_dir, download=download, mirrors=mirrors)
    split = "train" if train else "test"
    image_path = _locate(folder, _FILES[split, "images"])
    label_path = _locate(folder, _FILES[split, "labels"])
    assert image_path is not None and label_path is not None  # found above
    images, labels = _read_shared(image_path), _read_shared(label_path)
    if images.dtype != np.uint8 or images.shape[1:] != (28, 28):
        raise FormatError(
            f"{image_path}: expected uint8 images of shape (N, 28, 28), got {images.dtype} {images.shape}"
        )
    if labels.dtype != np.uint8 or labels.shape != images.shape[:1]:
        raise FormatError(
            f"{label_path}: expected {len(images)} uint8 labels, one per image, got {labels.dtype} {labels.shape}"
        )
    if labels.size and labels.max() > 9:
        raise FormatError(f"{label_path}: labels must be 0-9, found {labels.max()}")
    return images, labels
