"""Write an operator in Python: a softmax loss as ``mx.operator.CustomOp``, trained on MNIST.

A custom operator has two parts.  The *property* class (``CustomOpProp``, registered under a
name with ``@mx.operator.register``) says what the operator looks like: its arguments
(``data`` and ``label`` here), its outputs, how output shapes follow from input shapes, and
whether it needs the gradient from above (a loss does not: ``need_top_grad=False``).  The
*operator* class (``CustomOp``) computes: ``forward`` and ``backward`` receive NDArrays and
store results with ``self.assign``.  ``mx.sym.Custom(..., op_type='name')`` puts it in a graph,
``mx.nd.Custom`` calls it on arrays.

The engine runs each call as one operation, like any built-in operator; the ``mx.nd`` calls
inside ``forward`` run before that operation completes.  Here the forward pass uses NDArray
operations (so it runs on the GPU with ``--ctx gpu``) and the backward pass uses NumPy.

Run::

    python tutorials/custom_op.py --epochs 2               # about 97% test accuracy
    python tutorials/custom_op.py --ctx gpu --max-batches 50
"""

from __future__ import annotations

import logging

import _common
import numpy as np

import lazynd as mx
import lazynd_sym as sym


class Softmax(mx.operator.CustomOp):
    """Softmax in forward; in backward, the gradient of the cross-entropy loss: p - onehot(label)."""

    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0]
        e = mx.nd.exp(x - mx.nd.max(x, axis=1, keepdims=True))
        self.assign(out_data[0], req[0], e / mx.nd.sum(e, axis=1, keepdims=True))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        label = in_data[1].asnumpy().astype(np.int64)
        grad = out_data[0].asnumpy()
        grad[np.arange(label.shape[0]), label] -= 1.0
        self.assign(in_grad[0], req[0], mx.nd.array(grad / label.shape[0], ctx=in_grad[0].context))
        self.assign(in_grad[1], req[1], 0)


@mx.operator.register("tutorial_softmax")
class SoftmaxProp(mx.operator.CustomOpProp):
    def __init__(self) -> None:
        super().__init__(need_top_grad=False)  # a loss: backward starts here

    def list_arguments(self):
        return ["data", "label"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shape):
        data_shape = in_shape[0]
        return [data_shape, [data_shape[0]]], [data_shape], []

    def create_operator(self, ctx, shapes, dtypes):
        return Softmax()


def mlp() -> sym.Symbol:
    net = sym.Flatten(sym.Variable("data"))
    net = sym.Activation(sym.FullyConnected(net, num_hidden=128, name="fc1"), act_type="relu")
    net = sym.FullyConnected(net, num_hidden=10, name="fc2")
    # the label variable is created as softmax_label, the name MNISTIter's labels bind to
    return sym.Custom(data=net, op_type="tutorial_softmax", name="softmax")


def main(argv: list[str] | None = None) -> float:
    parser = _common.base_parser(__doc__.splitlines()[0], epochs=2, lr=0.1, lr_halve_epochs=2, several_devices=False)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    mx.random.seed(args.seed)
    train, test = _common.mnist_iters(args, "local")
    model = mx.model.FeedForward(
        mlp(),
        ctx=_common.contexts(args),
        num_epoch=args.epochs,
        learning_rate=args.lr,
        momentum=0.9,
        initializer=mx.init.Xavier(),
        # the loss divides by the batch size itself: the optimizer must not do it again
        rescale_grad=1.0,
    )
    model.fit(train, eval_data=test, eval_metric="acc")
    accuracy = model.score(test)
    print(f"test accuracy: {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
