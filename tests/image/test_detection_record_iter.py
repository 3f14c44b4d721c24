"""mx.io.ImageDetRecordIter: MXNet's C++ detection iterator's batches, from ImageDetIter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import lazynd as mx

# MXNet 1.9.1's first batch for the standard records, data_shape (3, 24, 40), batch_size 2:
# [C, H, W, label length, the record's label..., -1 padding up to the longest label (17)]
FIRST_LABELS = [
    [3, 24, 40, 7, 2, 5, 0, 0.1, 0.2, 0.5, 0.8] + [-1] * 10,
    [3, 24, 40, 12, 2, 5, 0, 0.1, 0.2, 0.5, 0.8, 1, 0.2, 0.2, 0.6, 0.8] + [-1] * 5,
]


def test_labels_are_prefixed_and_padded_as_mxnet(standard_det_rec: str) -> None:
    it = mx.io.ImageDetRecordIter(path_imgrec=standard_det_rec, data_shape=(3, 24, 40), batch_size=2)
    assert it.provide_label[0].name == "softmax_label" and it.provide_label[0].shape == (2, 21)
    assert it.provide_label[0].layout == "NCHW"  # MXNet 1.9.1's, as for all its C++ iterators
    batch = it.next()
    np.testing.assert_allclose(batch.label[0].asnumpy(), FIRST_LABELS, atol=1e-6)
    assert batch.data[0].shape == (2, 3, 24, 40)
    assert [b.pad for b in it] == [0, 1]


def test_label_pad_width_and_value(standard_det_rec: str) -> None:
    it = mx.io.ImageDetRecordIter(
        path_imgrec=standard_det_rec, data_shape=(3, 24, 40), batch_size=2, label_pad_width=25, label_pad_value=-2
    )
    label = it.next().label[0].asnumpy()
    assert label.shape == (2, 29)
    np.testing.assert_allclose(label[0, 11:], -2)


def test_mean_std_scale_normalise_as_mxnet(standard_det_rec: str) -> None:
    shape = dict(path_imgrec=standard_det_rec, data_shape=(3, 24, 40), batch_size=2)
    raw = mx.io.ImageDetRecordIter(**shape).next().data[0].asnumpy()
    scaled = (
        mx.io.ImageDetRecordIter(**shape, mean_r=10, mean_g=20, mean_b=30, std_r=2, std_g=4, std_b=5, scale=0.5)
        .next()
        .data[0]
        .asnumpy()
    )
    mean, std = np.array([10, 20, 30.0]).reshape(1, 3, 1, 1), np.array([2, 4, 5.0]).reshape(1, 3, 1, 1)
    np.testing.assert_allclose(scaled, (raw - mean) / std * 0.5, rtol=1e-6, atol=1e-5)
    # std_* of 0 (MXNet's default) divides by nothing
    meaned = mx.io.ImageDetRecordIter(**shape, mean_r=10, scale=2).next().data[0].asnumpy()
    np.testing.assert_allclose(meaned[:, 0], (raw[:, 0] - 10) * 2, atol=1e-5)


def test_mirror_prob_one_flips_the_boxes_inside_the_flat_label(standard_det_rec: str) -> None:
    it = mx.io.ImageDetRecordIter(
        path_imgrec=standard_det_rec, data_shape=(3, 24, 40), batch_size=2, rand_mirror_prob=1.0
    )
    np.testing.assert_allclose(it.next().label[0].asnumpy()[0, 6:11], [0, 0.5, 0.2, 0.9, 0.8], atol=1e-6)


def test_random_crops_keep_the_layout_and_the_unit_square(standard_det_rec: str) -> None:
    it = mx.io.ImageDetRecordIter(
        path_imgrec=standard_det_rec,
        data_shape=(3, 24, 40),
        batch_size=5,
        rand_crop_prob=1.0,
        min_crop_scales=(0.3,),
        max_crop_aspect_ratios=(2.0,),
        min_crop_aspect_ratios=(0.5,),
        seed=3,
    )
    for row in it.next().label[0].asnumpy():
        length = int(row[3])
        objects = row[6 : 4 + length].reshape(-1, 5)
        assert (row[4 + length :] == -1).all() and len(objects) >= 1
        assert objects[:, 1:].min() >= 0 and objects[:, 1:].max() <= 1


def test_label_width_must_match_every_record(standard_det_rec: str) -> None:
    with pytest.raises(mx.LazyNDError, match=r"record #0 of .*det\.rec has a label of 7 values, label_width is 17"):
        mx.io.ImageDetRecordIter(path_imgrec=standard_det_rec, data_shape=(3, 24, 40), batch_size=2, label_width=17)


def test_label_pad_width_shorter_than_a_label_is_refused(standard_det_rec: str) -> None:
    with pytest.raises(mx.LazyNDError, match=r"label_pad_width 10 is shorter than the longest label .*\(17 values\)"):
        mx.io.ImageDetRecordIter(path_imgrec=standard_det_rec, data_shape=(3, 24, 40), batch_size=2, label_pad_width=10)


@pytest.mark.parametrize(
    ("name", "value", "acting"),
    [
        ("rand_pad_prob", 0.5, {}),
        ("crop_emit_mode", "overlap", {"rand_crop_prob": 1.0}),
        ("min_crop_overlaps", 0.3, {"rand_crop": True}),
    ],
)
def test_unsupported_arguments_are_refused_by_name(
    standard_det_rec: str, name: str, value: object, acting: dict
) -> None:
    with pytest.raises(mx.LazyNDError, match=rf"ImageDetRecordIter: {name}={value!r} is not supported"):
        mx.io.ImageDetRecordIter(
            path_imgrec=standard_det_rec, data_shape=(3, 24, 40), batch_size=2, **acting, **{name: value}
        )


def test_arguments_that_act_through_a_zero_probability_change_nothing(standard_det_rec: str) -> None:
    # mxnet-ssd's validation settings: ranges for augmentations whose probabilities are all 0, no crop sampler
    quiet = dict(
        max_random_hue=18,
        random_hue_prob=0.0,
        max_random_saturation=32,
        max_random_contrast=0.5,
        max_pad_scale=4.0,
        fill_value=0,
        min_crop_overlaps=[0.1, 0.3],
        crop_emit_mode="overlap",
        num_crop_sampler=0,
        rand_crop_prob=1.0,
    )
    shape = dict(path_imgrec=standard_det_rec, data_shape=(3, 24, 40), batch_size=2)
    plain, quieted = mx.io.ImageDetRecordIter(**shape).next(), mx.io.ImageDetRecordIter(**shape, **quiet).next()
    np.testing.assert_array_equal(quieted.data[0].asnumpy(), plain.data[0].asnumpy())
    np.testing.assert_array_equal(quieted.label[0].asnumpy(), plain.label[0].asnumpy())


def test_default_valued_and_performance_arguments_are_accepted(standard_det_rec: str) -> None:
    it = mx.io.ImageDetRecordIter(
        path_imgrec=standard_det_rec,
        data_shape=(3, 24, 40),
        batch_size=2,
        rand_pad_prob=0,
        crop_emit_mode="center",
        preprocess_threads=8,
        prefetch_buffer=2,
    )
    assert it.next().label[0].shape == (2, 21)


def test_iter_next_and_getters_step_through_batches_as_mxnet(standard_det_rec: str) -> None:
    batch = mx.io.ImageDetRecordIter(path_imgrec=standard_det_rec, data_shape=(3, 24, 40), batch_size=2).next()
    it = mx.io.ImageDetRecordIter(path_imgrec=standard_det_rec, data_shape=(3, 24, 40), batch_size=2)
    assert it.iter_next()
    np.testing.assert_array_equal(it.getdata().asnumpy(), batch.data[0].asnumpy())
    np.testing.assert_array_equal(it.getlabel().asnumpy(), batch.label[0].asnumpy())
    assert it.getpad() == batch.pad


def test_shuffle_needs_no_index_file(standard_det_rec: str) -> None:
    # as MXNet's C++ iterator: a .rec file without its .idx is shuffled all the same
    Path(standard_det_rec).with_suffix(".idx").unlink()
    it = mx.io.ImageDetRecordIter(
        path_imgrec=standard_det_rec, data_shape=(3, 24, 40), batch_size=2, shuffle=True, round_batch=False
    )
    lengths = [int(row[3]) for batch in it for row in batch.label[0].asnumpy()[: 2 - batch.pad]]
    assert sorted(lengths) == [7, 7, 12, 12, 17]  # each record once: 1, 2, 3, 1, 2 objects
