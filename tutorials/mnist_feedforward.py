"""Train the MNIST MLP with ``FeedForward.fit``: progress bar, logging, checkpoints.

The same 784-128-64-10 network as ``mnist_mlp.py``, but the training loop,
the metric, validation and checkpointing are ``FeedForward``'s.  Data come
through a ``PrefetchingIter``, so the next batch is prepared while the
current one trains.  Prints the final test accuracy.

Run::

    python tutorials/mnist_feedforward.py                  # 10 epochs, ~98%
    python tutorials/mnist_feedforward.py --max-batches 20 --epochs 1
"""

from __future__ import annotations

import argparse
import logging
import os

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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ctx", choices=["cpu", "gpu"], default="cpu")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--lr-halve-epochs", type=int, default=2, help="halve the learning rate every N epochs")
    parser.add_argument("--data-dir", default=None, help="folder holding mnist/ (default: $LAZYND_DATA_DIR)")
    parser.add_argument("--max-batches", type=int, default=None, help="batches per epoch (and for the test pass)")
    parser.add_argument(
        "--model-prefix",
        default=os.path.join("checkpoints", "mnist_mlp"),
        help="checkpoints go to PREFIX-symbol.json and PREFIX-%%04d.params; '' for none",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> float:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    mx.random.seed(args.seed)
    ctx = mx.gpu(0) if args.ctx == "gpu" else mx.cpu()

    train: mx.io.DataIter = mx.io.MNISTIter(
        batch_size=args.batch_size, shuffle=True, seed=args.seed, data_dir=args.data_dir, train=True
    )
    test: mx.io.DataIter = mx.io.MNISTIter(
        batch_size=args.batch_size, shuffle=False, data_dir=args.data_dir, train=False
    )
    if args.max_batches is not None:
        train = mx.io.ResizeIter(train, args.max_batches)
        test = mx.io.ResizeIter(test, min(args.max_batches, 10_000 // args.batch_size))
    train = mx.io.PrefetchingIter(train)

    batches_per_epoch = args.max_batches or 60_000 // args.batch_size
    schedule = mx.lr_scheduler.FactorScheduler(step=batches_per_epoch * args.lr_halve_epochs, factor=0.5)
    callbacks = []
    if args.model_prefix:
        os.makedirs(os.path.dirname(os.path.abspath(args.model_prefix)), exist_ok=True)
        callbacks.append(mx.callback.do_checkpoint(args.model_prefix))

    model = mx.model.FeedForward(
        mlp(),
        ctx=ctx,
        num_epoch=args.epochs,
        optimizer="sgd",
        initializer=mx.init.Xavier(),
        learning_rate=args.lr,
        lr_scheduler=schedule,
        momentum=0.9,
        wd=1e-4,
        progress_bar=not args.no_progress,
    )
    model.fit(
        train,
        eval_data=test,
        eval_metric="acc",
        epoch_end_callback=callbacks,
        batch_end_callback=mx.callback.Speedometer(args.batch_size, 200),
    )
    accuracy = model.score(test)
    print(f"test accuracy: {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
