"""The definition of one operator, :class:`OpDef`: one definition feeds NDArray, Symbol and both backends.

An :class:`OpDef` carries everything about an operator:

- ``inputs`` / ``outputs`` / ``aux`` names (``inputs`` may depend on parameters,
  e.g. ``no_bias``; variadic operators list ``num_args`` inputs ``arg0``, ``arg1``...,
  unless ``inputs`` is a function of the parameters, which then names them, as
  ``UpSampling``'s does: ``num_args`` images for nearest, ``data`` and ``weight`` for bilinear);
- ``input_attrs``: a function of the parameters giving ``{input name: {attribute: value}}``,
  attributes a variable given for (or created for) that input receives when a symbol is
  composed, unless it has them already (MXNet's ``FSetInputVarAttrOnCompose``: bilinear
  ``UpSampling`` marks its weight ``__init__`` ``["bilinear", {}]``);
- typed ``params`` (:class:`~lazynd.ops.params.Param`);
- ``infer_shape(attrs, in_shapes, aux_shapes) -> (in_shapes, out_shapes, aux_shapes)``
  working forward and backward on partial shapes (``None`` = unknown shape, ``0`` =
  unknown dimension);
- ``infer_type(attrs, in_types, aux_types) -> (in_types, out_types, aux_types)``;
- ``forward(kctx, attrs, inputs, outputs, aux)``: the kernel, writing into the
  given output buffers; ``kctx.xp`` is NumPy or CuPy.  ``forward_gpu`` overrides it
  on the GPU (our RawKernels);
- ``gradient(F, attrs, inputs, outputs, out_grads) -> list`` of input gradients
  (``None`` for none), written with the operators of the namespace ``F`` — the
  symbol namespace in the gradient pass — so one rule serves every use; a
  :class:`BackwardOpGradient` when the rule is one backward operator (imperative autograd
  then gives that operator its output buffers);
- ``inplace``: ``(input_index, output_index)`` pairs the output may overwrite;
- ``mutates``: indices of inputs the kernel updates in place (optimizer states such
  as ``mom``), so the engine schedules them as writes (a function of the parameters
  when the number of inputs depends on them, as in ``multi_sgd_mom_update``);
- ``fills``: indices of inputs the kernel overwrites with a constant (BatchNorm's gamma with
  ``fix_gamma``: MXNet writes the 1 it scales by into it).  They are written as ``mutates``
  inputs are; as no recorded value goes into them and no gradient flows to them, autograd lets
  a recorded call write them where it refuses any other in-place write into a recorded array;
- ``writes_aux_in_train`` / ``writes_aux_in_predict``: whether the kernel updates the auxiliary
  states in a training call (BatchNorm's moving mean and variance) / in a prediction call too
  (a ``Custom`` operator's, whose user's Python may assign them in either), so the engine
  schedules them as writes;
- ``shape_only_inputs``: indices of inputs whose values the kernel never reads, only their
  shape and dtype (the ``like`` input of ``_reduce_to_like``, ``_backward_slice``,
  ``broadcast_like``; a function of the parameters where it depends on them, as in
  ``_backward_reduce``).  An executor lets a backward pass run again after one forward when
  the only forward values its memory plan overwrote are read by such inputs;
- ``optional_outputs``: the kernel accepts ``None`` for an output nobody reads and then
  skips computing it (MXNet's ``kNullOp``), e.g. the data gradient of a first layer;
- ``forward_into_zeros``: optionally, the CPU kernel for outputs that are known to be
  zero-filled; an imperative call that allocates its outputs itself then takes them
  from the allocator's zeroed pages (cheaper than writing zeros) and runs this kernel
  instead of ``forward`` (``one_hot``: only the ones are written);
- ``float_data``: the operator refuses integer data (its first input), as MXNet's does,
  when inferring types, so the call fails at once, naming the operator, rather than
  inside a kernel that cannot store its floating-point results (a function of the
  parameters where only some modes need it, as average pooling);
- ``quiet=False``: the CPU kernel runs a user's Python (``Custom``), under the user's own NumPy
  error settings; every other CPU kernel (``forward``, ``forward_into_zeros``) runs with NumPy's
  divide, overflow and invalid-value warnings off, as MXNet computes inf and NaN silently;
- ``positional_inputs``: the inputs MXNet's generated function lists by position, before its
  parameters, where they are not the inputs and auxiliary states under the default parameters:
  every input some parameter setting takes (``LeakyReLU``'s ``gamma``, ``softmax``'s ``length``),
  or no auxiliary state (MXNet's legacy ``BatchNorm_v1``); ``positional_params=False``: its function
  is ``f(*data, **params)``, every positional argument an input (the default for variadic ones).
  :mod:`.signature` binds a call's arguments by them;
- ``nonempty_axes``: ``{input name: axes}`` that must not have size 0 in an imperative call:
  MXNet 1.9.1 takes such a 0 for an unknown dim and refuses the call, and our kernels (which
  read every pixel, box or category there) would fail only at the wait;
- ``takes_bool=False``: the operator refuses bool inputs when inferring types, as MXNet
  1.9.1's kernels do ("Unknown type enum 7"), where NumPy would fail only at the wait;
- ``blas_heavy``: the CPU kernel is mostly level-3 BLAS (convolution).  While the host BLAS
  runs threads of its own, an imperative call also writes
  :data:`lazynd.backend.blas.BLAS_VAR`, so the engine runs such operations one after the
  other in push order instead of handing them to workers that would only queue on
  :func:`~lazynd.backend.blas.blas_section`;
- ``macs``: ``macs(attrs, in_shapes, out_shapes)``, the multiply-adds of a product whose time they
  measure better than its elements do (``dot``, ``batch_dot``): the engine hands a ready call of
  more work than :data:`~lazynd.runtime.device_push.SMALL_INLINE_MAX` to a worker under a
  single-threaded BLAS, where two independent 512 x 512 products run side by side in half the
  time.  Layers (``FullyConnected``, convolutions) count their elements as other operators do:
  in a model they come in chains, which run best on the pushing thread.

Beside it: :class:`KernelContext` (what a kernel may use besides its buffers) and the default
same-shape and same-type rules.  ``gpu_float16_as_float32`` wraps the GPU kernel with
:func:`~lazynd.ops.half_precision.float16_as_float32`.
The partial-shape helpers that shape rules share (:func:`merge_shape`, :func:`unify_shapes`) are
in :mod:`.partial_shapes`.
Operators are registered in :mod:`lazynd.ops.registry`, which hands these names on.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from ..backend.fperr import quiet_kernel
from ..errors import OperatorError, ShapeError
from ..util import is_np_shape
from .half_precision import float16_as_float32
from .params import Param, parse_params
from .partial_shapes import merge_shape, unify_shapes

FLOAT_TYPES = ("float16", "float32", "float64")


class KernelContext:
    """What a kernel may use besides its buffers."""

    __slots__ = ("xp", "backend", "device_id", "is_train", "rng")

    def __init__(self, xp: Any, backend: Any, device_id: int = 0, is_train: bool = False, rng: Any = None) -> None:
        self.xp = xp
        self.backend = backend
        self.device_id = device_id
        self.is_train = is_train
        self.rng = rng


def _same_shape_infer(
    op: OpDef, attrs: dict, in_shapes: list, aux_shapes: list, out_shape: tuple | None = None
) -> tuple[list, list, list]:
    names = op.input_names(attrs)
    shape = unify_shapes(op.name, names, list(in_shapes))
    if out_shape is not None:
        shape = merge_shape(op.name, "output", tuple(out_shape), shape)
    return [shape] * len(in_shapes), [shape] * op.num_outputs(attrs), list(aux_shapes)


def _same_type_infer(op: OpDef, attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    dtype = next((t for t in in_types if t is not None), None)
    for name, t in zip(op.input_names(attrs), in_types, strict=False):
        if t is not None and dtype is not None and t != dtype:
            raise OperatorError(f"{op.name}: input '{name}' has dtype {t}, expected {dtype} like the other inputs")
    return [dtype] * len(in_types), [dtype] * op.num_outputs(attrs), [dtype if t is None else t for t in aux_types]


def refuse_bool_inputs(op_name: str, family: str, names: Sequence[str], in_types: Sequence[Any]) -> None:
    """Raise :class:`OperatorError` naming ``op_name`` and the input when one of ``in_types`` is bool:
    MXNet 1.9.1 refuses bool arrays in its ``family`` (``binary operators``, ``unary operators``), where NumPy
    would fail only at the wait (``-mask``) or quietly compute in bools (``mask / mask``, ``exp(mask)``).
    ``family`` names whose kernels they are (``unary operators``, or ``<op>'s kernels``)."""
    import numpy as np

    for name, t in zip(names, in_types, strict=False):
        if t is not None and np.dtype(t) == np.bool_:
            raise OperatorError(
                f"{op_name}: input '{name}' is a bool array, which {family} do not take (as in "
                "MXNet 1.9.1); cast it first, e.g. x.astype('int32')"
            )


def variadic_input_names(attrs: dict) -> list[str]:
    """The input names of a variadic operator: ``arg0`` ... ``arg{num_args - 1}``."""
    return [f"arg{i}" for i in range(attrs.get("num_args") or 0)]


class OpDef:
    """The definition of one operator (see the module docstring)."""

    def __init__(
        self,
        name: str,
        forward: Callable[..., None],
        *,
        inputs: Sequence[str] | Callable[[dict], Sequence[str]] = ("data",),
        outputs: Sequence[str] | Callable[[dict], Sequence[str]] = ("output",),
        aux: Sequence[str] = (),
        params: dict[str, Param] | None = None,
        infer_shape: Callable[..., tuple[list, list, list]] | None = None,
        infer_type: Callable[..., tuple[list, list, list]] | None = None,
        forward_gpu: Callable[..., None] | None = None,
        gradient: Callable[..., list] | None = None,
        inplace: Sequence[tuple[int, int]] = (),
        num_visible_outputs: int | Callable[[dict], int] | None = None,
        aliases: Sequence[str] = (),
        variadic: bool = False,
        needs_random: bool | Callable[[dict], bool] = False,
        is_loss: bool = False,
        writes_aux_in_train: bool = True,
        writes_aux_in_predict: bool = False,
        creates_output: bool = False,
        mutates: Sequence[int] | Callable[[dict], Sequence[int]] = (),
        fills: Sequence[int] | Callable[[dict], Sequence[int]] = (),
        shape_only_inputs: Sequence[int] | Callable[[dict], Sequence[int]] = (),
        optional_outputs: bool = False,
        forward_into_zeros: Callable[..., None] | None = None,
        blas_heavy: bool = False,
        gpu_float16_as_float32: bool = False,
        float_data: bool | Callable[[dict], bool] = False,
        takes_bool: bool = True,
        positional_inputs: Sequence[str] | None = None,
        positional_params: bool | None = None,
        nonempty_axes: dict[str, tuple[int, ...]] | None = None,
        input_attrs: Callable[[dict], dict[str, dict[str, str]]] | None = None,
        quiet: bool = True,
        macs: Callable[[dict, list[tuple[int, ...]], list[tuple[int, ...]]], int] | None = None,
        doc: str = "",
    ) -> None:
        self.name = name
        self.quiet = quiet  # see ``quiet=False`` above, and lazynd.backend.fperr
        self.forward = quiet_kernel(forward) if quiet else forward
        # the CPU kernel without its switch of NumPy's warnings, for a caller that runs many kernels
        # inside one (an executor's pass: lazynd.backend.fperr.run_quietly)
        self.raw_forward = forward
        if quiet and forward_into_zeros is not None:
            forward_into_zeros = quiet_kernel(forward_into_zeros)
        self.mutates = mutates if callable(mutates) else tuple(mutates)
        self.fills = fills if callable(fills) else tuple(fills)
        if gpu_float16_as_float32:
            # (the CPU kernel as it runs on every device where the GPU has none of its own)
            forward_gpu = float16_as_float32(forward_gpu or self.forward, self.mutated_inputs)
        self.forward_gpu = forward_gpu
        self._inputs = inputs
        self._outputs = outputs
        self.aux = tuple(aux)
        self.params = dict(params or {})
        if variadic and "num_args" not in self.params:
            from .params import parse_count

            self.params["num_args"] = Param(parse_count, None, "number of inputs")
        self._infer_shape = infer_shape
        self._infer_type = infer_type
        self.gradient = gradient
        self.inplace = tuple(inplace)
        self._num_visible = num_visible_outputs
        self.aliases = tuple(aliases)
        self.variadic = variadic
        self.needs_random = needs_random
        self.is_loss = is_loss
        self.writes_aux_in_train = writes_aux_in_train
        self.writes_aux_in_predict = writes_aux_in_predict
        # an operator without data inputs (zeros, uniform): ctx/shape/dtype come from params
        self.creates_output = creates_output
        self.shape_only_inputs = shape_only_inputs if callable(shape_only_inputs) else tuple(shape_only_inputs)
        self.optional_outputs = optional_outputs
        self.forward_into_zeros = forward_into_zeros
        self.blas_heavy = blas_heavy
        self.float_data = float_data
        self.takes_bool = takes_bool
        self._positional_inputs = None if positional_inputs is None else tuple(positional_inputs)
        self.positional_params = not variadic if positional_params is None else positional_params
        self.nonempty_axes = dict(nonempty_axes or {})
        self.input_attrs = input_attrs
        self.macs = macs
        self.doc = doc

    # -- structure -----------------------------------------------------------------------------
    def parse(self, given: dict[str, Any]) -> dict[str, Any]:
        return parse_params(self.name, self.params, given)

    def input_names(self, attrs: dict) -> list[str]:
        if callable(self._inputs):
            return list(self._inputs(attrs))
        if self.variadic:
            return variadic_input_names(attrs)
        return list(self._inputs)

    def positional_input_names(self) -> list[str] | None:
        """The inputs MXNet's generated function lists by position before its parameters (see
        ``positional_inputs``); ``None`` where every positional argument is an input."""
        if not self.positional_params:
            return None
        if self._positional_inputs is not None:
            return list(self._positional_inputs)
        try:
            return self.input_names({k: p.default for k, p in self.params.items()}) + list(self.aux)
        except OperatorError:  # a required parameter decides them: any position may be an input
            return None

    def takes_input_at(self, position: int) -> bool:
        """Whether a value given at ``position`` falls on an input, MXNet's generated functions listing
        every input before the parameters; there a ``None`` is an input left out (``like=None``).
        A variadic operator's never does."""
        if self.variadic:
            return False
        names = self.positional_input_names()
        return names is None or position < len(names)

    def attrs_of_input_variables(self, attrs: dict) -> dict[str, dict[str, str]]:
        """``{input name: {attribute: value}}`` that variables composed as these inputs receive (see ``input_attrs``)."""
        return self.input_attrs(attrs) if self.input_attrs is not None else {}

    def output_names(self, attrs: dict) -> list[str]:
        names = self._outputs(attrs) if callable(self._outputs) else self._outputs
        return list(names)

    def draws_random(self, attrs: dict) -> bool:
        """Whether a call with these parameters draws from its context's generator (and so writes its var).

        ``needs_random`` is a flag, or a function of the parameters for an operator where only
        some settings draw (``LeakyReLU``: only ``rrelu``).
        """
        needs = self.needs_random
        return bool(needs(attrs)) if callable(needs) else needs

    def mutated_inputs(self, attrs: dict) -> tuple[int, ...]:
        """Indices of the inputs the kernel updates in place (``mutates``, then ``fills``)."""
        return self._indices(self.mutates, attrs) + self._indices(self.fills, attrs)

    def filled_inputs(self, attrs: dict) -> tuple[int, ...]:
        """Indices of the inputs the kernel overwrites with a constant (a part of :meth:`mutated_inputs`)."""
        return self._indices(self.fills, attrs)

    @staticmethod
    def _indices(spec: Sequence[int] | Callable[[dict], Sequence[int]], attrs: dict) -> tuple[int, ...]:
        return tuple(spec(attrs)) if callable(spec) else tuple(spec)

    def reads_value(self, attrs: dict, index: int) -> bool:
        """Whether the kernel reads the values of input ``index`` (not only its shape and dtype)."""
        shape_only = self.shape_only_inputs(attrs) if callable(self.shape_only_inputs) else self.shape_only_inputs
        return index not in shape_only

    def num_outputs(self, attrs: dict) -> int:
        # asked of every node by every graph pass: the count, without the copy output_names hands out
        return len(self._outputs(attrs) if callable(self._outputs) else self._outputs)

    def num_visible_outputs(self, attrs: dict) -> int:
        if self._num_visible is None:
            return self.num_outputs(attrs)
        if callable(self._num_visible):
            return self._num_visible(attrs)
        return self._num_visible

    # -- inference -----------------------------------------------------------------------------
    def infer_shape(
        self, attrs: dict, in_shapes: list, aux_shapes: list | None = None, out_shapes: list | None = None
    ) -> tuple[list, list, list]:
        """Infer shapes; ``out_shapes`` (known output shapes) reach rules that accept them (backward inference)."""
        aux_shapes = list(aux_shapes) if aux_shapes is not None else [None] * len(self.aux)
        if self.nonempty_axes and is_np_shape():
            self._refuse_empty_axes(attrs, in_shapes)
        if self._infer_shape is None:
            # same-shape ops: a known output shape (or its known dims) gives every input, as MXNet's
            # ElemwiseShape infers both ways (``y + relu(x)`` with x's shape partial or unknown)
            out = out_shapes[0] if out_shapes and self.num_outputs(attrs) == 1 and in_shapes else None
            return _same_shape_infer(self, attrs, list(in_shapes), aux_shapes, out)
        if out_shapes is not None and self._accepts_out_shapes:
            return self._infer_shape(attrs, list(in_shapes), aux_shapes, out_shapes=list(out_shapes))
        return self._infer_shape(attrs, list(in_shapes), aux_shapes)

    def _refuse_empty_axes(self, attrs: dict, in_shapes: list) -> None:
        for name, shape in zip(self.input_names(attrs), in_shapes, strict=False):
            for axis in self.nonempty_axes.get(name, ()) if shape is not None else ():
                if -len(shape) <= axis < len(shape) and shape[axis] == 0:
                    raise ShapeError(
                        f"{self.name}: axis {axis % len(shape)} of '{name}' {tuple(shape)} has size 0, "
                        f"expected a nonzero size (MXNet 1.9.1 refuses it too)"
                    )

    @property
    def output_shape_fills_inputs(self) -> bool:
        """Whether a known output shape alone gives the inputs theirs (the same-shape operators)."""
        return self._infer_shape is None

    @functools.cached_property
    def _accepts_out_shapes(self) -> bool:
        # asked at every shape inference of a node with known outputs (each bind and reshape); the
        # rule is fixed when the operator is defined, and its signature costs about 9 us to read
        try:
            return "out_shapes" in inspect.signature(self._infer_shape).parameters  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False

    def infer_type(self, attrs: dict, in_types: list, aux_types: list | None = None) -> tuple[list, list, list]:
        aux_types = list(aux_types) if aux_types is not None else [None] * len(self.aux)
        data = in_types[0] if len(in_types) else None
        if data is not None and data not in FLOAT_TYPES and self.needs_float_data(attrs):
            raise OperatorError(
                f"{self.name}: input '{self.input_names(attrs)[0]}' has dtype {data}, expected one of "
                f"{', '.join(FLOAT_TYPES)} (the operator takes no integer data, as in MXNet)"
            )
        if not self.takes_bool:
            refuse_bool_inputs(self.name, f"{self.name}'s kernels", self.input_names(attrs), in_types)
        if self._infer_type is None:
            return _same_type_infer(self, attrs, list(in_types), aux_types)
        return self._infer_type(attrs, list(in_types), aux_types)

    def needs_float_data(self, attrs: dict) -> bool:
        return self.float_data(attrs) if callable(self.float_data) else self.float_data

    def specialize(self, attrs: dict) -> OpDef:
        """The definition a graph node of these parameters holds: ``self`` for almost every operator.

        An operator whose auxiliary states or loss flag depend on its parameters (``Custom``)
        returns a definition with them fixed; symbol creation and JSON loading call this
        after parsing.
        """
        return self

    def __repr__(self) -> str:
        return f"<OpDef {self.name}>"
