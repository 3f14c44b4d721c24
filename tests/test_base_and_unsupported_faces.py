"""``mx.base`` (names programs import from ``mxnet.base``), ``mx.executor``, and MXNet faces lazynd lacks."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx


def test_base_errors_are_lazynds() -> None:
    # MXNet 1.9.1: mx.MXNetError is mx.base.MXNetError; NotImplementedForSymbol derives from it
    assert mx.base.MXNetError is mx.MXNetError is mx.LazyNDError
    assert issubclass(mx.base.NotImplementedForSymbol, mx.base.MXNetError)


def test_lazynds_errors_are_runtime_errors_as_mxnets() -> None:
    # MXNet 1.9.1's MXNetError is a RuntimeError: programs catch its errors by that name
    with pytest.raises(RuntimeError):
        (mx.nd.ones((2,)) + mx.nd.ones((3,))).asnumpy()
    with pytest.raises(RuntimeError):
        mx.nd.load("/nonexistent/lazynd/file")
    assert issubclass(mx.ShapeError, ValueError) and issubclass(mx.ShapeError, RuntimeError)


def test_base_type_tuples_match_mxnets() -> None:
    assert mx.base.string_types == (str,)
    assert mx.base.mx_real_t is np.float32
    assert all(isinstance(v, mx.base.numeric_types) for v in (1, 2.5, np.float32(1), np.int64(3)))
    assert all(isinstance(v, mx.base.integer_types) for v in (1, np.int32(1), np.int64(3)))
    assert not isinstance(2.5, mx.base.integer_types)
    assert mx.base.py_str(b"ab") == "ab" and mx.base.py_str("ab") == "ab"


def test_null_parameter_takes_the_operators_default() -> None:
    # face-recognition symbol files import it (``from mxnet.base import _Null``) and pass it as "not given"
    from lazynd.base import _Null

    pooled = mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), kernel=(2, 2), stride=_Null, pool_type="max")
    assert pooled.shape == (1, 1, 3, 3)  # stride (1, 1), the default
    conv = mx.sym.Convolution(mx.sym.var("d"), num_filter=2, kernel=(3, 3), stride=_Null, name="c")
    assert conv.attr_dict()["c"] == {"num_filter": "2", "kernel": "(3, 3)"}
    assert conv.infer_shape(d=(1, 1, 5, 5))[1] == [(1, 2, 3, 3)]
    assert repr(_Null) == "_Null"


def test_symbol_ndarray_only_methods_raise_not_implemented_for_symbol() -> None:
    with pytest.raises(mx.base.NotImplementedForSymbol):
        mx.sym.var("x").wait_to_read()


def test_executor_module_holds_the_executor() -> None:
    executor = mx.sym.var("x").simple_bind(mx.cpu(), x=(2,))
    assert isinstance(executor, mx.executor.Executor)


@pytest.mark.parametrize("face", ["gluon", "np", "npx", "notebook"])
def test_a_face_lazynd_lacks_is_named(face: str) -> None:
    with pytest.raises(mx.LazyNDError, match=rf"mx\.{face}: .*not part of lazynd"):
        getattr(mx, face)


@pytest.mark.parametrize(
    ("namespace", "name"),
    [("", "gluon"), ("", "np"), ("nd.sparse", "csr_matrix"), ("nd.contrib", "no_such_operator"), ("io", "LibSVMIter")],
)
def test_feature_checks_on_a_missing_face_answer_false(namespace: str, name: str) -> None:
    # programs probe with hasattr (hasattr(mx, 'gluon')): the refusal is also an AttributeError
    owner = mx
    for part in filter(None, namespace.split(".")):
        owner = getattr(owner, part)
    assert not hasattr(owner, name)
    with pytest.raises(mx.UnsupportedError) as caught:
        getattr(owner, name)
    assert isinstance(caught.value, mx.LazyNDError) and name in str(caught.value)


def test_libinfo_says_there_is_no_native_library() -> None:
    # MXNet's diagnose.py, copied into user programs (gregbugaj/mxnet-matchbox), prints find_lib_path()
    with pytest.raises(mx.UnsupportedError, match=r"mx\.libinfo: .*pure Python.*mx\.runtime\.Features\(\)"):
        mx.libinfo.find_lib_path()
    with pytest.raises(mx.LazyNDError, match="pure Python"):
        import lazynd.libinfo  # noqa: F401


def test_importing_gluon_names_it() -> None:
    with pytest.raises(mx.LazyNDError, match="Gluon"):
        from lazynd import gluon  # noqa: F401


def test_star_import_of_contrib_quantization_names_it() -> None:
    # SPOS' MicroNetChallenge/inference.py starts with `from mxnet.contrib.quantization import *`
    with pytest.raises(mx.UnsupportedError, match=r"mx\.contrib\.quantization: quantization .*not part of lazynd"):
        exec("from lazynd.contrib.quantization import *", {})


def test_contrib_quantization_attribute_is_refused_and_probes_false() -> None:
    assert not hasattr(mx.contrib, "quantization")
    with pytest.raises(mx.LazyNDError, match=r"mx\.contrib\.quantization"):
        mx.contrib.quantization  # noqa: B018


def test_an_unknown_contrib_submodule_is_still_not_found() -> None:
    with pytest.raises(ModuleNotFoundError):
        import lazynd.contrib.no_such_face  # noqa: F401


def test_base_as_list_wraps_one_value_and_keeps_sequences() -> None:
    # MXNet 1.9.1: lists and tuples come back as they are, anything else in a list of one
    from lazynd.base import _as_list

    pair = (1, 2)
    assert _as_list(pair) is pair and _as_list([1]) == [1]
    assert _as_list(3) == [3] and _as_list(None) == [None]


def test_contrib_onnx_is_refused_by_name() -> None:
    # sagemaker's ONNX scripts import it: a clear refusal, not a bare ModuleNotFoundError
    assert not hasattr(mx.contrib, "onnx")
    with pytest.raises(mx.UnsupportedError, match=r"mx\.contrib\.onnx: ONNX export and import .*not part of lazynd"):
        exec("from lazynd.contrib import onnx", {})
    with pytest.raises(mx.UnsupportedError, match=r"mx\.contrib\.onnx"):
        exec("import lazynd.contrib.onnx", {})


def test_sym_sparse_names_are_refused_pointing_at_the_dense_operator() -> None:
    # MXNet's linear-classification example builds mx.sym.sparse.dot(csr_data, row_sparse_weight)
    with pytest.raises(mx.UnsupportedError, match=r"mx\.sym\.sparse\.dot: sparse storage .* use mx\.sym\.dot"):
        mx.sym.sparse.dot(mx.sym.var("a"), mx.sym.var("b"))
    with pytest.raises(mx.UnsupportedError, match=r"mx\.nd\.sparse\.dot: .* use mx\.nd\.dot, its dense form"):
        mx.nd.sparse.dot(mx.nd.ones((1, 1)), mx.nd.ones((1, 1)))
    with pytest.raises(mx.UnsupportedError, match=r"mx\.nd\.sparse\.retain: .* use dense nd operators"):
        mx.nd.sparse.retain(mx.nd.ones((2, 2)), mx.nd.array([0]))
    assert not hasattr(mx.sym.sparse, "dot")


def test_a_dense_array_is_not_a_sparse_one_and_no_sparse_array_can_be_made() -> None:
    # an updater written for MXNet asks isinstance(grad, RowSparseNDArray) before a lazy update
    dense = mx.nd.ones((2, 2))
    assert not isinstance(dense, (mx.nd.sparse.RowSparseNDArray, mx.nd.sparse.CSRNDArray))
    assert issubclass(mx.nd.sparse.CSRNDArray, mx.nd.sparse.BaseSparseNDArray)
    with pytest.raises(mx.UnsupportedError, match=r"mx\.nd\.sparse\.CSRNDArray: csr storage is not supported"):
        mx.nd.sparse.CSRNDArray(dense)


def test_importing_the_notebook_callbacks_is_refused_by_name() -> None:
    # MXNet's matrix-factorisation demo: import mxnet.notebook.callback (live learning curves in Jupyter)
    with pytest.raises(mx.UnsupportedError, match=r"mx\.notebook: .*not part of lazynd"):
        import lazynd.notebook.callback  # noqa: F401


def test_names_mxnet_hands_on_through_other_modules_are_there() -> None:
    # MXNet 1.9.1's callback module hands on model.save_checkpoint, and its model module
    # callback.LogValidationMetricsCallback
    assert mx.callback.save_checkpoint is mx.model.save_checkpoint
    assert mx.model.LogValidationMetricsCallback is mx.callback.LogValidationMetricsCallback


@pytest.mark.parametrize(
    ("face", "name", "instead"),
    [
        ("io", "MXDataIter", "mx.io.DataIter"),
        ("io", "LibSVMIter", "NDArrayIter"),
        ("kv", "KVStoreServer", "MPI"),
        ("model", "DataParallelExecutorManager", "mx.mod.Module"),
    ],
)
def test_mxnet_classes_lazynd_lacks_are_refused_by_name(face, name, instead) -> None:
    with pytest.raises(mx.errors.UnsupportedError, match=rf"mx.{face}.{name}: not supported: .*{instead}"):
        getattr(getattr(mx, face), name)
    assert not hasattr(getattr(mx, face), name)  # an AttributeError too
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        getattr(mx, face).no_such_name  # noqa: B018 - the attribute access is the test
