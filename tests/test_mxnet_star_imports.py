"""What ``from mxnet.X import *`` hands on in MXNet 1.x, which its own test files lean on, star imports of
lazynd's modules hand on too."""

from __future__ import annotations

import numpy as np

import lazynd


def _star(module: str) -> dict:
    namespace: dict = {}
    exec(f"from {module} import *", namespace)  # noqa: S102 - the statement under test
    return namespace


def test_test_utils_star_import_hands_on_mx_np_os_and_sys() -> None:
    namespace = _star("lazynd.test_utils")
    assert namespace["mx"] is lazynd and namespace["np"] is np
    assert namespace["os"].path.join("a", "b") == "a/b" and namespace["sys"].maxsize > 0
    assert namespace["mx"].nd.ones((2,)).asnumpy().tolist() == [1.0, 1.0]


def test_test_utils_star_import_hands_on_array_and_contexts() -> None:
    namespace = _star("lazynd.test_utils")
    made = namespace["array"](np.ones(2), ctx=namespace["current_context"](), dtype=np.float16)
    assert made.dtype == np.float16 and made.context == namespace["Context"]("cpu", 0)


def test_autograd_star_import_hands_on_ndarray() -> None:
    namespace = _star("lazynd.autograd")
    assert namespace["NDArray"] is lazynd.NDArray
    assert isinstance(lazynd.nd.zeros((1,)), namespace["NDArray"])
