"""Symbol JSON of control flow: ``_foreach``/``_while_loop``/``_cond`` nodes with ``subgraphs`` (lazynd_sym.control_flow_json).

The two documents below were written by MXNet 1.9.1 (``Symbol.tojson``) for
``foreach(lambda d, s: (tanh(d * w + s[0]), [d * 2 + s[0]]), x, [h])`` and
``while_loop(lambda i, s: i <= 3, lambda i, s: ([i + s], [i + 1, s * w]), [i, s], max_iterations=4)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import FormatError

S = mx.sym

MXNET_FOREACH = '{"nodes":[{"op":"null","name":"x","inputs":[]},{"op":"null","name":"h","inputs":[]},{"op":"null","name":"w","inputs":[]},{"op":"_foreach","name":"_foreach0","attrs":{"in_data_locs":"[0]","in_state_locs":"[2]","num_args":"4","num_out_data":"1","num_outputs":"2","remain_locs":"[1]"},"inputs":[[0,0,0],[1,0,0],[2,0,0]],"subgraphs":[{"nodes":[{"op":"null","name":"x-0","attrs":{"__subgraph_name__":"foreach0"},"inputs":[]},{"op":"null","name":"w","inputs":[]},{"op":"elemwise_mul","name":"_mul0","attrs":{"__subgraph_name__":"foreach0"},"inputs":[[0,0,0],[1,0,0]]},{"op":"null","name":"h-0","attrs":{"__subgraph_name__":"foreach0"},"inputs":[]},{"op":"elemwise_add","name":"_plus0","attrs":{"__subgraph_name__":"foreach0"},"inputs":[[2,0,0],[3,0,0]]},{"op":"tanh","name":"tanh0","attrs":{"__subgraph_name__":"foreach0"},"inputs":[[4,0,0]]},{"op":"_mul_scalar","name":"_mulscalar0","attrs":{"__subgraph_name__":"foreach0","scalar":"2"},"inputs":[[0,0,0]]},{"op":"elemwise_add","name":"_plus1","attrs":{"__subgraph_name__":"foreach0"},"inputs":[[6,0,0],[3,0,0]]}],"arg_nodes":[0,1,3],"node_row_ptr":[0,1,2,3,4,5,6,7,8],"heads":[[5,0,0],[7,0,0]]}]}],"arg_nodes":[0,1,2],"node_row_ptr":[0,1,2,3,5],"heads":[[3,0,0],[3,1,0]],"attrs":{"mxnet_version":["int",10901]}}'
MXNET_WHILE_LOOP = '{"nodes":[{"op":"null","name":"i","inputs":[]},{"op":"null","name":"s","inputs":[]},{"op":"null","name":"w","inputs":[]},{"op":"_while_loop","name":"_while_loop0","attrs":{"cond_input_locs":"[0]","func_input_locs":"[0, 1, 2]","func_var_locs":"[0, 1]","max_iterations":"4","num_args":"5","num_out_data":"1","num_outputs":"3"},"inputs":[[0,0,0],[1,0,0],[2,0,0]],"subgraphs":[{"nodes":[{"op":"null","name":"i-0","attrs":{"__subgraph_name__":"while_loop_cond0"},"inputs":[]},{"op":"_lesser_equal_scalar","name":"_lesser_equal_scalar0","attrs":{"__subgraph_name__":"while_loop_cond0","scalar":"3"},"inputs":[[0,0,0]]}],"arg_nodes":[0],"node_row_ptr":[0,1,2],"heads":[[1,0,0]]},{"nodes":[{"op":"null","name":"i-0","attrs":{"__subgraph_name__":"while_loop_func0"},"inputs":[]},{"op":"null","name":"s-0","attrs":{"__subgraph_name__":"while_loop_func0"},"inputs":[]},{"op":"elemwise_add","name":"_plus2","attrs":{"__subgraph_name__":"while_loop_func0"},"inputs":[[0,0,0],[1,0,0]]},{"op":"_plus_scalar","name":"_plusscalar0","attrs":{"__subgraph_name__":"while_loop_func0","scalar":"1"},"inputs":[[0,0,0]]},{"op":"null","name":"w","inputs":[]},{"op":"elemwise_mul","name":"_mul1","attrs":{"__subgraph_name__":"while_loop_func0"},"inputs":[[1,0,0],[4,0,0]]}],"arg_nodes":[0,1,4],"node_row_ptr":[0,1,2,3,4,5,6],"heads":[[2,0,0],[3,0,0],[5,0,0]]}]}],"arg_nodes":[0,1,2],"node_row_ptr":[0,1,2,3,6],"heads":[[3,0,0],[3,1,0],[3,2,0]],"attrs":{"mxnet_version":["int",10901]}}'


def _run(symbol: Any, arrays: dict[str, np.ndarray]) -> list[np.ndarray]:
    executor = symbol.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in arrays.items()})
    return [o.asnumpy() for o in executor.forward()]


def _nested_foreach() -> Any:
    w = S.var("w")
    scale = w * 2  # an outer expression the bodies close over

    def inner(d: Any, s: list) -> tuple:
        return d * scale + s[0], [d * scale + s[0]]

    def outer(d: Any, s: list) -> tuple:
        out, states = S.contrib.foreach(inner, d, s)
        return out, [states[0] + 1]

    out, states = S.contrib.foreach(outer, S.var("x"), [S.var("h")])
    return S.Group([out] + states)


def _while_loop() -> Any:
    outs, final = S.contrib.while_loop(
        lambda i, s: S.sum(s) < 10, lambda i, s: ([s * S.var("w"), i], [i + 1, s * 2]), [S.var("i"), S.var("s")], 5
    )
    return S.Group(outs + final)


def _cond() -> Any:
    a, b = S.var("a"), S.var("b")
    return S.Group(S.contrib.cond(S.sum(a) < 0, lambda: [a * b, a], lambda: [a - b, b * 3]))


CASES = {
    "nested foreach": (_nested_foreach, {"x": (3, 2, 4), "h": (4,), "w": (4,)}),
    "while_loop": (_while_loop, {"i": (1,), "s": (2,), "w": (2,)}),
    "cond": (_cond, {"a": (2, 3), "b": (2, 3)}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_control_flow_round_trips_through_json_and_computes_the_same(case: str) -> None:
    make, shapes = CASES[case]
    symbol = make()
    text = symbol.tojson()
    loaded = S.load_json(text)
    assert loaded.tojson() == text
    assert loaded.list_arguments() == symbol.list_arguments()
    assert loaded.list_outputs() == symbol.list_outputs()
    rng = np.random.RandomState(0)
    arrays = {k: rng.uniform(0.5, 1.5, shape).astype("f") for k, shape in shapes.items()}
    for got, want in zip(_run(loaded, arrays), _run(symbol, arrays), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_mxnets_foreach_json_reads_and_runs() -> None:
    symbol = S.load_json(MXNET_FOREACH)
    assert symbol.list_arguments() == ["x", "h", "w"]
    assert symbol.list_outputs() == ["_foreach0_output0", "_foreach0_output1"]
    x, h, w = np.arange(6, dtype="f").reshape(3, 2) / 6, np.array([0.1, 0.2], "f"), np.array([0.5, -1], "f")
    out, state = _run(symbol, {"x": x, "h": h, "w": w})
    rows, s = [], h
    for t in range(3):
        rows.append(np.tanh(x[t] * w + s))
        s = x[t] * 2 + s
    np.testing.assert_allclose(out, np.stack(rows), rtol=1e-6)
    np.testing.assert_allclose(state, s, rtol=1e-6)


def test_mxnets_while_loop_json_reads_and_runs() -> None:
    symbol = S.load_json(MXNET_WHILE_LOOP)
    assert symbol.list_arguments() == ["i", "s", "w"]
    out, i, s = _run(symbol, {"i": np.array([1], "f"), "s": np.array([1], "f"), "w": np.array([2], "f")})
    assert out.ravel().tolist() == [2, 4, 7, 0]  # i + s for i = 1, 2, 3; the last row is padding
    assert (i.item(), s.item()) == (4, 8)


def test_a_loop_node_without_its_subgraph_is_refused_naming_the_node() -> None:
    document = MXNET_FOREACH.replace(',"subgraphs":[', ',"bodies":[')
    with pytest.raises(FormatError, match=r"node 3 \('_foreach0'\): \(_foreach\) expected 1 graph\(s\) in 'subgraphs'"):
        S.load_json(document)
