"""The NDArray: a lazily computed array on a device.

An NDArray is a backend array (NumPy or CuPy, possibly a view) plus the engine var of the
storage it lives in.  Its buffer is allocated when it is created; its *values* are written by
operations the engine runs later.  Shape, dtype and context are known at once; reading values
waits (``asnumpy``, ``wait_to_read``).
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import engine as _engine_mod
from ..backend import get_backend
from ..context import Context
from ..engine.var import Var
from ..errors import ArgumentTypeError, OperatorError
from ..runtime import Signature, signature_of
from . import arithmetic as _arithmetic
from . import copying as _copying
from . import creation as _creation
from . import dispatch as _ops_table
from . import functions as _functions
from . import indexing as _indexing
from . import mxnet1_methods as _mxnet1
from . import numpy_protocol as _numpy_protocol
from . import sparse as _sparse
from .serialization import unpickle as _unpickle  # (by this name too: pickles of older versions call it)

_new_object = object.__new__

_get_engine = _engine_mod.get_engine


class NDArray:
    """A multi-dimensional array on a device whose operations run lazily.

    Besides MXNet's properties (``shape``, ``dtype``, ``size``, ``ndim``, ``context``
    and its alias ``ctx``, ``handle``), three read-only properties are the surface the
    other packages (the KVStore, the symbolic executor, io, image) build engine
    operations from; they never read the private attributes:

    - ``data_array``: the backend array (NumPy on the CPU, CuPy on a GPU, possibly a
      view) that holds the values.  Reading it does not wait: its values are only
      valid inside an engine operation that reads ``var``, or after ``wait_to_read()``;
      writing into it belongs inside an operation that writes ``var``.
    - ``var``: the engine :class:`~lazynd.engine.var.Var` of the storage, shared with
      every view of it; name it in a push's reads or writes.  ``handle`` is MXNet's
      name for the same object.
    - ``context``: the device the array lives on.

    and ``signature``, the interned (shape, dtype, device) that the runtime's call plans are
    cached by (:func:`lazynd.runtime.plan.signature_of`), read-only too.

    Examples
    --------
    >>> import lazynd as mx
    >>> a = mx.nd.ones((2, 3))
    >>> b = a * 2 + 1        # returns at once; the engine computes it
    >>> b.asnumpy()          # waits for the result
    array([[3., 3., 3.],
           [3., 3., 3.]], dtype=float32)
    """

    # signature (public, read-only): its interned (shape, dtype, device), the runtime's call-plan
    # cache key, set by every constructor (the buffer never changes, so neither does it; a slot,
    # not a property: a call reads it for each input);
    # _partial: a view of part of its storage, which it shares the var of: a write into it alone
    # must not clear an error the storage holds, so such a write also reads the var (inheriting it);
    # _ag: its autograd entry (lazynd.autograd), None until autograd records or marks the array.
    # Every constructor sets every slot, and the class has no __getattr__: either would send each
    # attribute read of every array (x._data, x.shape) down the interpreter's slow path
    # (Python 3.11 specializes reads only on classes without one: ~300 instructions a read)
    __slots__ = ("_data", "_var", "_ctx", "signature", "_partial", "_ag", "__weakref__")
    # make NumPy defer to our reflected operators (np.float32(2) * nd)
    __array_priority__ = 1000.0

    def __init__(self, data: Any, var: Var | None = None, ctx: Context | None = None) -> None:
        self._data = data
        self._var = var if var is not None else Var()
        self._ctx = ctx if ctx is not None else _CPU
        self.signature: Signature = signature_of(data.shape, data.dtype, self._ctx)
        self._partial = False
        self._ag: Any = None

    # -- properties ----------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def size(self) -> int:
        return int(self._data.size)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def dtype(self) -> type:
        """The element type as a NumPy scalar type (``numpy.float32``), as in MXNet."""
        return self._data.dtype.type

    @property
    def context(self) -> Context:
        """The device this array lives on."""
        return self._ctx

    ctx = context

    @property
    def data_array(self) -> Any:
        """The backend array (NumPy or CuPy) holding the values; reading it does not wait (see the class)."""
        return self._data

    @property
    def var(self) -> Var:
        """The engine var of this array's storage (shared with its views)."""
        return self._var

    handle = var

    @property
    def T(self) -> NDArray:
        """The array with its axes reversed, any number of them, as in MXNet 1.x (0.9 took 2-D only);
        an array of under 2 axes is its own transpose, itself (writes to ``x.T`` reach ``x``), as in MXNet."""
        return self if self._data.ndim < 2 else _ops_table.invoke_by_name("transpose", [self], {})

    # -- waiting and host access ---------------------------------------------------------------
    def wait_to_read(self) -> None:
        """Block until every pending write to this array is done; raise its error if one failed."""
        # the engine module's global rather than a call to get_engine: every call counts here, and
        # after a large kernel each Python function entered costs several cache misses
        (_engine_mod._engine or _get_engine()).wait_for_var(self._var)

    def wait_to_write(self) -> None:
        """Block until every pending read and write of this array is done."""
        (_engine_mod._engine or _get_engine()).wait_for_var(self._var, for_write=True)  # as in wait_to_read

    def asnumpy(self) -> np.ndarray:
        """A NumPy copy of the values (waits for pending writes)."""
        (_engine_mod._engine or _get_engine()).wait_for_var(self._var)  # as in wait_to_read
        data = self._data
        if self._ctx.device_type == "gpu":
            return get_backend(self._ctx).to_numpy(data)
        return np.array(data, copy=True)

    def asscalar(self) -> Any:
        """The value of a one-element array as a NumPy scalar."""
        if self.size != 1:
            raise OperatorError(f"asscalar: the array has shape {self.shape}, expected exactly one element")
        return self.asnumpy().reshape(-1)[0]

    # -- NumPy's protocols (see numpy_protocol.py): the lazynd operator, or NumPy after a wait --
    __array__ = _numpy_protocol.numpy_copy
    __array_ufunc__ = _numpy_protocol.array_ufunc
    __array_function__ = _numpy_protocol.array_function
    __format__ = _numpy_protocol.format_ndarray

    def tolist(self) -> list:
        return self.asnumpy().tolist()

    def __len__(self) -> int:
        if self.ndim == 0:
            # a LazyNDError as every error of ours; a TypeError as Python's len() of an unsized object
            raise ArgumentTypeError("len() of a 0-d NDArray: it has no first axis (shape ())")
        return self.shape[0]

    def __iter__(self) -> Iterator[NDArray]:
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        """False when empty (as in MXNet), a one-element array's value, ambiguous beyond that."""
        if self.size > 1:
            raise OperatorError(
                f"the truth value of an NDArray with {self.size} elements is ambiguous; use .asnumpy().any() or .all()"
            )
        return self.size == 1 and bool(self.asscalar())

    __nonzero__ = __bool__  # MXNet's Python 2 name, still called by some programs

    # a one-element array's value; another size, or a float array as an index, is refused by name
    __float__ = _numpy_protocol.number_method(float)
    __int__ = _numpy_protocol.number_method(int)
    __index__ = _numpy_protocol.number_method(operator.index)

    def __repr__(self) -> str:
        # MXNet's text byte for byte (``<NDArray 2x3 @cpu(0)>``: doctests written for MXNet pass); a wait
        # like any other, so an operator's error is raised here, never turned into text a log swallows
        values = str(self.asnumpy())
        shape = "x".join(str(d) for d in self.shape)
        return f"\n{values}\n<NDArray {shape} @{self._ctx}>"

    __str__ = __repr__

    # -- pickling ------------------------------------------------------------------------------
    def __reduce__(self) -> tuple:
        return (_unpickle, (self.asnumpy(), self._ctx.device_type, self._ctx.device_id))

    # -- copies, conversion, shape -------------------------------------------------------------
    def copyto(self, other: NDArray | Context) -> NDArray:
        """Copy into ``other`` (an NDArray of the same shape, or a new array on a context)."""
        return _copying.copyto(self, other)

    def copy(self) -> NDArray:
        return _copying.copyto(self, self._ctx)

    def as_in_context(self, context: Context) -> NDArray:
        """This array if it is already on ``context``, else a copy there."""
        if self._ctx == context:  # (Context's __eq__ first: a NumPy array's would compare elementwise)
            return self
        return _copying.copyto(self, context)

    def astype(self, dtype: Any, copy: bool = True) -> NDArray:
        return _creation.astype(self, dtype, copy)

    def reshape(self, *shape: Any, **kwargs: Any) -> NDArray:
        """A view with a new shape, sharing this array's memory as MXNet 1.x's: ``-1`` infers one
        dimension; MXNet's codes 0/-2/-3/-4 and ``reverse`` are read as ``nd.Reshape`` reads them."""
        # one tuple or list, or the dims themselves: either way ints, else an OperatorError naming reshape
        shape = _copying.shape_argument(shape[0] if len(shape) == 1 and shape[0].__class__ in (tuple, list) else shape)
        if kwargs or 0 in shape or -2 in shape or -3 in shape or -4 in shape:
            return _copying.reshape_by_operator(self, shape, kwargs)
        return _copying.view(self, shape)

    flatten = _copying.flatten_method
    squeeze = _copying.shape_method("squeeze", "Axes of length 1 removed: a copy; with ``inplace=True`` a view.")
    expand_dims = _copying.shape_method("expand_dims", "An axis of length 1 added: a copy; ``inplace=True``: a view.")
    slice_assign, slice_assign_scalar = _mxnet1.slice_assign, _mxnet1.slice_assign_scalar
    as_nd_ndarray, as_np_ndarray = _mxnet1.as_nd_ndarray, _mxnet1.as_np_ndarray

    def split_v2(self, indices_or_sections: Any, axis: int = 0, squeeze_axis: bool = False) -> Any:
        """Pieces along ``axis``: equal sections or at indices (see :func:`lazynd.nd.split_v2`)."""
        from . import split_v2

        return split_v2(self, indices_or_sections, axis, squeeze_axis)

    def broadcast_to(self, shape: tuple[int, ...]) -> NDArray:
        """The array broadcast to ``shape``; as MXNet 1.x's method (not the operator), a shape of
        more dims than the array's broadcasts the array with leading axes of length 1 added."""
        source = self
        # anything but a list or tuple goes to the operator as given, whose parser refuses it by name
        extra = len(shape) - self.ndim if isinstance(shape, (tuple, list)) else 0
        if extra > 0:
            source = self.reshape((1,) * extra + self.shape)
        return _ops_table.invoke_by_name("broadcast_to", [source], {"shape": shape})

    # -- storage type: lazynd's arrays are all dense, and every one may be written to -------------
    stype = _sparse.DENSE
    writable = True

    def tostype(self, stype: str) -> NDArray:
        """A copy with storage type ``stype``; only ``'default'`` (dense) is supported.

        Examples
        --------
        >>> import lazynd as mx
        >>> mx.nd.ones((2,)).tostype("default").asnumpy()
        array([1., 1.], dtype=float32)
        """
        _sparse.check_dense(stype, "NDArray.tostype")
        return self.copy()

    def to_dlpack_for_read(self) -> Any:
        """A DLPack capsule of the values once pending writes are done (see :func:`lazynd.nd.to_dlpack_for_read`)."""
        return _creation.to_dlpack_for_read(self)

    def to_dlpack_for_write(self) -> Any:
        """A DLPack capsule for writing, once pending reads and writes are done."""
        return _creation.to_dlpack_for_write(self)

    # -- autograd (see lazynd.autograd) ---------------------------------------------------------
    def attach_grad(self, grad_req: str = "write", stype: str | None = None) -> None:
        """Make this array a variable of autograd, with a gradient buffer of zeros in :attr:`grad`.

        ``grad_req``: ``'write'`` (each backward overwrites :attr:`grad`), ``'add'`` (each
        backward adds to it) or ``'null'`` (no gradient; :attr:`grad` is None).  ``stype``:
        the gradient's storage type, None or ``'default'`` (dense) only.

        Examples
        --------
        >>> import lazynd as mx
        >>> x = mx.nd.array([1.0, 2.0, 3.0])
        >>> x.attach_grad()
        >>> with mx.autograd.record():
        ...     y = x * x
        >>> y.backward()
        >>> x.grad.asnumpy()
        array([2., 4., 6.], dtype=float32)
        """
        from .. import autograd

        _sparse.check_dense(stype, "NDArray.attach_grad")
        autograd.attach_grad(self, grad_req)

    @property
    def grad(self) -> NDArray | None:
        """The gradient buffer of a variable (see :meth:`attach_grad`); None for any other array."""
        entry = self._ag  # autograd's entry: its owner's ``grad`` is the variable's buffer, or None
        return None if entry is None else entry[0].grad

    def detach(self) -> NDArray:
        """This array's values (the same memory) with no autograd history: gradients stop here."""
        detached = _new_object(NDArray)  # no __init__: every slot is set here
        detached._data, detached._var, detached._ctx = self._data, self._var, self._ctx
        detached.signature, detached._partial, detached._ag = self.signature, self._partial, None
        return detached

    def backward(self, out_grad: NDArray | None = None, retain_graph: bool = False, train_mode: bool = True) -> None:
        """Compute the gradients of this recorded array into its variables' :attr:`grad` buffers.

        ``out_grad``: the head gradient (default ones, MXNet's semantics); see
        :func:`lazynd.autograd.backward`.
        """
        from .. import autograd

        autograd.backward([self], None if out_grad is None else [out_grad], retain_graph, train_mode)

    # -- indexing (see indexing.py) ------------------------------------------------------------
    def __getitem__(self, key: Any) -> NDArray:
        if key.__class__ is slice:  # x[i:j], the batch loop's call: a view, written out
            data = self._data
            try:
                sub = data[key]
            except (ValueError, IndexError, TypeError):  # a zero step, a 0-d array, a float bound: indexing.py says why
                return _indexing.getitem(self, key)
            view = _new_object(NDArray)
            view._data, view._var, view._ctx, view._ag = sub, self._var, self._ctx, None
            view.signature = signature_of(sub.shape, sub.dtype, self._ctx)
            view._partial = self._partial or sub.size != data.size  # (a slice never selects an element twice)
            if _ops_table.recorder is not None:  # some thread records: a view of a recorded array is recorded
                _ops_table.recorder.view(self, view, key)
            return view
        return _indexing.getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        _indexing.setitem(self, key, value)

    # -- DLPack (see creation.py) ----------------------------------------------------------------
    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        return _creation.dlpack_capsule(self, stream, kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._data.__dlpack_device__()

    # -- arithmetic (see arithmetic.py) ----------------------------------------------------------
    __add__ = _arithmetic.binary_method("add")
    __radd__ = _arithmetic.binary_method("add")
    __sub__ = _arithmetic.binary_method("sub")
    __rsub__ = _arithmetic.binary_method("sub", reflected=True)
    __mul__ = _arithmetic.binary_method("mul")
    __rmul__ = _arithmetic.binary_method("mul")
    __truediv__ = _arithmetic.binary_method("div")
    __rtruediv__ = _arithmetic.binary_method("div", reflected=True)
    __div__ = __truediv__
    __rdiv__ = __rtruediv__
    __mod__ = _arithmetic.binary_method("mod")
    __rmod__ = _arithmetic.binary_method("mod", reflected=True)
    __pow__ = _arithmetic.binary_method("power")
    __rpow__ = _arithmetic.binary_method("power", reflected=True)

    __eq__ = _arithmetic.compare_method("equal")  # type: ignore[assignment]
    __ne__ = _arithmetic.compare_method("not_equal")  # type: ignore[assignment]
    __gt__ = _arithmetic.compare_method("greater")  # type: ignore[assignment]
    __ge__ = _arithmetic.compare_method("greater_equal")  # type: ignore[assignment]
    __lt__ = _arithmetic.compare_method("lesser")  # type: ignore[assignment]
    __le__ = _arithmetic.compare_method("lesser_equal")  # type: ignore[assignment]
    __hash__ = object.__hash__

    __iadd__ = _arithmetic.inplace_method("add")
    __isub__ = _arithmetic.inplace_method("sub")
    __imul__ = _arithmetic.inplace_method("mul")
    __itruediv__ = _arithmetic.inplace_method("div")
    __idiv__ = __itruediv__
    __imod__ = _arithmetic.inplace_method("mod")

    def __neg__(self) -> NDArray:
        # x * -1, as MXNet 1.9.1 computes -x: a bool mask gives int64 (-1, 0), where negative refuses it
        return _ops_table.invoke_by_name("_mul_scalar", [self], {"scalar": -1.0})

    def __pos__(self) -> NDArray:
        return self

    def __abs__(self) -> NDArray:
        return _ops_table.invoke_by_name("abs", [self], {})


_CPU = Context("cpu", 0)
_ops_table.NDArray = _arithmetic.NDArray = _functions.NDArray = _numpy_protocol.NDArray = NDArray
