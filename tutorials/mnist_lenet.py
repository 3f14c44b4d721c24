"""Train LeNet on MNIST: two convolution/pooling stages, then two dense layers.

``--batchnorm`` adds BatchNorm after each convolution, ``--dropout P`` adds
Dropout before the last layer.  Trains with ``FeedForward`` and SGD with
momentum, the classic recipe for about 99% test accuracy in a few epochs.

Run::

    python tutorials/mnist_lenet.py --epochs 5
    python tutorials/mnist_lenet.py --ctx gpu --batchnorm --dropout 0.5
"""

from __future__ import annotations

import argparse
import logging

import _common

import lazynd as mx
import lazynd_sym as sym


def lenet(batchnorm: bool = False, dropout: float = 0.0) -> sym.Symbol:
    net = sym.Variable("data")
    for stage, filters in ((1, 20), (2, 50)):
        net = sym.Convolution(net, kernel=(5, 5), num_filter=filters, name=f"conv{stage}")
        if batchnorm:
            net = sym.BatchNorm(net, name=f"bn{stage}")
        net = sym.Activation(net, act_type="tanh", name=f"tanh{stage}")
        net = sym.Pooling(net, pool_type="max", kernel=(2, 2), stride=(2, 2), name=f"pool{stage}")
    net = sym.Flatten(net, name="flatten")
    net = sym.FullyConnected(net, num_hidden=500, name="fc1")
    net = sym.Activation(net, act_type="tanh", name="tanh3")
    if dropout > 0:
        net = sym.Dropout(net, p=dropout, name="drop")
    net = sym.FullyConnected(net, num_hidden=10, name="fc2")
    return sym.SoftmaxOutput(net, name="softmax")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = _common.base_parser(__doc__.splitlines()[0], epochs=5, lr=0.05, lr_halve_epochs=1)
    parser.add_argument("--batchnorm", action="store_true")
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--summary", action="store_true", help="print the layer table first")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> float:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    mx.random.seed(args.seed)
    net = lenet(args.batchnorm, args.dropout)
    if args.summary:
        mx.viz.print_summary(net, {"data": (1, 1, 28, 28)})
    kvstore = _common.create_kvstore(args)
    train, test = _common.mnist_iters(args, kvstore)

    model = mx.model.FeedForward(
        net,
        ctx=_common.contexts(args),
        num_epoch=args.epochs,
        optimizer="sgd",
        initializer=mx.init.Xavier(factor_type="in", magnitude=2.34),
        learning_rate=args.lr,
        lr_scheduler=_common.lr_schedule(args, kvstore),
        momentum=0.9,
        wd=1e-4,
        progress_bar=not args.no_progress,
    )
    model.fit(
        mx.io.PrefetchingIter(train),
        eval_data=test,
        eval_metric="acc",
        batch_end_callback=mx.callback.Speedometer(args.batch_size, 100),
        kvstore=kvstore,
    )
    accuracy = model.score(test)
    print(f"test accuracy: {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
