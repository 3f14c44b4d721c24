"""A batch whose forward fails at run time is reported once; training then goes on as if that
batch had been left out (the skipped update leaves the weights and optimizer states as they were)."""

from __future__ import annotations

import numpy as np

import lazynd as mx


class _FailOnNegative(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):  # type: ignore[no-untyped-def]
        if (in_data[0].asnumpy() < 0).any():
            raise ValueError("a negative input")
        self.assign(out_data[0], req[0], in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):  # type: ignore[no-untyped-def]
        self.assign(in_grad[0], req[0], out_grad[0])


@mx.operator.register("test_fail_on_negative")
class _FailOnNegativeProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):  # type: ignore[no-untyped-def]
        return _FailOnNegative()


def _batches() -> list[mx.io.DataBatch]:
    rng = np.random.default_rng(7)
    batches = []
    for i in range(4):
        data = rng.random((5, 3)).astype(np.float32)
        if i == 1:
            data[2, 0] = -1.0
        label = (data.sum(axis=1) > 1.5).astype(np.float32)
        batches.append(mx.io.DataBatch([mx.nd.array(data)], [mx.nd.array(label)]))
    return batches


def _train(batches: list[mx.io.DataBatch]) -> tuple[list[str], np.ndarray]:
    net = mx.sym.Custom(mx.sym.Variable("data"), op_type="test_fail_on_negative")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net, num_hidden=2, name="fc"), name="softmax")
    module = mx.mod.Module(net)
    module.bind([("data", (5, 3))], [("softmax_label", (5,))])
    weight = np.arange(6, dtype=np.float32).reshape(2, 3) / 10
    module.init_params(arg_params={"fc_weight": mx.nd.array(weight), "fc_bias": mx.nd.zeros(2)})
    module.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5, "momentum": 0.9})
    outcomes = []
    for batch in batches:
        try:
            module.forward_backward(batch)
            module.update()
            module.get_outputs()[0].asnumpy()
            outcomes.append("ok")
        except mx.LazyNDError as err:
            outcomes.append(str(err))
    return outcomes, module.get_params()[0]["fc_weight"].asnumpy()


def test_training_goes_on_after_a_batch_whose_forward_failed_as_if_it_had_been_left_out(engine_name: str) -> None:
    # the skipped update marked the weights failed, and every later batch failed with that error
    batches = _batches()
    outcomes, weight = _train(batches)
    assert outcomes[0] == "ok" and outcomes[2:] == ["ok", "ok"], outcomes
    assert "a negative input" in outcomes[1]
    mx.nd.waitall()  # reported once: not again
    _, weight_without_the_batch = _train([batches[0], *batches[2:]])
    np.testing.assert_allclose(weight, weight_without_the_batch, rtol=1e-6)
