"""infer_shape_partial of a foreach whose length (its data's axis 0) is unknown: the per-step shapes
and the states come back, the length stays 0, as MXNet 1.9.1 reports them (it raised ShapeError:
the length of 'data' along axis 0 is not known)."""

from __future__ import annotations

import pytest

import lazynd as mx

S = mx.sym


def _loop() -> tuple[S.Symbol, list[S.Symbol]]:
    data = S.var("data", shape=(0, 3, 32, 32))
    return S.contrib.foreach(lambda x, states: (x + states[0], [states[0] * 2]), data, [S.var("state")])


def test_the_outputs_keep_an_unknown_length_and_the_state_its_step_shape() -> None:
    outs, states = _loop()
    assert outs.infer_shape_partial() == ([(0, 3, 32, 32), (3, 32, 32)], [(0, 3, 32, 32)], [])
    assert S.Group([outs, *states]).infer_shape_partial()[1] == [(0, 3, 32, 32), (3, 32, 32)]


def test_layers_after_the_loop_see_the_unknown_length_too() -> None:
    outs, _ = _loop()
    net = S.FullyConnected(S.reshape(outs, shape=(-1, 3 * 32 * 32)), num_hidden=7, name="fc")
    assert net.infer_shape_partial() == ([(0, 3, 32, 32), (3, 32, 32), (7, 3072), (7,)], [(0, 7)], [])
    assert S.sum(outs, axis=0).infer_shape_partial()[1] == [(3, 32, 32)]


def test_a_known_length_is_kept_and_the_full_inference_warns_naming_the_data() -> None:
    outs, _ = _loop()
    assert outs.infer_shape_partial(data=(4, 3, 32, 32))[1] == [(4, 3, 32, 32)]
    assert outs.infer_shape(data=(4, 3, 32, 32), state=(3, 32, 32))[1] == [(4, 3, 32, 32)]
    with pytest.warns(UserWarning, match=r"data: \(0, 3, 32, 32\)"):
        assert outs.infer_shape() == (None, None, None)
