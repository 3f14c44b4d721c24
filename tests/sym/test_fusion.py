"""Elementwise fusion at bind: chains become one node, results stay identical, CUDA sources compile."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd_sym.fused_kernel import cuda_source
from lazynd_sym.passes.fuse_elemwise import find_chains

HAS_GPU = mx.num_gpus() > 0
UNARY = [sym.exp, sym.tanh, sym.relu, sym.sigmoid, sym.negative, sym.square, sym.sin]


def fused_names(ex):
    graph = ex._graph
    return [graph.nodes[i].attrs["members"] for i in ex._forward_order + ex._backward_order
            if graph.nodes[i].op.name == "_fused_elemwise"]  # fmt: skip


def bind_and_run(net, shapes, monkeypatch, fuse, ctx=None, seed=0):
    monkeypatch.setenv("LAZYND_SYM_FUSION", "1" if fuse else "0")
    ex = net.simple_bind(ctx or mx.cpu(), **{k: v for k, v in shapes.items() if k in net.list_arguments()})
    rng = np.random.default_rng(seed)
    for arr in ex.arg_dict.values():
        arr[:] = rng.uniform(-1.5, 1.5, arr.shape).astype(np.float32)
    ex.forward(is_train=True)
    ex.backward([mx.nd.ones(o.shape, ctx=o.context) for o in ex.outputs])
    return ex, [o.asnumpy() for o in ex.outputs], {k: g.asnumpy() for k, g in ex.grad_dict.items()}


def random_graph(rng, n_ops=8):
    values = [sym.Variable("x"), sym.Variable("y")]
    for _ in range(n_ops):
        kind = rng.integers(0, 3)
        last = values[-1]
        if kind == 0:
            values.append(UNARY[rng.integers(len(UNARY))](last))
        elif kind == 1:
            other = values[rng.integers(len(values))]
            values.append(
                [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b, sym._maximum][rng.integers(4)](last, other)
            )
        else:
            values.append([lambda a: a * 0.5, lambda a: a + 2, lambda a: 1 - a, lambda a: a / 3][rng.integers(4)](last))
    return sym.Group([values[-1], values[len(values) // 2]]) if rng.integers(2) else values[-1]


def test_chain_of_six_ops_fuses(monkeypatch):
    x = sym.Variable("x")
    net = sym.tanh(sym.relu(sym.exp(x * 0.5) + 1) * 2)
    ex, _, _ = bind_and_run(net, {"x": (16,)}, monkeypatch, fuse=True)
    assert len(ex._forward_order) < 5
    assert any(len(members) >= 3 for members in fused_names(ex))


def test_unfused_bind_keeps_every_node(monkeypatch):
    net = sym.tanh(sym.relu(sym.exp(sym.Variable("x") * 0.5) + 1) * 2)
    ex, _, _ = bind_and_run(net, {"x": (16,)}, monkeypatch, fuse=False)
    assert len(ex._forward_order) == 6 and fused_names(ex) == []


def test_inference_chain_fuses_completely(monkeypatch):
    monkeypatch.setenv("LAZYND_SYM_FUSION", "1")
    net = sym.tanh(sym.relu(sym.exp(sym.Variable("x") * 0.5) + 1) * 2)
    ex = net.simple_bind(mx.cpu(), grad_req="null", x=(8,))
    assert len(ex._forward_order) == 1
    v = np.linspace(-2, 2, 8).astype(np.float32)
    expected = np.tanh(np.maximum(np.exp(v * 0.5) + 1, 0) * 2)
    np.testing.assert_allclose(ex.forward(x=mx.nd.array(v))[0].asnumpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("seed", range(12))
def test_fused_and_unfused_give_identical_results_on_random_graphs(seed, monkeypatch):
    net = random_graph(np.random.default_rng(seed))
    shapes = {"x": (3, 5), "y": (3, 5)}
    _, out_f, grads_f = bind_and_run(net, shapes, monkeypatch, fuse=True, seed=seed)
    _, out_u, grads_u = bind_and_run(net, shapes, monkeypatch, fuse=False, seed=seed)
    for a, b in zip(out_f, out_u, strict=True):
        np.testing.assert_array_equal(a, b)
    for name in grads_u:
        np.testing.assert_array_equal(grads_f[name], grads_u[name])


def test_intermediates_read_by_backward_are_not_fused_away(monkeypatch):
    net = sym.exp(sym.Variable("x"), name="e") * 2  # exp's gradient reads exp's output
    assert [[n.op.name for n in c] for c in find_chains(net._outputs)] == [["exp", "_mul_scalar"]]
    ex, _, grads = bind_and_run(net, {"x": (4,)}, monkeypatch, fuse=True)
    assert all("e" not in members for members in fused_names(ex))
    v = ex.arg_dict["x"].asnumpy()
    np.testing.assert_allclose(grads["x"], 2 * np.exp(v), rtol=1e-6)


def test_chain_does_not_fuse_through_a_head():
    x = sym.Variable("x")
    y = sym.exp(x)
    chains = find_chains(sym.Group([sym.relu(y * 2), y])._outputs)
    assert [[n.op.name for n in c] for c in chains] == [["_mul_scalar", "relu"]]


def test_debug_str_lists_fused_members(monkeypatch):
    net = sym.relu(sym.exp(sym.Variable("x"), name="e") * 3, name="r")
    ex, _, _ = bind_and_run(net, {"x": (4,)}, monkeypatch, fuse=True)
    text = ex.debug_str()
    assert "_fused_elemwise" in text and "[fused: " in text


def test_integer_chains_run_the_members_kernels(monkeypatch):
    monkeypatch.setenv("LAZYND_SYM_FUSION", "1")
    x = sym.Variable("x", dtype="int32")
    ex = ((x * 3 + 1) % 4).simple_bind(mx.cpu(), grad_req="null", type_dict={"x": "int32"}, x=(6,))
    assert len(ex._forward_order) == 1
    v = np.arange(-3, 3, dtype=np.int32)
    np.testing.assert_array_equal(ex.forward(x=mx.nd.array(v, dtype="int32"))[0].asnumpy(), (v * 3 + 1) % 4)


def test_fusion_stays_within_one_device(monkeypatch):
    monkeypatch.setenv("LAZYND_SYM_FUSION", "1")
    x = sym.Variable("x")
    with sym.AttrScope(ctx_group="far"):
        y = sym.exp(x * 2)
    z = sym.relu(y + 1)  # runs on "far" too (its input does)
    w = sym.tanh(z, ctx_group="near")
    ex = w.simple_bind(mx.cpu(0), grad_req="null", group2ctx={"far": mx.cpu(1), "near": mx.cpu(0)}, x=(4,))
    graph = ex._graph
    for i in ex._forward_order:
        node = graph.nodes[i]
        if node.op.name == "_fused_elemwise":
            assert graph.attrs["context"][i] == mx.cpu(1) and "tanh0" not in node.attrs["members"]
    v = np.linspace(-1, 1, 4).astype(np.float32)
    np.testing.assert_allclose(ex.forward(x=mx.nd.array(v))[0].asnumpy(), np.tanh(np.maximum(np.exp(v * 2) + 1, 0)),
                               rtol=1e-6)  # fmt: skip


# -- generated CUDA sources ------------------------------------------------------------------------
def chains_for_codegen():
    x, y = sym.Variable("x"), sym.Variable("y")
    nets = [
        sym.tanh(sym.relu(sym.exp(x * 0.5) + 1) * 2),
        sym.sigmoid(sym._maximum(x, y) - x * y) / 3,
        sym.clip(sym.square(x) + y, a_min=-1, a_max=1) ** 2,
        2 - sym.Activation(sym.negative(x), act_type="softrelu"),
        sym._backward_relu(sym.sin(x), y) + sym.abs(y),
    ]
    return [chain for net in nets for chain in find_chains(net._outputs)]


def test_codegen_covers_several_chains():
    assert len(chains_for_codegen()) >= 5


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_generated_cuda_sources_compile_with_nvrtc(dtype):
    pytest.importorskip("cupy")
    from lazynd.backend.cuda.check_kernels import _nvrtc_compile
    from lazynd_sym.passes.fuse_elemwise import _fused_node

    try:
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
    except Exception as err:  # no NVRTC library installed
        pytest.skip(f"NVRTC is not available: {err}")
    for chain in chains_for_codegen():
        node = _fused_node(chain, {id(c): c for n in chain for c, _ in n.inputs})
        name, code, _ = cuda_source(node.attrs["steps"], len(node.inputs), dtype)
        assert name.startswith("lazynd_fused_") and name.endswith(dtype)
        _nvrtc_compile(code, name, ("--std=c++14",), "compute_80", ())


def test_generated_source_passes_scalars_as_arguments():
    x = sym.Variable("x")
    a = _steps_source(sym.relu(x * 0.5 + 1))
    b = _steps_source(sym.relu(x * 7.0 + 3))
    assert a[0] == b[0] and a[1] == b[1] and a[2] != b[2]  # one kernel serves both


def _steps_source(net):
    from lazynd_sym.passes.fuse_elemwise import _fused_node

    (chain,) = find_chains(net._outputs)
    node = _fused_node(chain, {id(c): c for n in chain for c, _ in n.inputs})
    return cuda_source(node.attrs["steps"], len(node.inputs), "float32")


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU with CuPy (none visible)")
@pytest.mark.parametrize("seed", range(4))
def test_fused_gpu_matches_unfused_cpu(seed, monkeypatch):
    net = random_graph(np.random.default_rng(seed))
    shapes = {"x": (3, 5), "y": (3, 5)}
    _, out_g, grads_g = bind_and_run(net, shapes, monkeypatch, fuse=True, ctx=mx.gpu(0), seed=seed)
    _, out_c, grads_c = bind_and_run(net, shapes, monkeypatch, fuse=False, seed=seed)
    for a, b in zip(out_g, out_c, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    for name in grads_c:
        np.testing.assert_allclose(grads_g[name], grads_c[name], rtol=1e-4, atol=1e-5)


def test_chunked_cpu_path_matches_unfused(monkeypatch):
    import lazynd_sym.fused_kernel as fused_kernel

    monkeypatch.setattr(fused_kernel, "CPU_CHUNK_FROM", 64)
    monkeypatch.setattr(fused_kernel, "CPU_CHUNK", 48)  # 1000 elements: 20 full chunks and a partial one
    x, y = sym.Variable("x"), sym.Variable("y")
    net = sym.tanh(sym.relu((x * 0.5 + y) * 3 - 1) * y)
    shapes = {"x": (10, 100), "y": (10, 100)}
    ex, out_f, grads_f = bind_and_run(net, shapes, monkeypatch, fuse=True)
    assert fused_names(ex)
    _, out_u, grads_u = bind_and_run(net, shapes, monkeypatch, fuse=False)
    np.testing.assert_array_equal(out_f[0], out_u[0])
    for name in grads_u:
        np.testing.assert_array_equal(grads_f[name], grads_u[name])
