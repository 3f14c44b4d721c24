"""print_summary and plot_network."""

from __future__ import annotations

import io
import shutil

import pytest

import lazynd_sym as sym
from lazynd.errors import ArgumentTypeError, ArgumentValueError, LazyNDError
from lazynd_sym.visualization import plot_network, print_summary


def _lenet_head() -> sym.Symbol:
    net = sym.Convolution(sym.Variable("data"), kernel=(5, 5), num_filter=20, name="conv1")
    net = sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    net = sym.FullyConnected(sym.Flatten(net, name="flat"), num_hidden=10, name="fc")
    return sym.SoftmaxOutput(net, name="softmax")


def test_summary_counts_parameters_per_layer_and_total() -> None:
    out = io.StringIO()
    total = print_summary(_lenet_head(), {"data": (1, 1, 28, 28)}, file=out)
    assert total == 20 * 25 + 20 + 10 * 2880 + 10
    text = out.getvalue()
    assert "conv1(Convolution)" in text and "20x24x24" in text and "520" in text
    assert "pool1(Pooling)" in text and "20x12x12" in text
    assert f"Total params: {total}" in text


def test_plot_network_gives_dot_with_layers_and_shaped_edges() -> None:
    dot = plot_network(_lenet_head(), shape={"data": (1, 1, 28, 28)}).source
    assert dot.startswith('digraph "plot" {')
    assert '"conv1" [' in dot and "Convolution\\n5x5/1, 20" in dot
    assert '"pool1" -> "conv1" [label="20x24x24"' in dot
    assert "conv1_weight" not in dot


def test_plot_network_warns_of_layers_sharing_a_name() -> None:
    # two layers named "fc" merge into one box and may draw a cycle: MXNet 1.9.1 warns, naming them
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=8, name="fc")
    net = sym.FullyConnected(sym.Activation(net, act_type="relu", name="relu"), num_hidden=2, name="fc")
    with pytest.warns(RuntimeWarning, match="multiple variables with the same name") as record:
        plot_network(net, shape={"data": (4, 6)})
    assert len(record) == 1
    assert "Repeated names: fc,fc_bias,fc_weight" in str(record[0].message)


def test_plot_network_of_distinct_names_does_not_warn(recwarn) -> None:
    plot_network(_lenet_head())
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def _node_line(dot: str, name: str) -> str:
    return next(line for line in dot.splitlines() if line.startswith(f'  "{name}" ['))


def test_plot_network_labels_and_colours_layers_as_mxnet_191() -> None:
    # MXNet writes kernel/stride (stride 1 when unset, [] for a global pool's missing kernel) and labels
    # every other layer with its name, in the last colour of its palette unless it is a known kind
    net = sym.Convolution(sym.Variable("data"), kernel=(3, 3), stride=(2, 2), num_filter=4, name="c1")
    net = sym.LeakyReLU(sym.BatchNorm(net, name="bn"), name="lr")
    net = sym.Pooling(sym.Pooling(net, kernel=(2, 2), pool_type="avg", name="p1"), global_pool=True, name="gp")
    net = sym.SoftmaxOutput(sym.Deconvolution(net, kernel=(2, 2), num_filter=3, name="dc"), name="out")
    dot = plot_network(net).source
    expected = {
        "c1": ("Convolution\\n3x3/2x2, 4", "#fb8072"),
        "bn": ("bn", "#bebada"),
        "lr": ("LeakyReLU\\nLeaky", "#ffffb3"),
        "p1": ("Pooling\\navg, 2x2/1", "#80b1d3"),
        "gp": ("Pooling\\nmax, []/1", "#80b1d3"),
        "dc": ("dc", "#fccde5"),
        "out": ("out", "#fccde5"),
    }
    for name, (label, fill) in expected.items():
        line = _node_line(dot, name)
        assert f'label="{label}"' in line and f'fillcolor="{fill}"' in line, line


def test_plot_network_hides_weights_and_states_but_not_labels() -> None:
    net = sym.SoftmaxOutput(sym.BatchNorm(sym.Variable("data"), name="bn"), name="softmax")
    dot = plot_network(net, shape={"data": (2, 3)}).source
    assert '"softmax_label" [' in dot and "bn_gamma" not in dot and "bn_moving_mean" not in dot
    # one sample of a 1-d input has no shape to write: MXNet leaves the edge label empty
    assert '"softmax" -> "softmax_label" [label="",' in dot


def test_plot_network_can_show_weights() -> None:
    dot = plot_network(_lenet_head(), hide_weights=False).source
    assert '"conv1_weight"' in dot and '"conv1" -> "conv1_weight"' in dot


