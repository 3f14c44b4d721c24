"""NDArray's public surface for the other packages: ``data_array``, ``var``, ``context``.

The KVStore, the symbolic side, io and image build engine operations from these
read-only properties; only ``lazynd/ndarray/`` touches the private attributes.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import lazynd as mx

ROOT = Path(__file__).resolve().parents[2]
PRIVATE = ("_data", "_var", "_ctx")


def test_data_array_var_and_context_are_the_arrays_backend_array_var_and_device() -> None:
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    x.wait_to_read()
    assert isinstance(x.data_array, np.ndarray)
    np.testing.assert_array_equal(x.data_array, [[1.0, 2.0], [3.0, 4.0]])
    assert x.context == mx.cpu()
    assert x.handle is x.var


def test_a_view_shares_its_parents_var_and_buffer() -> None:
    x = mx.nd.zeros((4, 3))
    view = x[1:3]
    assert view.var is x.var
    assert np.shares_memory(view.data_array, x.data_array)


@pytest.mark.parametrize("name", ["data_array", "var", "handle", "context", "ctx"])
def test_the_public_properties_are_read_only(name: str) -> None:
    x = mx.nd.ones((2,))
    with pytest.raises(AttributeError):
        setattr(x, name, None)


def _private_reads(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and node.attr in PRIVATE:
            if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} .{node.attr}")
    return found


def test_no_module_outside_the_ndarray_package_reads_its_private_attributes() -> None:
    found = []
    for package in ("lazynd", "lazynd_sym", "lazynd_kv"):
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith("lazynd/ndarray/"):
                continue
            found += _private_reads(path)
    assert found == []


def test_ndarray_has_no_class_getattr_and_every_constructor_sets_every_slot() -> None:
    # a class __getattr__ sends every attribute read of every array down the interpreter's slow
    # path; without one, an unset slot would raise: so each way of making an array sets them all
    from lazynd.ndarray.ndarray import NDArray

    assert "__getattr__" not in vars(NDArray)
    x = mx.nd.array([[1.0, -2.0], [3.0, 4.0]])
    y = mx.nd.ones((2, 2))
    made = [x, x[0:1], x.detach(), x.reshape((4,)), x + y, mx.nd.relu(x), mx.nd.sgd_update(x, y, lr=0.1), x.copy()]
    made += mx.nd.split(x, num_outputs=2, axis=0)
    for array in made:
        for slot in NDArray.__slots__:
            if slot != "__weakref__":
                getattr(array, slot)  # raises AttributeError if a constructor left it unset
        assert array._ag is None


def test_public_operators_are_ndarray_methods() -> None:
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(x.sum(axis=1).asnumpy(), [3.0, 7.0])
    np.testing.assert_allclose(x.exp().asnumpy(), np.exp([[1.0, 2.0], [3.0, 4.0]]), rtol=1e-6)
    with pytest.raises(AttributeError, match="no attribute 'no_such_operator'"):
        x.no_such_operator  # noqa: B018
