"""Train a 784-128-64-10 MLP on MNIST with the low-level executor API.

This is the loop that ``FeedForward.fit`` hides: bind the network once with
``simple_bind``, then for every batch copy the data in, run ``forward`` and
``backward``, and update each weight in place from its gradient with the
fused ``sgd_mom_update``.  A second executor, bound for a larger test batch,
shares the training executor's weights, so it always sees the latest ones.

Run::

    python tutorials/mnist_mlp.py --epochs 10           # about 98% test accuracy
    python tutorials/mnist_mlp.py --ctx gpu --max-batches 50
    mpiexec -n 2 python tutorials/mnist_mlp.py --kv-store dist_sync
"""

from __future__ import annotations

import argparse
import logging
import time

import _common

import lazynd as mx
import lazynd_sym as sym


def mlp() -> sym.Symbol:
    data = sym.Variable("data")
    net = sym.Flatten(data, name="flatten")
    net = sym.FullyConnected(net, num_hidden=128, name="fc1")
    net = sym.Activation(net, act_type="relu", name="relu1")
    net = sym.FullyConnected(net, num_hidden=64, name="fc2")
    net = sym.Activation(net, act_type="relu", name="relu2")
    net = sym.FullyConnected(net, num_hidden=10, name="fc3")
    return sym.SoftmaxOutput(net, name="softmax")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = _common.base_parser(__doc__.splitlines()[0], epochs=10, lr=0.1, lr_halve_epochs=2, several_devices=False)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--wd", type=float, default=1e-4)
    return parser.parse_args(argv)


def evaluate(test_exec: object, test_iter: mx.io.DataIter, max_batches: int | None) -> float:
    metric = mx.metric.Accuracy()
    test_iter.reset()
    for nbatch, batch in enumerate(test_iter):
        if max_batches is not None and nbatch == max_batches:
            break
        outputs = test_exec.forward(is_train=False, data=batch.data[0])
        keep = batch.data[0].shape[0] - batch.pad
        metric.update([batch.label[0].asnumpy()[:keep]], [outputs[0].asnumpy()[:keep]])
    return metric.get()[1]


def main(argv: list[str] | None = None) -> float:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    (ctx,) = _common.contexts(args)
    mx.random.seed(args.seed)
    kvstore = _common.create_kvstore(args)
    _, num_workers = _common.worker_of(kvstore)
    # one device sums nothing locally: only a distributed store is used here
    store = None if isinstance(kvstore, str) else kvstore
    train_iter, test_iter = _common.mnist_iters(args, kvstore, test_batch_size=1000, resize=False)

    net = mlp()
    param_names = [n for n in net.list_arguments() if n not in ("data", "softmax_label")]
    train_exec = net.simple_bind(
        ctx,
        grad_req={n: "write" for n in param_names},
        data=(args.batch_size, 1, 28, 28),
        softmax_label=(args.batch_size,),
    )
    # the test executor has other input shapes but the same parameter arrays (those named in
    # shared_arg_names: shared_exec alone shares none, as in MXNet)
    test_exec = net.simple_bind(
        ctx,
        grad_req="null",
        shared_arg_names=param_names,
        shared_exec=train_exec,
        data=(1000, 1, 28, 28),
        softmax_label=(1000,),
    )

    initializer = mx.init.Xavier()
    for name in param_names:
        initializer(name, train_exec.arg_dict[name])
    weights = [train_exec.arg_dict[name] for name in param_names]
    grads = [train_exec.grad_dict[name] for name in param_names]
    if store is not None:
        store.init(param_names, weights)
        store.pull(param_names, out=weights)  # every worker starts from rank 0's weights
    momenta = {name: mx.nd.zeros(train_exec.arg_dict[name].shape, ctx=ctx) for name in param_names}

    accuracy = float("nan")
    for epoch in range(args.epochs):
        tic = time.perf_counter()
        train_metric = mx.metric.Accuracy()
        learning_rate = args.lr * 0.5 ** (epoch // args.lr_halve_epochs)
        train_iter.reset()
        for nbatch, batch in enumerate(train_iter):
            if args.max_batches is not None and nbatch == args.max_batches:
                break
            train_exec.forward(is_train=True, data=batch.data[0], softmax_label=batch.label[0])
            train_exec.backward()
            if store is not None:
                # the sum of every worker's gradients comes back into grads
                store.push(param_names, grads)
                store.pull(param_names, out=grads)
            for weight, grad, name in zip(weights, grads, param_names, strict=True):
                mx.nd.sgd_mom_update(
                    weight,
                    grad,
                    momenta[name],
                    out=weight,
                    lr=learning_rate,
                    momentum=args.momentum,
                    wd=args.wd,
                    rescale_grad=1.0 / (args.batch_size * num_workers),
                )
            train_metric.update([batch.label[0]], [train_exec.outputs[0]])
        elapsed = time.perf_counter() - tic
        accuracy = evaluate(test_exec, test_iter, args.max_batches)
        logging.info(
            "Epoch[%d] train-accuracy=%.4f test-accuracy=%.4f time=%.2fs",
            epoch,
            train_metric.get()[1],
            accuracy,
            elapsed,
        )
    print(f"test accuracy: {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
