"""What MXNet 1.x's tests use to set up where they run (``mx.test_utils``): environment variables (for
a block, or ``setenv``/``getenv``), the im2rec script's path, silenced stderr, retries of stochastic
tests, a one-batch iterator, the GPU's compute capability.
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import sys
from collections.abc import Callable, Iterator
from typing import Any

from .context import Context
from .errors import ContextError, LazyNDError, MissingFileError
from .io import DataBatch, DataIter


@contextlib.contextmanager
def environment(*args: Any) -> Iterator[None]:
    """Set environment variables for the ``with`` block and restore them after, even on an error.

    Takes a dict ``{name: value}`` or one ``name, value`` pair; a value of None unsets the variable.
    Pending operations finish before the old values come back (they may read them).

    Examples
    --------
    >>> import os
    >>> from lazynd.test_utils import environment
    >>> with environment("LAZYND_EXAMPLE", "1"):
    ...     os.environ["LAZYND_EXAMPLE"]
    '1'
    >>> "LAZYND_EXAMPLE" in os.environ
    False
    """
    if len(args) == 1 and isinstance(args[0], dict):
        settings = dict(args[0])
    elif len(args) == 2:
        settings = {args[0]: args[1]}
    else:
        raise LazyNDError(f"environment: expected one dict or a name and a value, got {len(args)} arguments")
    for name, value in settings.items():
        if not isinstance(name, str) or not (value is None or isinstance(value, str)):
            raise LazyNDError(f"environment: {name!r} must be a string set to a string or None, got {value!r}")
    saved = {name: os.environ.get(name) for name in settings}
    _set_environ(settings)
    try:
        yield
    finally:
        from .engine import waitall

        waitall()
        _set_environ(saved)


def _set_environ(settings: dict[str, str | None]) -> None:
    for name, value in settings.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def setenv(name: str, value: str | None) -> None:
    """Set the environment variable ``name`` to ``value`` (None unsets it), as MXNet's ``setenv``.

    lazynd reads its settings from :data:`os.environ`, so this is ``os.environ`` with MXNet's name.

    Examples
    --------
    >>> from lazynd.test_utils import getenv, setenv
    >>> setenv("LAZYND_EXAMPLE", "2"); getenv("LAZYND_EXAMPLE")
    '2'
    >>> setenv("LAZYND_EXAMPLE", None); getenv("LAZYND_EXAMPLE") is None
    True
    """
    if not isinstance(name, str) or not (value is None or isinstance(value, str)):
        raise LazyNDError(f"setenv: expected a string name and a string or None value, got {name!r}, {value!r}")
    _set_environ({name: value})


def getenv(name: str) -> str | None:
    """The value of the environment variable ``name``, or None when it is not set (MXNet's ``getenv``)."""
    return os.environ.get(name)


def get_im2rec_path(home_env: str = "MXNET_HOME") -> str:
    """The path of the im2rec script, for ``python <path> ...`` (lazynd's is ``lazynd/tools/im2rec.py``).

    As MXNet's, ``tools/im2rec.py`` or ``../../tools/im2rec.py`` under the folder the environment
    variable ``home_env`` names is looked at first; then lazynd's own script (MXNet looks only under
    the environment's folder when it is set, where ``MXNET_HOME`` is often MXNet's data cache).
    """
    package = os.path.dirname(os.path.abspath(__file__))
    homes = [os.environ[home_env], package] if os.environ.get(home_env) else [package]
    candidates = [os.path.join(home, *up, "tools", "im2rec.py") for home in homes for up in ((), ("..", ".."))]
    for path in candidates:
        if os.path.isfile(path):
            return path
    raise MissingFileError(f"get_im2rec_path: no im2rec.py found, looked for {candidates}")


@contextlib.contextmanager
def discard_stderr() -> Iterator[None]:
    """Send what is written to the process's stderr (file descriptor 2, C libraries included) to the
    null device for the ``with`` block; where stderr has no file descriptor, leave it as it is."""
    try:
        fileno = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # a stream without a descriptor (a capture, a pipe object)
        yield
        return
    sys.stderr.flush()
    saved = os.dup(fileno)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), fileno)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, fileno)
    finally:
        os.close(saved)


def retry(n: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator running a stochastic test up to ``n`` times: it passes on its first success and
    raises the last ``AssertionError`` when every try fails.  Other errors are not retried.

    Examples
    --------
    >>> from lazynd.test_utils import retry
    >>> tries = []
    >>> @retry(3)
    ... def flaky():
    ...     tries.append(1)
    ...     assert len(tries) == 2
    >>> flaky(); len(tries)
    2
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise LazyNDError(f"retry: n must be a positive number of tries, got {n!r}")

    def decorate(test: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(test)
        def run(*args: Any, **kwargs: Any) -> None:
            from .engine import waitall

            for attempt in range(n):
                try:
                    test(*args, **kwargs)
                    return
                except AssertionError:
                    if attempt == n - 1:
                        raise
                    waitall()

        return run

    return decorate


class DummyIter(DataIter):
    """An endless iterator that gives the first batch of ``real_iter`` every time (for timing a
    model without the cost of reading data).  It never raises ``StopIteration``."""

    def __init__(self, real_iter: DataIter) -> None:
        super().__init__(real_iter.batch_size)
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.the_batch: DataBatch = next(real_iter)

    def next(self) -> DataBatch:
        """The first batch of the real iterator, again."""
        return self.the_batch


def get_cuda_compute_capability(ctx: Context) -> int:
    """The CUDA compute capability of the GPU of ``ctx`` as one number (70 for sm_70); a
    :class:`~lazynd.ContextError` for a CPU context or a GPU that cannot be used."""
    if not isinstance(ctx, Context) or ctx.device_type != "gpu":
        raise ContextError(f"get_cuda_compute_capability: expected a gpu context, got {ctx!r}")
    from .backend import gpu_compute_capability

    return gpu_compute_capability(ctx.device_id)


def is_op_runnable() -> bool:
    """Whether the operators under test can run on the current context: always, in lazynd (MXNet
    says no only for its TVM-generated operators on GPUs older than sm_53, which lazynd does not have)."""
    return True


def is_cd_run() -> bool:
    """Whether the tests run as part of a continuous-delivery job (``CD_JOB=1``, MXNet's variable).

    Examples
    --------
    >>> from lazynd.test_utils import is_cd_run
    >>> import os; os.environ.get("CD_JOB") == "1" or not is_cd_run()
    True
    """
    return os.environ.get("CD_JOB") == "1"


def is_aarch64_run() -> bool:
    """Whether the tests run on an aarch64 machine (MXNet's tests skip a few cases there)."""
    return platform.machine() == "aarch64"


__all__ = [
    "DummyIter",
    "discard_stderr",
    "environment",
    "get_cuda_compute_capability",
    "get_im2rec_path",
    "getenv",
    "is_aarch64_run",
    "is_cd_run",
    "is_op_runnable",
    "retry",
    "setenv",
]
