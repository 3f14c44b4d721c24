"""Train the MNIST MLP with ``FeedForward.fit``: progress bar, logging, checkpoints.

The same 784-128-64-10 network as ``mnist_mlp.py``, but the training loop,
the metric, validation and checkpointing are ``FeedForward``'s.  Data come
through a ``PrefetchingIter``, so the next batch is prepared while the
current one trains.  Prints the final test accuracy.

Run::

    python tutorials/mnist_feedforward.py                  # 10 epochs, ~98%
    python tutorials/mnist_feedforward.py --max-batches 20 --epochs 1
    python tutorials/mnist_feedforward.py --num-devices 2          # data parallel on cpu(0), cpu(1)
    mpiexec -n 2 python tutorials/mnist_feedforward.py --kv-store dist_sync
"""

from __future__ import annotations

import argparse
import logging
import os

import _common

import lazynd as mx
import lazynd_sym as sym


def mlp() -> sym.Symbol:
    net = sym.Flatten(sym.Variable("data"), name="flatten")
    net = sym.FullyConnected(net, num_hidden=128, name="fc1")
    net = sym.Activation(net, act_type="relu", name="relu1")
    net = sym.FullyConnected(net, num_hidden=64, name="fc2")
    net = sym.Activation(net, act_type="relu", name="relu2")
    net = sym.FullyConnected(net, num_hidden=10, name="fc3")
    return sym.SoftmaxOutput(net, name="softmax")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = _common.base_parser(__doc__.splitlines()[0], epochs=10, lr=0.1, lr_halve_epochs=2)
    parser.add_argument(
        "--model-prefix",
        default=os.path.join("checkpoints", "mnist_mlp"),
        help="checkpoints go to PREFIX-symbol.json and PREFIX-%%04d.params; '' for none",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> float:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    mx.random.seed(args.seed)
    kvstore = _common.create_kvstore(args)
    rank, _ = _common.worker_of(kvstore)
    train, test = _common.mnist_iters(args, kvstore)

    callbacks = []
    if args.model_prefix and rank == 0:  # every worker holds the same weights; one writes them
        os.makedirs(os.path.dirname(os.path.abspath(args.model_prefix)), exist_ok=True)
        callbacks.append(mx.callback.do_checkpoint(args.model_prefix))

    model = mx.model.FeedForward(
        mlp(),
        ctx=_common.contexts(args),
        num_epoch=args.epochs,
        optimizer="sgd",
        initializer=mx.init.Xavier(),
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
        epoch_end_callback=callbacks,
        batch_end_callback=mx.callback.Speedometer(args.batch_size, 200),
        kvstore=kvstore,
    )
    accuracy = model.score(test)
    print(f"test accuracy: {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
