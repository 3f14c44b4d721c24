"""MXNet's faces import as submodules (``from lazynd.module import Module``), as programs import them from ``mxnet``."""

from __future__ import annotations

import importlib

import pytest

import lazynd as mx


def test_module_api_imports_from_the_module_face() -> None:
    from lazynd.module import BucketingModule, Module

    assert Module is mx.mod.Module and BucketingModule is mx.mod.BucketingModule


@pytest.mark.parametrize(
    ("face", "attribute"), [("model", "model"), ("symbol", "sym"), ("kvstore", "kv"), ("mod", "mod")]
)
def test_a_face_imported_as_a_submodule_is_the_attribute(face: str, attribute: str) -> None:
    assert importlib.import_module(f"lazynd.{face}") is getattr(mx, attribute)


def test_a_module_inside_a_face_is_loaded_once() -> None:
    # a second load of the file would make a second Module class, which isinstance checks reject
    from lazynd.module.module import Module

    assert Module is mx.mod.Module


def test_an_unknown_submodule_is_still_not_found() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("lazynd.no_such_face")
