"""The exception hierarchy of lazynd.

Every error lazynd raises on purpose derives from :class:`LazyNDError`, so
``except lazynd.LazyNDError`` catches them all.  Subclasses also derive from
the built-in exception a Python user would expect (``ValueError`` for a bad
argument, ``TypeError`` for a wrong type, ``OSError``-free format errors are
``ValueError``), so existing ``except ValueError`` code keeps working.
"""

from __future__ import annotations


class LazyNDError(RuntimeError):
    """Base class of every error raised by lazynd, lazynd_sym and lazynd_kv.

    A ``RuntimeError``, as MXNet's ``MXNetError`` is: MXNet code that catches its errors as
    ``except RuntimeError`` catches lazynd's.
    """


# the name MXNet code catches (``except mx.MXNetError``) is the same class
MXNetError = LazyNDError


class ContextError(LazyNDError, RuntimeError):
    """A device context cannot be used (no CuPy, no GPU, bad device id)."""


class EngineError(LazyNDError, RuntimeError):
    """An operation pushed to the engine failed.

    Raised at the wait (``wait_to_read``, ``asnumpy``, ``waitall``) that touches
    the failed operation's outputs or anything computed from them.  The original
    exception is chained as ``__cause__``.

    Attributes
    ----------
    op_name : str
        Name of the operation that failed first.
    """

    def __init__(self, message: str, op_name: str = "") -> None:
        super().__init__(message)
        self.op_name = op_name


class OperatorError(LazyNDError, ValueError):
    """An operator was called with a bad parameter, input or dtype."""


class ShapeError(OperatorError):
    """Shapes are inconsistent (names the op, the argument, given vs expected)."""


class IndexingError(OperatorError, IndexError):
    """An index that does not fit: past the end of an axis (``x[5]`` of two rows), more indices
    than axes, or past the end of a symbol's outputs.

    MXNet raises ``IndexError`` there (NumPy too, and Python's iteration protocol stops on it),
    so ``except IndexError`` catches it; it is also an :class:`OperatorError` (a ``ValueError``),
    as lazynd's other refused indices are.
    """


class FormatError(LazyNDError, ValueError):
    """A file or buffer is truncated, corrupted or not in the expected format."""


class MissingFileError(FileNotFoundError, LazyNDError):
    """A file or remote object to read does not exist.  ``except FileNotFoundError`` catches it too.

    (``FileNotFoundError`` first: its constructor, not ``RuntimeError``'s, reads ``(errno, message,
    filename)``.)"""


class DeviceMemoryError(LazyNDError, MemoryError):
    """A device ran out of memory.  ``except MemoryError`` catches it too.

    Attributes
    ----------
    ctx : str
        The context that was asked (``"gpu(0)"``).
    nbytes : int
        The bytes asked for.
    """

    def __init__(self, message: str, ctx: str = "", nbytes: int = 0) -> None:
        super().__init__(message)
        self.ctx = ctx
        self.nbytes = nbytes


class ArgumentTypeError(LazyNDError, TypeError):
    """An argument of the wrong type (a NumPy array where an NDArray goes, an int where a file name
    goes); MXNet raises ``TypeError`` there, so ``except TypeError`` catches it too."""


class ArgumentValueError(LazyNDError, ValueError):
    """An argument of the right type but a value outside what it may be (a schedule step below 1,
    an optimizer or initializer name nobody registered); MXNet raises ``ValueError`` there, so
    ``except ValueError`` catches it too."""


class MissingKeyError(LazyNDError, KeyError):
    """A key (of a record index, a parameter dict) is not there; MXNet raises ``KeyError`` there,
    so ``except KeyError`` catches it too."""

    def __str__(self) -> str:
        # KeyError's str() is the repr of its argument: show the message as written
        return str(self.args[0]) if self.args else ""


class ParameterError(LazyNDError, ValueError):
    """A dict of parameters names one the model does not have (MXNet raises ``ValueError`` there)."""


class TextError(LazyNDError, ValueError):
    """``mx.contrib.text`` was given a token or index its vocabulary does not have (MXNet raises
    ``ValueError`` there)."""


class TextRuleError(TextError, AssertionError):
    """A vocabulary's arguments, an embedding file or new token vectors break a rule that MXNet
    checks with ``assert``; ``except AssertionError`` catches it too."""


class DataError(LazyNDError, RuntimeError):
    """A dataset cannot be found, downloaded or verified."""


class DataTypeError(DataError, TypeError):
    """A data description or batch of the wrong type (a shape that is not integers, a batch whose
    data is not a list); MXNet raises ``TypeError`` there, so ``except TypeError`` catches it too."""


class DataValueError(DataError, ValueError):
    """Inputs named wrongly: a module's ``data_names`` or ``fixed_param_names`` that its symbol lacks,
    ``data_shapes`` that do not name the module's data; MXNet raises ``ValueError`` there, so
    ``except ValueError`` catches it too."""


class LabelShapeError(DataError, ValueError):
    """Labels and predictions given to a metric disagree in number or shape; MXNet's
    ``check_label_shapes`` raises ``ValueError`` there, so ``except ValueError`` catches it too."""


class UnsupportedError(LazyNDError, AttributeError):
    """A face of MXNet that lazynd does not have (``mx.gluon``, ``mx.np``, ``mx.nd.sparse.csr_matrix``).

    Naming one raises this, which says what to use instead; it is also an ``AttributeError``,
    so ``hasattr(mx, 'gluon')`` answers False and feature checks keep working.
    """


class NotImplementedHookError(LazyNDError, NotImplementedError):
    """A method a subclass is to write is not written (``BaseModule.forward``, ``PythonModule``'s
    ``_compute_output_shapes``, ``PythonLossModule.backward`` without ``grad_func``).  MXNet raises
    ``NotImplementedError`` there, so ``except NotImplementedError`` catches it too."""


class SettingConflictError(LazyNDError, UserWarning):
    """A setting cannot be changed because another one governs it (``set_learning_rate`` on an optimizer
    with an ``lr_scheduler``).  MXNet raises ``UserWarning`` there, so ``except UserWarning`` catches it too."""
