"""``mx.runtime.Features``: MXNet 1.x's capability list, answered for this installation."""

from __future__ import annotations

import importlib.util

import pytest

import lazynd as mx

# MXNet 1.9.1's names, in its order (mx.runtime.Features().keys())
MXNET_NAMES = [
    "CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3", "CPU_SSE4_1",
    "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE", "F16C", "JEMALLOC", "BLAS_OPEN",
    "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK", "MKLDNN", "OPENCV", "CAFFE", "PROFILER",
    "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE", "SIGNAL_HANDLER", "DEBUG", "TVM_OP",
]  # fmt: skip


def test_features_have_mxnets_names_in_its_order_and_its_printed_form() -> None:
    features = mx.runtime.Features()
    assert list(features) == MXNET_NAMES
    assert [f.name for f in mx.runtime.feature_list()] == MXNET_NAMES
    assert repr(features["PROFILER"]) == "✔ PROFILER" and repr(features["CUDNN"]) == "✖ CUDNN"
    assert repr(features).startswith("[")


def test_features_answer_for_this_installation() -> None:
    features = mx.runtime.Features()
    assert features.is_enabled("CUDA") == (mx.num_gpus() > 0)
    assert features.is_enabled("cuda") == features.is_enabled("CUDA")  # any case
    assert features.is_enabled("OPENCV") == (importlib.util.find_spec("cv2") is not None)
    assert features.is_enabled("DIST_KVSTORE") == (importlib.util.find_spec("mpi4py") is not None)
    assert features.is_enabled("LAPACK") and features.is_enabled("PROFILER")
    assert not features.is_enabled("MKLDNN") and not features.is_enabled("TENSORRT")


def test_an_unknown_feature_is_refused_by_name() -> None:
    with pytest.raises(mx.LazyNDError, match="feature 'WARP_DRIVE' is unknown"):
        mx.runtime.Features().is_enabled("WARP_DRIVE")
