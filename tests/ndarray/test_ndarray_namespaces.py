"""``mx.nd.op``, ``mx.nd.contrib``, ``mx.nd.linalg``, ``mx.nd.image``: operators under MXNet's sub-namespaces."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx


def test_op_namespace_holds_every_operator() -> None:
    np.testing.assert_array_equal(mx.nd.op.relu(mx.nd.array([-1.0, 2.0])).asnumpy(), [0.0, 2.0])
    assert mx.nd.op.FullyConnected is mx.nd.FullyConnected


def test_a_namespace_name_resolves_through_its_prefix() -> None:
    from lazynd.ops import registry

    registered = [n for n in registry.all_names() if n.startswith("linalg_")]
    if not registered:
        pytest.skip("no linalg_ operator registered")
    short = registered[0][len("linalg_") :]
    assert short in dir(mx.nd.linalg)
    assert callable(getattr(mx.nd.linalg, short))


@pytest.mark.parametrize(
    ("namespace", "operator"), [("contrib", "_contrib_no_such_op"), ("image", "_image_no_such_op")]
)
def test_an_unregistered_operator_is_named(namespace: str, operator: str) -> None:
    with pytest.raises(mx.LazyNDError, match=rf"mx\.nd\.{namespace}\.no_such_op: .*{operator}"):
        _ = getattr(mx.nd, namespace).no_such_op
