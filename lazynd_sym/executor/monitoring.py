"""What an executor hands a monitor (:meth:`Executor.set_monitor_callback`), named as MXNet 1.9.1 names it.

After each operator the monitor gets a private copy of each output it computed, hidden ones
included: ``fc1_output``, ``bn1_mean``, ``drop1_mask``; the backward pass's nodes are named
after their forward node, output ``j`` being the gradient of input ``j``:
``fc1_backward_output1`` (see :func:`lazynd_sym.passes.gradient.gradient`).

With ``monitor_all`` each operator's inputs come first, before it runs (it may overwrite
one in place): an input that is a variable under the variable's name (``fc1_weight``), then
every input as ``<node>_<input name>`` (``fc1_data``, ``fc1_weight``, ``fc1_bias``).  MXNet
names an input by position (``relu1_input0``) where its operator declares no input names:
the elementwise unary and scalar operators, and the operators of :data:`POSITIONAL_INPUTS`;
the inputs of backward nodes likewise (``fc1_backward_input0``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import lazynd.ndarray as nd
from lazynd.backend import get_backend
from lazynd.context import Context
from lazynd.engine.var import Var
from lazynd.ops.elemwise_unary import UNARY

from ..fused_kernel import chain_intermediates

# Operators (besides the elementwise unary and ``_*_scalar`` ones) whose inputs MXNet 1.9.1's
# monitor names by position: found by running each of them under a monitor with monitor_all.
POSITIONAL_INPUTS = frozenset(
    {
        "Activation", "Flatten", "Reshape", "BlockGrad", "stop_gradient", "identity", "_copy",
        "zeros_like", "ones_like", "SoftmaxActivation", "make_loss", "topk", "sort", "argsort",
        "argmax", "argmin", "norm", "softmin", "sum", "mean", "max", "min", "prod", "nansum",
        "nanprod", "sum_axis", "max_axis", "min_axis", "transpose", "hard_sigmoid", "smooth_l1",
        "shape_array", "size_array", "Cast", "amp_cast", "clip", "expand_dims", "slice",
        "slice_axis", "broadcast_to", "broadcast_axis",
    }
)  # fmt: skip

MonitorCallback = Callable[[str, Any], None]


def run_monitored(step: tuple, monitor: MonitorCallback, ctx: Context, inputs: bool = False) -> None:
    """Run one step, handing ``monitor`` a copy of each output it computed (and of its inputs first when ``inputs``).

    A fused elementwise chain reports its inner members' outputs too, before its own, so a
    monitor sees every operator of the symbol as in MXNet whether or not it was fused.
    """
    fn, kctx, attrs, ins, outs, aux, node = step
    attrs_of_node = getattr(node, "attrs", {})  # the copy steps a pass adds have none
    if inputs and getattr(node, "op", None) is not None:
        for name, value in input_rows(node, [*ins, *aux]):
            monitor(name, monitor_copy(value, ctx))
    inner = chain_intermediates(kctx, attrs_of_node, ins, outs[0]) if "members" in attrs_of_node else []
    fn(kctx, attrs, ins, outs, aux)
    for name, value in inner:
        monitor(name, monitor_copy(value, ctx))
    shown = node.num_outputs() if getattr(node, "op", None) is not None else node.num_visible_outputs()
    for k, out in enumerate(outs[:shown]):
        if out is not None:  # an optional output nobody reads is not computed
            monitor(node.monitor_name(k), monitor_copy(out, ctx))


def input_rows(node: Any, values: list[Any]) -> list[tuple[str, Any]]:
    """``(name, value)`` of each input of ``node`` as MXNet's ``monitor_all`` reports them."""
    backward_of = node.user.get("__backward_of__")
    op = node.opdef
    if backward_of is not None:
        names = [f"{backward_of}_backward_input{i}" for i in range(len(values))]
    elif op.name in UNARY or op.name in POSITIONAL_INPUTS or (op.name.startswith("_") and op.name.endswith("_scalar")):
        names = [f"{node.name}_input{i}" for i in range(len(values))]
    else:
        declared = node.input_names()
        names = [f"{node.name}_{declared[i] if i < len(declared) else f'input{i}'}" for i in range(len(values))]
    rows: list[tuple[str, Any]] = []
    for (child, _), name, value in zip(node.inputs, names, values, strict=False):
        if child.op is None:
            rows.append((child.name, value))
        rows.append((name, value))
    return rows


def monitor_copy(out: Any, ctx: Context) -> nd.NDArray:
    """The private copy of a step's output a monitor gets, made inside the running pass.

    On a GPU the copy is launched on the pass's stream and its var carries the event recorded
    after it: the monitor may read it on the host (``asnumpy``, on the device->host copy stream)
    or keep it for later, and that read waits for the copy, not just for the launch.
    """
    copy = out.copy()
    var = Var() if ctx.device_type == "cpu" else get_backend(ctx).var_written_now(copy)
    return nd.NDArray(copy, var, ctx)