def test_summary_counts_no_auxiliary_states() -> None:
    # as MXNet: BatchNorm has 2 * channels parameters (gamma, beta); its moving mean and variance are not counted
    net = sym.BatchNorm(sym.Convolution(sym.Variable("data"), kernel=(3, 3), num_filter=4, name="conv"), name="bn")
    out = io.StringIO()
    assert print_summary(net, {"data": (1, 3, 8, 8)}, file=out) == 4 * 27 + 4 + 2 * 4


def test_print_summary_lays_its_rows_out_as_mxnet_191() -> None:
    data = sym.Variable("data")
    left = sym.FullyConnected(data, num_hidden=3, name="left")
    right = sym.FullyConnected(data, num_hidden=3, name="right")
    out = io.StringIO()
    assert print_summary(left + right, file=out) == 0  # nothing is known of the weights without shapes
    lines = out.getvalue().splitlines()
    assert lines[0] == "_" * 120 and lines[2] == "=" * 120
    assert lines[1] == "Layer (type)".ljust(52) + "Output Shape".ljust(24) + "Param #".ljust(
        12
    ) + "Previous Layer".ljust(32)
    assert lines[3] == "data(null)".ljust(52) + " " * 24 + "0".ljust(12) + " " * 32  # the first node, as MXNet's
    plus = lines.index(next(line for line in lines if line.startswith("_plus")))
    assert lines[plus].rstrip().endswith("left") and lines[plus + 1] == " " * 88 + "right".ljust(32)
    assert lines[plus + 2] == "=" * 120 and lines[-2:] == ["Total params: 0", "_" * 120]


def test_print_summary_shows_each_output_shape_per_sample_without_the_batch_axis() -> None:
    # MXNet 1.9.1 writes 3x28x28, not (8, 3, 28, 28): users compare these tables across libraries
    out = io.StringIO()
    print_summary(_lenet_head(), {"data": (8, 3, 28, 28)}, file=out)
    lines = out.getvalue().splitlines()
    assert lines[3] == "data(null)".ljust(52) + "3x28x28".ljust(24) + "0".ljust(12) + " " * 32
    fc_row = next(line for line in lines if line.startswith("fc(FullyConnected)"))
    assert fc_row[52:76] == "10".ljust(24)
    assert "(8," not in out.getvalue()


def test_the_network_opens_in_a_viewer_as_mxnets_digraph_does(monkeypatch) -> None:
    # scripts call plot_network(...).view(); it rendered nothing and raised AttributeError
    graphviz = pytest.importorskip("graphviz")
    calls = []
    monkeypatch.setattr(graphviz.Source, "render", lambda self, filename, **kwargs: calls.append((filename, kwargs)))
    plot_network(_lenet_head(), title="lenet").view()
    assert calls == [("lenet", {"view": True})]


def test_rendering_without_graphviz_dot_program_is_a_clear_error(monkeypatch) -> None:
    graphviz = pytest.importorskip("graphviz")

    def no_dot(self, *args, **kwargs):
        raise graphviz.ExecutableNotFound(["dot"])

    monkeypatch.setattr(graphviz.Source, "render", no_dot)
    with pytest.raises(LazyNDError, match=r"plot_network: rendering needs Graphviz's 'dot' program"):
        plot_network(_lenet_head()).view()


def test_the_network_saves_its_dot_text_and_takes_a_format(tmp_path) -> None:
    # scripts set .format on MXNet's Digraph, save its source, and display it in notebooks
    graph = plot_network(_lenet_head(), title="lenet")
    graph.format = "png"
    assert graph.save_format == "png" and graph.format == "png"
    path = graph.save(str(tmp_path / "lenet.gv"))
    assert open(path).read() == graph.source


def test_the_network_draws_inputs_at_the_bottom_as_mxnet_191() -> None:
    # MXNet 1.9.1's DOT has no rankdir: edges run layer -> input with dir=back, so Graphviz's default
    # top-to-bottom ranks put the data at the bottom; rankdir=BT would turn the picture upside down
    dot = plot_network(_lenet_head()).source
    assert "rankdir" not in dot
    assert '"softmax" -> "fc" [' in dot and 'dir="back"' in dot


def test_plot_network_labels_edges_with_types_given_dtype_as_mxnet_191() -> None:
    dot = plot_network(_lenet_head(), shape={"data": (1, 1, 28, 28)}, dtype={"data": "float32"}).source
    assert '"pool1" -> "conv1" [label="20x24x24(float32)"' in dot
    assert '"conv1" -> "data" [label="1x28x28(float32)"' in dot


