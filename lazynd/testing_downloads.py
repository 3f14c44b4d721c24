"""MXNet 1.x's dataset and model downloaders of ``mx.test_utils``, with its URLs and file names.

Each one looks for its files first, where MXNet looks, and downloads only what is missing (through
:func:`lazynd.test_helpers.download`: atomic, retried).  Without a network the download fails with a
:class:`~lazynd.errors.DataError` naming the URL; a file put in place beforehand is used as it is.
"""

from __future__ import annotations

import bz2
import os
import shutil
import zipfile

from .errors import FormatError, LazyNDError
from .formats.fileio import open_atomic
from .test_helpers import download

_MODELS_URL = "http://data.mxnet.io/models/"

# name -> (folder under _MODELS_URL, file prefix of '<prefix>-symbol.json' and '<prefix>-<epoch>.params', epoch)
_MODEL_FILES = {
    "imagenet1k-inception-bn": ("imagenet/inception-bn/", "Inception-BN", "0126"),
    **{
        f"imagenet1k-resnet-{layers}": (f"imagenet/resnet/{layers}-layers/", f"resnet-{layers}", "0000")
        for layers in (18, 34, 50, 101, 152)
    },
    "imagenet1k-resnext-50": ("imagenet/resnext/50-layers/", "resnext-50", "0000"),
    "imagenet1k-resnext-101": ("imagenet/resnext/101-layers/", "resnext-101", "0000"),
    "imagenet1k-resnext-101-64x4d": ("imagenet/resnext/101-layers/", "resnext-101-64x4d", "0000"),
    "imagenet11k-resnet-152": ("imagenet-11k/resnet-152/", "resnet-152", "0000"),
    "imagenet11k-place365ch-resnet-152": ("imagenet-11k-place365-ch/", "resnet-152", "0000"),
    "imagenet11k-place365ch-resnet-50": ("imagenet-11k-place365-ch/", "resnet-50", "0000"),
}


def _default_model_info() -> dict[str, dict[str, str]]:
    """MXNet's table of models on data.mxnet.io: name -> ``{'symbol': url, 'params': url}``."""
    info = {}
    for name, (folder, prefix, epoch) in _MODEL_FILES.items():
        base = _MODELS_URL + folder + prefix
        info[name] = {"symbol": f"{base}-symbol.json", "params": f"{base}-{epoch}.params"}
    return info


def download_model(model_name: str, dst_dir: str = "./", meta_info: dict | None = None) -> tuple[str | None, int]:
    """Download ``model_name``'s symbol and parameters (MXNet's table, or ``meta_info``: name ->
    ``{'symbol': url, 'params': url}``) into ``dst_dir`` as ``<name>-symbol.json`` and
    ``<name>-0000.params``; returns ``(dst_dir/<name>, 0)`` for ``mx.model.load_checkpoint``, or
    ``(None, 0)`` for a name the table lacks.  Files already there are kept."""
    table = _default_model_info() if meta_info is None else dict(meta_info)
    if model_name not in table:
        return None, 0
    urls = dict(table[model_name])
    for key in ("symbol", "params"):
        if key not in urls:
            raise LazyNDError(
                f"download_model: meta_info of {model_name!r} has no {key!r} URL, got keys {sorted(urls)}"
            )
    os.makedirs(dst_dir, exist_ok=True)
    prefix = os.path.join(dst_dir, model_name)
    download(urls["symbol"], fname=prefix + "-symbol.json")
    download(urls["params"], fname=prefix + "-0000.params")
    return prefix, 0


def get_mnist_pkl() -> None:
    """``data/mnist.pkl.gz`` (the pickled MNIST of deeplearning.net), downloaded if missing."""
    if not os.path.exists(os.path.join("data", "mnist.pkl.gz")):
        download("http://deeplearning.net/data/mnist/mnist.pkl.gz", dirname="data")


def get_cifar10() -> None:
    """CIFAR-10 as RecordIO files in ``data/cifar`` (``train.rec``, ``test.rec`` and their ``.lst``),
    extracted from ``data/cifar10.zip`` (downloaded if missing) unless all four are there."""
    wanted = ("train.rec", "test.rec", "train.lst", "test.lst")
    if all(os.path.exists(os.path.join("data", "cifar", name)) for name in wanted):
        return
    archive = download("http://data.mxnet.io/mxnet/data/cifar10.zip", dirname="data")
    _extract_zip(archive, "data")


def get_zip_data(data_dir: str, url: str, data_origin_name: str) -> None:
    """Download ``url`` as ``data_dir/data_origin_name`` and extract it into ``data_dir``, unless
    that archive is there already (then nothing is done, as in MXNet)."""
    archive = os.path.join(data_dir, data_origin_name)
    if os.path.exists(archive):
        return
    _extract_zip(download(url, fname=data_origin_name, dirname=data_dir), data_dir)


def get_bz2_data(data_dir: str, data_name: str, url: str, data_origin_name: str) -> None:
    """``data_dir/data_name``, decompressed from the bz2 file ``data_dir/data_origin_name`` (downloaded
    from ``url`` if missing; removed afterwards, as in MXNet), unless ``data_name`` is there already."""
    target = os.path.join(data_dir, data_name)
    if os.path.exists(target):
        return
    archive = download(url, fname=data_origin_name, dirname=data_dir)
    try:
        # through the project's atomic writer: any exception (an interrupt too) leaves no partial file
        with bz2.open(archive, "rb") as source, open_atomic(target) as out:
            shutil.copyfileobj(source, out)
    except (OSError, EOFError) as err:
        raise FormatError(f"get_bz2_data: {archive} is not a bz2 file ({err})") from err
    os.remove(archive)


def _extract_zip(archive: str, folder: str) -> None:
    try:
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(folder)
    except zipfile.BadZipFile as err:
        raise FormatError(f"{archive}: not a zip archive ({err})") from err


__all__ = ["download_model", "get_bz2_data", "get_cifar10", "get_mnist_pkl", "get_zip_data"]
