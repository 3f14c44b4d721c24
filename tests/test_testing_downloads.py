"""mx.test_utils' downloaders: MXNet's URLs and file names; local files used; no network -> DataError."""

from __future__ import annotations

import bz2
import shutil
import urllib.error
import zipfile

import pytest

from lazynd import test_utils
from lazynd.errors import DataError


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """No network (every URL refused at once) and a fresh working folder."""

    def refuse(request, *args, **kwargs):
        raise urllib.error.URLError("network unreachable")

    monkeypatch.setattr("lazynd.datasets.urllib.request.urlopen", refuse)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_without_network_each_downloader_names_its_url(offline):
    with pytest.raises(DataError, match=r"http://deeplearning\.net/data/mnist/mnist\.pkl\.gz"):
        test_utils.get_mnist_pkl()
    with pytest.raises(DataError, match=r"http://data\.mxnet\.io/mxnet/data/cifar10\.zip"):
        test_utils.get_cifar10()
    with pytest.raises(DataError, match=r"http://example\.invalid/a\.zip"):
        test_utils.get_zip_data("zips", "http://example.invalid/a.zip", "a.zip")
    with pytest.raises(DataError, match=r"http://example\.invalid/b\.bz2"):
        test_utils.get_bz2_data("bz", "b.txt", "http://example.invalid/b.bz2", "b.bz2")
    url = r"http://data\.mxnet\.io/models/imagenet/resnet/18-layers/resnet-18-symbol\.json"
    with pytest.raises(DataError, match=url):
        test_utils.download_model("imagenet1k-resnet-18", dst_dir="models")


def test_local_files_are_used_where_mxnet_would(offline):
    (offline / "data").mkdir()
    (offline / "data" / "mnist.pkl.gz").write_bytes(b"kept")
    test_utils.get_mnist_pkl()
    with zipfile.ZipFile(offline / "data" / "cifar10.zip", "w") as zipped:
        for name in ("train.rec", "test.rec", "train.lst", "test.lst"):
            zipped.writestr(f"cifar/{name}", name)
    test_utils.get_cifar10()
    assert (offline / "data" / "cifar" / "test.lst").read_text() == "test.lst"
    (offline / "bz").mkdir()
    (offline / "bz" / "b.bz2").write_bytes(bz2.compress(b"line 1\nline 2\n"))
    test_utils.get_bz2_data("bz", "b.txt", "http://example.invalid/b.bz2", "b.bz2")
    assert (offline / "bz" / "b.txt").read_bytes() == b"line 1\nline 2\n" and not (offline / "bz" / "b.bz2").exists()
    (offline / "models").mkdir()
    for suffix in ("-symbol.json", "-0000.params"):
        (offline / "models" / f"imagenet1k-resnet-18{suffix}").write_text("{}")
    assert test_utils.download_model("imagenet1k-resnet-18", dst_dir="models") == ("models/imagenet1k-resnet-18", 0)


def test_download_model_of_an_unknown_name_and_given_urls(offline):
    assert test_utils.download_model("no-such-model") == (None, 0)
    with pytest.raises(DataError, match=r"http://example\.invalid/m-symbol\.json"):
        test_utils.download_model(
            "m", "models", {"m": {"symbol": "http://example.invalid/m-symbol.json", "params": "x"}}
        )


def test_get_bz2_data_interrupted_mid_write_leaves_no_partial_file(offline, monkeypatch):
    # it wrote through open(target + '.part', 'wb') and removed that only on OSError/EOFError:
    # an interrupt left the partial file behind; it now goes through the atomic writer
    (offline / "bz").mkdir()
    (offline / "bz" / "b.bz2").write_bytes(bz2.compress(b"line 1\nline 2\n"))

    def copy_then_interrupt(source, out):
        out.write(source.read(3))
        raise KeyboardInterrupt

    monkeypatch.setattr(shutil, "copyfileobj", copy_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        test_utils.get_bz2_data("bz", "b.txt", "http://example.invalid/b.bz2", "b.bz2")
    assert sorted(p.name for p in (offline / "bz").iterdir()) == ["b.bz2"]
