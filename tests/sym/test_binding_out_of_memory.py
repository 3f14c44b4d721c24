"""Binding arrays or planned storage larger than the host can hold raises DeviceMemoryError naming the
call, not NumPy's bare MemoryError.  The sizes (2**62 bytes) exceed any address space, so the
allocation fails at once on every machine, overcommitting or not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import lazynd as mx
from lazynd.errors import DeviceMemoryError

HUGE = (2**30, 2**30)  # float32: 2**62 bytes


def _huge_intermediate() -> Any:
    return mx.sym.broadcast_to(mx.sym.Variable("a"), shape=HUGE) * 2


@pytest.mark.parametrize(
    ("caller", "call"),
    [
        ("simple_bind", lambda: mx.sym.Variable("x").simple_bind(mx.cpu(), x=HUGE)),
        ("simple_bind", lambda: _huge_intermediate().simple_bind(mx.cpu(), a=(1, 1), grad_req="null")),
        ("bind", lambda: _huge_intermediate().bind(mx.cpu(), [mx.nd.ones((1, 1))])),
        (
            "reshape",
            lambda: (mx.sym.Variable("x") * 2).simple_bind(mx.cpu(), x=(2, 3)).reshape(x=HUGE, allow_up_sizing=True),
        ),
    ],
)
def test_binding_more_than_the_host_holds_is_a_device_memory_error(caller: str, call: Callable[[], Any]) -> None:
    with pytest.raises(DeviceMemoryError, match=rf"^{caller}: out of memory on cpu") as caught:
        call()
    assert isinstance(caught.value, MemoryError) and caught.value.ctx == "cpu(0)"