def test_plot_network_takes_its_arguments_in_mxnets_order() -> None:
    # MXNet 1.9.1: plot_network(symbol, title, save_format, shape, dtype, node_attrs, hide_weights)
    graph = plot_network(_lenet_head(), "lenet", "png", None, {"data": "float16"}, {"shape": "oval"}, False)
    assert graph.name == "lenet" and graph.format == "png"
    assert '[label="(float16)"' in graph.source and 'shape="oval"' in graph.source
    assert "conv1_weight" in graph.source


def test_the_network_has_a_digraphs_name_filename_directory_and_engine() -> None:
    graph = plot_network(_lenet_head(), title="lenet")
    assert (graph.name, graph.filename, graph.directory, graph.engine) == ("lenet", "lenet.gv", "", "dot")


def test_the_network_saves_under_its_filename_in_a_directory_as_a_digraph_does(tmp_path) -> None:
    graph = plot_network(_lenet_head(), title="lenet")
    path = graph.save(directory=str(tmp_path))
    assert path == str(tmp_path / "lenet.gv")
    assert open(path).read() == graph.source


def test_a_notebook_shows_the_dot_text_where_graphviz_cannot_render(monkeypatch) -> None:
    graphviz = pytest.importorskip("graphviz")

    def no_dot(self, *args, **kwargs):
        raise graphviz.ExecutableNotFound(["dot"])

    monkeypatch.setattr(graphviz.Source, "_repr_mimebundle_", no_dot)
    monkeypatch.setattr(graphviz.Source, "pipe", no_dot)
    graph = plot_network(_lenet_head())
    assert graph._repr_mimebundle_() == {"text/plain": graph.source}
    with pytest.raises(LazyNDError, match=r"rendering needs Graphviz's 'dot' program"):
        graph.pipe()


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed here")
def test_the_network_renders_through_graphviz() -> None:
    pytest.importorskip("graphviz")
    graph = plot_network(_lenet_head(), shape={"data": (1, 1, 28, 28)})
    assert graph.pipe(format="svg").startswith(b"<?xml")
    assert "image/svg+xml" in graph._repr_mimebundle_()


@pytest.mark.parametrize("show", [plot_network, print_summary])
@pytest.mark.parametrize("symbol", [None, "net", 3], ids=repr)
def test_a_network_that_is_no_symbol_is_refused_by_name(show, symbol):
    # AttributeError "'NoneType' object has no attribute 'tojson'" before
    with pytest.raises(ArgumentTypeError, match="visualization: symbol must be a Symbol, got "):
        show(symbol)


@pytest.mark.parametrize("shape", ["abc", (2, 3), [("data", (2, 3))], 1.5], ids=repr)
def test_a_shape_that_is_no_dict_is_refused_by_name(shape):
    # "argument after ** must be a mapping" from inside before
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=4, name="fc")
    with pytest.raises(ArgumentTypeError, match="visualization: shape must be a dict of input name -> shape"):
        print_summary(net, shape=shape)


def test_plot_network_labels_the_edges_of_a_layer_of_several_outputs() -> None:
    # an edge from SliceChannel's second output carries 'split_output1'; looking up 'split_output' left it bare
    data = sym.Variable("data")
    split = sym.SliceChannel(data, num_outputs=3, axis=1, name="split")
    net = sym.Group([sym.FullyConnected(split[1], num_hidden=4, name="fa"), sym.Flatten(split[2], name="flat")])
    dot = plot_network(net, shape={"data": (2, 6, 5)}, dtype={"data": "float32"}).source
    assert '"fa" -> "split" [label="2x5(float32)"' in dot
    assert '"flat" -> "split" [label="2x5(float32)"' in dot


@pytest.mark.parametrize("save_format", [3, None, ["png"]], ids=repr)
def test_a_save_format_that_is_no_str_is_refused_by_name(save_format):
    # taken silently before; MXNet's Digraph fails on it (AttributeError 'lower') when the graph is made
    with pytest.raises(ArgumentTypeError, match="plot_network: save_format must be a str"):
        plot_network(_lenet_head(), save_format=save_format)


def test_an_unknown_save_format_is_refused_when_the_graph_is_made_as_mxnets_digraph_does():
    pytest.importorskip("graphviz")
    with pytest.raises(ArgumentValueError, match="plot_network: unknown save_format 'xyz'"):
        plot_network(_lenet_head(), save_format="xyz")
    graph = plot_network(_lenet_head(), save_format="PNG")
    assert graph.format == "png"
    with pytest.raises(ValueError, match="unknown save_format 'jpgg'"):
        graph.format = "jpgg"


def test_a_dtype_that_is_no_dict_is_refused_by_name():
    # "argument after ** must be a mapping" from inside before
    with pytest.raises(ArgumentTypeError, match="visualization: dtype must be a dict of input name -> type"):
        plot_network(_lenet_head(), dtype=["float32"])
