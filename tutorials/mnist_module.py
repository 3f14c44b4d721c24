"""Train the MNIST MLP with the Module API (``mx.mod.Module``), checkpoint it, reload it.

The same 784-128-64-10 network as ``mnist_feedforward.py``, trained the way
MXNet programs after 0.9 do: a ``Module`` names the inputs of the symbol
(``data_names``, ``label_names``) and the devices; ``fit`` binds it to the
iterator's shapes, initializes the parameters, creates the optimizer and
trains, scoring the test set after every epoch.  Each epoch is saved as an
MXNet checkpoint with the optimizer states (``PREFIX-symbol.json``,
``PREFIX-%04d.params``, ``PREFIX-%04d.states``); at the end the last one is
loaded back into a fresh module and scored again.

Run::

    python tutorials/mnist_module.py                        # 10 epochs, ~98%
    python tutorials/mnist_module.py --max-batches 20 --epochs 1
    python tutorials/mnist_module.py --num-devices 2        # data parallel on cpu(0), cpu(1)
"""

from __future__ import annotations

import argparse
import logging
import os
from typing import Any

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
        default=os.path.join("checkpoints", "mnist_module"),
        help="checkpoints go to PREFIX-symbol.json, PREFIX-%%04d.params and PREFIX-%%04d.states; '' for none",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> float:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    mx.random.seed(args.seed)
    kvstore = _common.create_kvstore(args)
    rank, _ = _common.worker_of(kvstore)
    train, test = _common.mnist_iters(args, kvstore)

    contexts = _common.contexts(args)
    mod = mx.mod.Module(mlp(), data_names=["data"], label_names=["softmax_label"], context=contexts)

    def save_epoch(epoch: int, symbol: Any, arg_params: dict, aux_params: dict) -> None:
        # every worker holds the same weights; one writes them
        if args.model_prefix and rank == 0:
            mod.save_checkpoint(args.model_prefix, epoch + 1, save_optimizer_states=True)

    if args.model_prefix:
        os.makedirs(os.path.dirname(os.path.abspath(args.model_prefix)), exist_ok=True)
    mod.fit(
        train,
        eval_data=test,
        eval_metric="acc",
        num_epoch=args.epochs,
        kvstore=kvstore,
        optimizer="sgd",
        optimizer_params={
            "learning_rate": args.lr,
            "momentum": 0.9,
            "wd": 1e-4,
            "lr_scheduler": _common.lr_schedule(args, kvstore),
        },
        initializer=mx.init.Xavier(),
        batch_end_callback=mx.callback.Speedometer(args.batch_size, 200),
        epoch_end_callback=save_epoch,
    )
    ((_, accuracy),) = mod.score(test, "acc")
    print(f"test accuracy: {accuracy:.4f}")

    if args.model_prefix and rank == 0:
        # a fresh module from the last checkpoint (the optimizer states would let training resume exactly)
        loaded = mx.mod.Module.load(args.model_prefix, args.epochs, load_optimizer_states=True, context=contexts)
        loaded.bind(data_shapes=test.provide_data, label_shapes=test.provide_label, for_training=False)
        ((_, reloaded),) = loaded.score(test, "acc")
        print(f"reloaded test accuracy: {reloaded:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
