"""``mx.registry``: register, alias and create the subclasses of a base class, as MXNet 1.9.1's does."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ArgumentTypeError, ArgumentValueError


class _Augmenter:
    def __init__(self, p: float = 0.5, q: int = 1) -> None:
        self.p, self.q = p, q


def _factory() -> tuple:
    base = type("Augmenter", (_Augmenter,), {})  # a fresh base class: a registry of its own per test
    return (
        base,
        mx.registry.get_register_func(base, "augmenter"),
        mx.registry.get_alias_func(base, "augmenter"),
        mx.registry.get_create_func(base, "augmenter"),
    )


def test_programs_import_it_from_mxnets_module_path() -> None:
    from lazynd.registry import get_create_func

    assert mx.registry.get_create_func is get_create_func


def test_classes_are_registered_by_lower_case_name_and_by_alias() -> None:
    base, register, alias, _ = _factory()

    @register
    class Flip(base):
        pass

    @alias("crop", "RandCrop")
    class Crop(base):
        pass

    register(Crop, "CenterCrop")
    assert sorted(mx.registry.get_registry(base)) == ["centercrop", "crop", "flip", "randcrop"]
    mx.registry.get_registry(base).clear()  # a copy
    assert len(mx.registry.get_registry(base)) == 4


def test_create_takes_a_name_a_keyword_json_a_dict_or_an_instance() -> None:
    base, register, _, create = _factory()
    flip = register(type("Flip", (base,), {}))
    made = create("FLIP", 0.2, q=3)
    assert isinstance(made, flip) and (made.p, made.q) == (0.2, 3)
    assert create(augmenter="flip", p=0.3).p == 0.3
    assert create('["flip", {"p": 0.4}]').p == 0.4
    assert create('{"augmenter": "flip", "q": 7}').q == 7
    assert create({"augmenter": "flip", "p": 0.9}).p == 0.9
    assert create(made) is made


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda c, b: c("nope"), ArgumentValueError, r"no augmenter is registered as 'nope'; registered: \['flip'\]"),
        (lambda c, b: c(b(), p=1), ArgumentValueError, "already an instance"),
        (lambda c, b: c(3), ArgumentTypeError, "must be a name, a dict or JSON text, got 3"),
        (lambda c, b: c("[oops"), ArgumentValueError, "is not valid JSON"),
        (lambda c, b: c(), ArgumentTypeError, "give the augmenter to create"),
    ],
    ids=["unknown", "instance-with-arguments", "not-a-name", "bad-json", "nothing"],
)
def test_create_refuses_by_name_what_it_cannot_create(call, error, message) -> None:
    # MXNet 1.9.1 fails an assert in each case
    base, register, _, create = _factory()
    register(type("Flip", (base,), {}))
    with pytest.raises(error, match=message):
        call(create, base)


def test_register_refuses_a_class_outside_the_base_and_warns_when_a_name_changes_hands() -> None:
    base, register, _, create = _factory()
    with pytest.raises(ArgumentTypeError, match="only subclasses of Augmenter are registered as 'augmenter'"):
        register(int)
    crop = register(type("Crop", (base,), {}))
    flip = type("Flip", (base,), {})
    with pytest.warns(UserWarning, match="Flip replaces .*Crop under the name 'crop'"):
        register(flip, "crop")
    assert type(create("crop")) is flip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        register(crop, "crop2")
        register(crop, "crop2")  # the same class again: no warning


def test_an_initializer_registered_here_is_created_by_mx_init_create() -> None:
    # MXNet's initializers and metrics are registered through mx.registry; lazynd's registries are the same
    @mx.registry.get_register_func(mx.init.Initializer, "initializer")
    class FortyTwo(mx.init.Initializer):
        def _init_weight(self, name, arr):
            arr[:] = 42

    weight = mx.nd.zeros((2,))
    mx.init.create("fortytwo")(mx.init.InitDesc("w_weight"), weight)
    np.testing.assert_array_equal(weight.asnumpy(), [42, 42])
    assert "xavier" in mx.registry.get_registry(mx.init.Initializer)
    assert type(mx.registry.get_create_func(mx.metric.EvalMetric, "metric")("acc")).__name__ == "Accuracy"


def test_create_names_an_argument_the_class_does_not_take() -> None:
    base, register, _, create = _factory()
    register(type("Flip", (base,), {"__init__": lambda self, p=0.5: None}))
    with pytest.raises(TypeError, match=r"create: 'flip' cannot take \['bogus'\]"):
        create("flip", bogus=1)
