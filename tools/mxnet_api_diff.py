"""List the public names and keywords MXNet has and lazynd lacks, namespace by namespace.

Run it twice, once under each interpreter, then compare the two dumps::

    /tmp/mxvenv/bin/python tools/mxnet_api_diff.py dump mxnet /tmp/mx.json
    python tools/mxnet_api_diff.py dump lazynd /tmp/lz.json
    python tools/mxnet_api_diff.py compare /tmp/mx.json /tmp/lz.json

``dir()`` misses what lazynd resolves on demand (NDArray's and Symbol's operator methods,
the registry's functions), so a name reported here is worth a call before it counts as a gap.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import sys
from typing import Any

# namespace -> attribute path from the top-level module
NAMESPACES = {
    "mx": "",
    "nd": "nd",
    "NDArray": "nd.NDArray",
    "nd.random": "nd.random",
    "nd.contrib": "nd.contrib",
    "sym": "sym",
    "Symbol": "sym.Symbol",
    "context": "context",
    "Context": "context.Context",
    "random": "random",
    "test_utils": "test_utils",
    "io": "io",
    "DataIter": "io.DataIter",
    "DataDesc": "io.DataDesc",
    "NDArrayIter": "io.NDArrayIter",
    "callback": "callback",
    "kv": "kv",
    "mod": "mod",
    "Module": "mod.Module",
    "BaseModule": "mod.BaseModule",
    "metric": "metric",
    "lr_scheduler": "lr_scheduler",
    "init": "init",
    "optimizer": "optimizer",
    "viz": "viz",
    "name": "name",
    "attribute": "attribute",
    "base": "base",
    "model": "model",
    "autograd": "autograd",
    "image": "image",
    "recordio": "recordio",
    "profiler": "profiler",
    "monitor": "monitor",
}
_DUNDERS = ("__len__", "__iter__", "__bool__", "__float__", "__int__", "__index__", "__abs__", "__getitem__")


def _describe(value: Any) -> str:
    if inspect.isclass(value):
        return "class"
    if callable(value):
        try:
            return str(inspect.signature(value))
        except (TypeError, ValueError):
            return "?"
    return type(value).__name__


def dump(module_name: str, path: str) -> None:
    """Write ``{namespace: {name: signature}}`` of ``module_name`` (mxnet or lazynd) to ``path``."""
    top = importlib.import_module(module_name)
    out: dict[str, Any] = {}
    for namespace, attribute_path in NAMESPACES.items():
        try:
            obj = top
            for part in filter(None, attribute_path.split(".")):
                obj = getattr(obj, part)
        except Exception as exc:  # noqa: BLE001 - a missing namespace is itself the finding
            out[namespace] = {"__error__": repr(exc)[:200]}
            continue
        names = [n for n in dir(obj) if not n.startswith("_") or n in _DUNDERS]
        table = {}
        for name in sorted(names):
            try:
                table[name] = _describe(getattr(obj, name))
            except Exception:  # noqa: BLE001 - a property that raises on the class
                table[name] = "?"
        out[namespace] = table
    with open(path, "w") as f:
        json.dump(out, f, indent=0)


def _parameters(signature: str) -> list[str] | None:
    match = re.match(r"^\((.*)\)", signature)
    if match is None:
        return None
    parts = re.split(r",\s*(?![^()\[\]{}]*[)\]}])", match.group(1))
    return [re.split(r"[=:]", p.strip())[0].strip() for p in parts if p.strip()]


def compare(mxnet_path: str, lazynd_path: str) -> None:
    """Print, per namespace, the names and keyword parameters MXNet has and lazynd lacks."""
    with open(mxnet_path) as f:
        mxnet = json.load(f)
    with open(lazynd_path) as f:
        lazynd = json.load(f)
    for namespace, names in mxnet.items():
        ours = lazynd.get(namespace, {"__error__": "absent"})
        if "__error__" in ours:
            print(f"== {namespace}: missing in lazynd ({ours['__error__']})")
            continue
        missing = [n for n in names if n not in ours]
        print(f"== {namespace}: {len(missing)} of {len(names)} names missing: {' '.join(missing)}")
        for name, signature in names.items():
            theirs, mine = _parameters(signature), _parameters(ours.get(name, ""))
            if theirs is None or mine is None or any(p.startswith("**") for p in mine):
                continue
            lacking = [p for p in theirs if p not in mine and p not in ("self", "*args", "*", "/") and "**" not in p]
            if lacking:
                print(f"   {namespace}.{name}: keywords {lacking} missing")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "dump":
        dump(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
