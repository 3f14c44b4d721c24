"""ImageIter's MXNet hooks: what a subclass overrides, and the helpers a custom next() calls.

Each case was run under MXNet 1.9.1 as well, with the same images and subclasses: same batches.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

import lazynd as mx
from lazynd import image


@pytest.fixture
def png_folder(tmp_path):
    rng = np.random.default_rng(1)
    for i in range(5):
        cv2.imwrite(str(tmp_path / f"img{i}.png"), rng.integers(0, 255, (8, 8, 3), dtype=np.uint8))
    return tmp_path


def _rgb(folder, i: int) -> np.ndarray:
    return cv2.imread(str(folder / f"img{i}.png"))[:, :, ::-1].astype(np.float32)


def _items() -> list:
    return [[float(i), f"img{i}.png"] for i in range(5)]


def test_overridden_hooks_make_the_batches(png_folder):
    class Hooked(image.ImageIter):
        def read_image(self, fname):
            self.read.append(fname)
            return super().read_image(fname)

        def augmentation_transform(self, data):
            return data.astype("float32") + 1

        def postprocess_data(self, datum):
            return mx.nd.transpose(datum, axes=(2, 0, 1)) * 0.5

    Hooked.read = []
    batch = Hooked(2, (3, 8, 8), imglist=_items(), path_root=str(png_folder), aug_list=[]).next()
    expected = np.stack([(_rgb(png_folder, i) + 1).transpose(2, 0, 1) * 0.5 for i in (0, 1)])
    np.testing.assert_array_equal(batch.data[0].asnumpy(), expected)
    assert batch.label[0].asnumpy().tolist() == [0.0, 1.0]
    assert Hooked.read == ["img0.png", "img1.png"]


def test_overridden_next_sample_feeds_the_batches(png_folder):
    class FromPairs(image.ImageIter):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.pairs = [(7.0, (png_folder / f"img{i}.png").read_bytes()) for i in (4, 3)]

        def next_sample(self):
            if not self.pairs:
                raise StopIteration
            return self.pairs.pop(0)

    it = FromPairs(2, (3, 8, 8), imglist=_items(), path_root=str(png_folder), aug_list=[])
    batch = it.next()
    expected = np.stack([_rgb(png_folder, i).transpose(2, 0, 1) for i in (4, 3)])
    np.testing.assert_array_equal(batch.data[0].asnumpy(), expected)
    assert batch.label[0].asnumpy().tolist() == [7.0, 7.0]
    with pytest.raises(StopIteration):
        it.next()


def test_helpers_build_a_custom_next(png_folder):
    it = image.ImageIter(1, (3, 8, 8), imglist=_items(), path_root=str(png_folder), aug_list=[])
    label, encoded = it.next_sample()
    data = it.imdecode(encoded)
    it.check_valid_image(data)
    row = it.postprocess_data(it.augmentation_transform(data))
    assert label.tolist() == [0.0] and row.shape == (3, 8, 8)
    np.testing.assert_array_equal(row.asnumpy(), _rgb(png_folder, 0).transpose(2, 0, 1))


def test_next_sample_ends_with_stop_iteration(png_folder):
    it = image.ImageIter(1, (3, 8, 8), imglist=_items(), path_root=str(png_folder), aug_list=[])
    samples = 0
    with pytest.raises(StopIteration):
        for _ in range(6):  # five examples, then the end
            it.next_sample()
            samples += 1
    assert samples == 5


def test_an_image_check_valid_image_refuses_is_skipped(png_folder):
    class FirstIsBad(image.ImageIter):
        def check_valid_image(self, data):
            if not self.refused:
                self.refused = True
                raise RuntimeError("not this one")

    FirstIsBad.refused = False
    it = FirstIsBad(2, (3, 8, 8), imglist=_items(), path_root=str(png_folder), aug_list=[])
    with pytest.warns(UserWarning, match="skipping file .*img0.png.*not this one"):
        batch = it.next()
    assert batch.label[0].asnumpy().tolist() == [1.0, 2.0]


def test_check_data_shape_is_asked_by_the_constructor(png_folder):
    class OnlyColour(image.ImageIter):
        def check_data_shape(self, data_shape):
            if data_shape[0] != 3:
                raise ValueError("This iterator expects inputs to have 3 channels.")

    with pytest.raises(ValueError, match="3 channels"):
        OnlyColour(1, (1, 8, 8), imglist=_items(), path_root=str(png_folder), aug_list=[])


def test_postprocess_data_of_the_wrong_shape_is_named(png_folder):
    class Flat(image.ImageIter):
        def postprocess_data(self, datum):
            return datum.reshape((-1,))

    it = Flat(2, (3, 8, 8), imglist=_items(), path_root=str(png_folder), aug_list=[])
    with pytest.raises(mx.ShapeError, match=r"Flat.postprocess_data: gave images of shapes \[\(192,\)\]"):
        it.next()
