"""Planned vs naive bytes of training graphs (the MLP and LeNet at batch 128, an LSTM unrolled 35
steps at batch 32); prints one table."""

from __future__ import annotations

import lazynd as mx
import lazynd_sym as sym
from lazynd.ops import registry


def dense(x: object, name: str, hidden: int, fan_in: int, shapes: dict) -> object:
    if registry.exists("FullyConnected"):
        return sym.FullyConnected(x, num_hidden=hidden, name=name)
    shapes[f"{name}_weight"], shapes[f"{name}_bias"] = (fan_in, hidden), (1, hidden)
    return sym.broadcast_add(sym.dot(x, sym.Variable(f"{name}_weight")), sym.Variable(f"{name}_bias"))


def mlp() -> tuple[object, dict]:
    shapes: dict = {"data": (128, 784)}
    x = sym.relu(dense(sym.Variable("data"), "fc1", 128, 784, shapes))
    x = sym.relu(dense(x, "fc2", 64, 128, shapes))
    return sym.SoftmaxOutput(dense(x, "fc3", 10, 64, shapes), name="softmax"), shapes


def lenet() -> tuple[object, dict]:
    shapes: dict = {"data": (128, 1, 28, 28)}
    x = sym.Variable("data")
    for i, filters in enumerate((20, 50), 1):
        x = sym.Convolution(x, kernel=(5, 5), num_filter=filters, name=f"conv{i}")
        x = sym.Pooling(sym.relu(x), pool_type="max", kernel=(2, 2), stride=(2, 2))
    x = sym.Flatten(x)
    x = sym.relu(dense(x, "fc1", 500, 800, shapes))
    return sym.SoftmaxOutput(dense(x, "fc2", 10, 500, shapes), name="softmax"), shapes


def lstm() -> tuple[object, dict]:
    """An LSTM language model unrolled 35 steps (vocabulary 1000, 200 hidden, batch 32): its four
    shared weights receive 35 gradient terms each."""
    steps, batch = 35, 32
    embed = sym.Embedding(sym.Variable("data"), input_dim=1000, output_dim=200, name="embed")
    cell = mx.rnn.LSTMCell(200, prefix="lstm_")
    outputs, _ = cell.unroll(steps, inputs=embed, layout="NTC", merge_outputs=True)
    pred = sym.FullyConnected(sym.Reshape(outputs, shape=(-1, 200)), num_hidden=1000, name="pred")
    label = sym.Reshape(sym.Variable("softmax_label"), shape=(-1,))
    return sym.SoftmaxOutput(pred, label, name="softmax"), {"data": (batch, steps), "softmax_label": (batch, steps)}


def main() -> None:
    print(f"{'graph (training)':<30}{'naive MB':>10}{'planned MB':>12}{'ratio':>8}")
    for name, build in (("MLP 784-128-64-10", mlp), ("LeNet", lenet), ("LSTM 35 steps", lstm)):
        net, shapes = build()
        reqs = {n: ("null" if n in ("data", "softmax_label") else "write") for n in net.list_arguments()}
        ex = net.simple_bind(mx.cpu(), grad_req=reqs, **shapes)
        print(
            f"{name:<30}{ex.naive_bytes / 2**20:>10.3f}{ex.planned_bytes / 2**20:>12.3f}{ex.planned_bytes / ex.naive_bytes:>8.2f}"
        )


if __name__ == "__main__":
    main()
