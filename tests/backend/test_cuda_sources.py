"""Kernel sources as the compilers get them (lazynd/backend/cuda/sources.py): no GPU needed."""

from __future__ import annotations

from lazynd.backend.cuda import sources


def test_a_shared_header_is_pasted_into_every_source_that_includes_it() -> None:
    header = (sources.KERNEL_DIR / "warp.cuh").read_text()
    users = [path.name for path in sorted(sources.KERNEL_DIR.glob("*.cu")) if '#include "warp.cuh"' in path.read_text()]
    assert {"reduce.cu", "softmax.cu"} <= set(users)
    for name in users:
        code = sources.load_file(name).code
        # NVRTC in `make kernels-check` and the CPU emulator compile the source text alone, with
        # no include path: the header must be in it and the directive gone
        assert header in code
        assert not [line for line in code.splitlines() if line.startswith("#include")]


def test_headers_are_not_sources_of_their_own() -> None:
    names = {s.name for s in sources.all_sources()}
    assert "file:softmax.cu" in names
    assert not any(name.endswith(".cuh") for name in names)
