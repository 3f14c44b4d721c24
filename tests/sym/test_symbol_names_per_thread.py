"""Automatic symbol names are counted per thread, as in MXNet 1.9.1: each thread starts at 0."""

from __future__ import annotations

import threading

import lazynd as mx


def _auto_names_in_new_thread() -> list[str]:
    names: list[str] = []

    def build() -> None:
        fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2)
        names.extend(mx.sym.FullyConnected(fc, num_hidden=2).list_arguments())

    thread = threading.Thread(target=build)
    thread.start()
    thread.join(30)
    return names


def test_each_thread_counts_automatic_names_from_zero() -> None:
    mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2)  # the main thread's count moves on
    expected = [
        "data",
        "fullyconnected0_weight",
        "fullyconnected0_bias",
        "fullyconnected1_weight",
        "fullyconnected1_bias",
    ]
    # MXNet 1.9.1: the same names in every new thread, so each loads the same checkpoint
    assert _auto_names_in_new_thread() == expected
    assert _auto_names_in_new_thread() == expected


def test_a_thread_does_not_move_the_main_threads_count() -> None:
    first = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2).name
    _auto_names_in_new_thread()
    second = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2).name
    assert int(second.removeprefix("fullyconnected")) == int(first.removeprefix("fullyconnected")) + 1


def test_a_name_scope_applies_to_its_own_thread_only() -> None:
    with mx.name.Prefix("main_"):
        names = _auto_names_in_new_thread()
        assert mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc").name == "main_fc"
    assert not any(name.startswith("main_") for name in names)
