"""Flags and named choices of the public API given an array of several elements (which has no
truth value and compares elementwise) are refused by name as a :class:`lazynd.LazyNDError`,
never NumPy's "truth value of an array ... is ambiguous"; the values MXNet takes still work."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest

import lazynd as mx
from lazynd.arguments import flag, given, is_choice
from lazynd.errors import ArgumentTypeError

ARRAY = np.ones(2)
TMP = tempfile.mkdtemp()


def _module():
    return mx.mod.Module(
        mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var("a"), num_hidden=4, name="fc"), name="sm"),
        data_names=["a"],
        label_names=["sm_label"],
    )


def _bound():
    module = _module()
    module.bind(data_shapes=[("a", (2, 3))], label_shapes=[("sm_label", (2,))])
    module.init_params()
    return module


# (the call given the array, the argument its message must name)
CALLS = {
    # flags
    "astype copy": (lambda v: mx.nd.ones((2, 3)).astype("float64", copy=v), "copy"),
    "list_attr recursive": (lambda v: mx.sym.var("a").list_attr(recursive=v), "recursive"),
    "NDArrayIter shuffle": (lambda v: mx.io.NDArrayIter(np.ones((4, 2)), shuffle=v), "shuffle"),
    "SGD multi_precision": (lambda v: mx.optimizer.SGD(multi_precision=v), "multi_precision"),
    "bind for_training": (
        lambda v: _module().bind(data_shapes=[("a", (2, 3))], label_shapes=[("sm_label", (2,))], for_training=v),
        "for_training",
    ),
    "set_params allow_missing": (lambda v: _bound().set_params({}, {}, allow_missing=v), "allow_missing"),
    "init_params allow_missing": (lambda v: _bound().init_params(allow_missing=v), "allow_missing"),
    "init_params force_init": (lambda v: _bound().init_params(force_init=v), "force_init"),
    "BucketingModule init_params force_init": (
        lambda v: mx.mod.BucketingModule(lambda key: (_module().symbol, ["a"], ["sm_label"]), 1).init_params(
            force_init=v
        ),
        "force_init",
    ),
    "SequentialModule init_params force_init": (
        lambda v: mx.mod.SequentialModule().add(_module()).init_params(force_init=v),
        "force_init",
    ),
    "record train_mode": (lambda v: mx.autograd.record(v), "train_mode"),
    "set_recording": (lambda v: mx.autograd.set_recording(v), "is_recording"),
    "set_training": (lambda v: mx.autograd.set_training(v), "train_mode"),
    "profiler.dumps reset": (lambda v: mx.profiler.dumps(v), "reset"),
    "profiler.dump finished": (lambda v: mx.profiler.dump(v), "finished"),
    "CreateAugmenter rand_crop": (lambda v: mx.image.CreateAugmenter((3, 8, 8), rand_crop=v), "rand_crop"),
    # choices
    "attach_grad grad_req": (lambda v: mx.nd.ones(2).attach_grad(grad_req=v), "grad_req"),
    "attach_grad stype": (lambda v: mx.nd.ones(2).attach_grad(stype=v), "storage type"),
    "tostype": (lambda v: mx.nd.ones(2).tostype(v), "storage type"),
    "var stype": (lambda v: mx.sym.var("v", stype=v), "storage type"),
    "NDArrayIter last_batch_handle": (
        lambda v: mx.io.NDArrayIter(np.ones((4, 2)), batch_size=3, last_batch_handle=v),
        "last_batch_handle",
    ),
    "Xavier rnd_type": (lambda v: mx.init.Xavier(rnd_type=v), "rnd_type"),
    "Xavier factor_type": (lambda v: mx.init.Xavier(factor_type=v), "factor_type"),
    "MSRAPrelu factor_type": (lambda v: mx.init.MSRAPrelu(factor_type=v), "factor_type"),
    "Orthogonal rand_type": (lambda v: mx.init.Orthogonal(rand_type=v), "rand_type"),
    "FactorScheduler warmup_mode": (lambda v: mx.lr_scheduler.FactorScheduler(2, warmup_mode=v), "warmup_mode"),
    "F1 average": (lambda v: mx.metric.create("f1", average=v), "average"),
    "profiler.set_config mode": (lambda v: mx.profiler.set_config(v), "mode"),
    "profiler.set_state state": (lambda v: mx.profiler.set_state(v), "state"),
    "profiler.pause profile_process": (lambda v: mx.profiler.pause(v), "profile_process"),
    "MXRecordIO flag": (lambda v: mx.recordio.MXRecordIO(os.path.join(TMP, "q.rec"), v), "flag"),
    "imresize interp": (
        lambda v: mx.image.imresize(mx.nd.zeros((8, 8, 3), dtype="uint8"), 4, 4, interp=v),
        "interp",
    ),
    # optional paths and lists: given, and refused by their reader
    "ImageRecordIter path_imgrec": (
        lambda v: mx.io.ImageRecordIter(path_imgrec=v, data_shape=(3, 8, 8), batch_size=2),
        "file name",
    ),
    "ImageIter imglist": (lambda v: mx.image.ImageIter(2, (3, 8, 8), imglist=v), "imglist"),
    "ImageIter path_imglist": (lambda v: mx.image.ImageIter(2, (3, 8, 8), path_imglist=v), "file name"),
}


@pytest.mark.parametrize("case", list(CALLS))
def test_an_array_where_a_flag_or_choice_goes_is_refused_by_name(case):
    call, argument = CALLS[case]
    with pytest.raises(mx.LazyNDError, match=argument):
        call(ARRAY)
    assert not mx.autograd.is_recording() and not mx.autograd.is_training()


@pytest.mark.parametrize("value", [1, "yes", [0], np.float64(2.0), np.ones(1), mx.nd.ones(1)])
def test_a_flag_is_read_by_its_truth_as_mxnet_reads_it(value):
    assert flag("f", "v", value) is True
    assert flag("f", "v", 0) is False


@pytest.mark.parametrize("value", [np.ones(2), np.ones((2, 2)), mx.nd.ones(3)])
def test_a_flag_without_a_truth_value_names_its_owner_argument_and_type(value):
    with pytest.raises(ArgumentTypeError, match=r"^NDArrayIter: shuffle must be a bool, got .*NDArray|numpy.ndarray"):
        flag("NDArrayIter", "shuffle", value)


def test_a_choice_is_matched_as_a_scalar_and_an_array_or_unhashable_is_none():
    assert is_choice("pad", ("pad", "discard")) and is_choice(np.str_("pad"), ["pad"]) and is_choice(2, (0, 1, 2))
    assert not is_choice(np.ones(2), ("pad",)) and not is_choice(mx.nd.ones(2), (1,)) and not is_choice([2], {"a"})


def test_an_optional_argument_is_given_by_its_truth_and_an_array_is_given():
    assert not given(None) and not given("") and not given([]) and given("a.rec") and given(np.ones(2))


def test_truthy_flags_mxnet_accepts_still_work():
    it = mx.io.NDArrayIter(np.ones((4, 2)), batch_size=2, shuffle=1)
    assert len(list(it)) == 2 and it.shuffle == 1
    assert mx.optimizer.SGD(multi_precision=1).multi_precision is True
    assert mx.nd.ones(2).astype("float32", copy=0).shape == (2,)
    with mx.autograd.record(1):
        assert mx.autograd.is_training()
