"""Compile every CUDA kernel source with NVRTC for sm_80 and sm_90 (no GPU needed).

Run as ``python -m lazynd.backend.cuda.check_kernels``; exits non-zero on any error.
"""

from __future__ import annotations

import sys
import time

ARCHS = ("compute_80", "compute_90")


def _nvrtc_compile(
    code: str, name: str, options: tuple[str, ...], arch: str, name_expressions: tuple[str, ...]
) -> None:
    from cupy.cuda import nvrtc

    prog = nvrtc.createProgram(code, name + ".cu", [], [])
    try:
        for expr in name_expressions:
            nvrtc.addNameExpression(prog, expr)
        opts = list(options) + [f"--gpu-architecture={arch}"]
        try:
            nvrtc.compileProgram(prog, opts)
        except nvrtc.NVRTCError as err:
            log = nvrtc.getProgramLog(prog)
            raise RuntimeError(f"{name} [{arch}]: {err}\n{log}") from err
        if not nvrtc.getPTX(prog):
            raise RuntimeError(f"{name} [{arch}]: NVRTC produced no PTX")
    finally:
        nvrtc.destroyProgram(prog)


def main() -> int:
    from .sources import all_sources

    sources = all_sources()
    failures = 0
    start = time.perf_counter()
    for source in sources:
        for arch in ARCHS:
            try:
                _nvrtc_compile(
                    source.code, source.name.replace(":", "_"), source.options, arch, source.name_expressions
                )
            except Exception as err:  # report every failing source, not just the first
                failures += 1
                print(f"FAIL {err}", file=sys.stderr)
    elapsed = time.perf_counter() - start
    print(f"kernels-check: {len(sources)} sources x {len(ARCHS)} archs, {failures} failures, {elapsed:.1f}s")
    if not sources:
        print("kernels-check: no kernel sources found", file=sys.stderr)
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
