"""``mx.base.data_dir`` and ``mx.util.getenv``/``setenv``, the MXNet 1.x names programs import."""

from __future__ import annotations

import os

import lazynd as mx
from lazynd.test_utils import environment


def test_data_dir_is_mxnet_home_when_set() -> None:
    with environment("MXNET_HOME", "/tmp/mxnet_data"):
        assert mx.base.data_dir() == "/tmp/mxnet_data"


def test_data_dir_defaults_to_dot_mxnet_under_home() -> None:
    with environment("MXNET_HOME", None):
        assert mx.base.data_dir() == os.path.join(os.path.expanduser("~"), ".mxnet")
        assert mx.base.data_dir() == mx.base.data_dir_default()


def test_util_getenv_sees_what_setenv_and_environment_set() -> None:
    name = "LAZYND_TEST_UTIL_ENV"
    with environment(name, "42"):
        assert mx.util.getenv(name) == "42"
    assert mx.util.getenv(name) is None
    mx.util.setenv(name, "7")
    try:
        assert os.environ[name] == "7" and mx.util.getenv(name) == "7"
    finally:
        mx.util.setenv(name, None)
    assert name not in os.environ


def test_mxnet_util_is_importable_by_module_name() -> None:
    import lazynd.util

    assert lazynd.util.getenv is mx.util.getenv
