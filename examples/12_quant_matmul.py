"""CATLASS example 12: quant_matmul, D = fp16((int8 A @ int8 B) * scale[n] * perTokenScale[m]).

    python examples/12_quant_matmul.py 256 512 1024
    catlass-py run 12_quant_matmul 256 512 1024 --cores 4

Single-problem sibling of example 10: the cube cores write int32 blocks into a 2-slot ring per AI core, the vector
cores dequantise them (32 x 256 tiles, per-channel x per-token, fp32) into fp16 D. B is column-major. The assembly
(:mod:`catlass_py.assemblies.quant_matmul`) follows ``examples/12_quant_matmul/quant_matmul.cpp``; inputs are
generated like the C++ host code (glibc rand), so the output can be compared with a device dump.

The host follows the assembly's template parameters: ``--set out_dtype=bf16`` makes D and both scales bf16 (the
scales drawn as that type), and the operator stores the logical A and B in the kernel's layouts (``layout_a`` /
``layout_b``).
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.quant_matmul import assemble
from catlass_py.gemm import GemmCoord
from catlass_py.ops.quant_matmul import quant_matmul
from catlass_py.runner import ExampleResult, ExampleRun, compare_output, parse_positional

NAME = "12_quant_matmul"
USAGE = "m n k [device_id]"
SUMMARY = "int8 matmul + per-channel x per-token dequant -> fp16 (QuantMatmulMultiStageWorkspace)"


def inputs(m: int, n: int, k: int, element_scale: str = "float16"):
    """Host data like the C++: A, B (int8 -16..16; B filled in its column-major storage order), scale and
    per-token scale (of ``element_scale``, fp16 by default, from 0.0..1.0 doubles). Returns logical
    (a [m, k], b [k, n], scale, pts)."""
    rng = data.GlibcRand()
    a = data.fill_random(rng, m * k, -16, 16, "int8").reshape(m, k)
    b = data.fill_random(rng, k * n, -16, 16, "int8").reshape(n, k).T  # column-major storage: B^T rows
    scale = data.fill_random(rng, n, 0.0, 1.0, element_scale)
    per_token_scale = data.fill_random(rng, m, 0.0, 1.0, element_scale)
    return a, b, scale, per_token_scale


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``.

    ``observers`` join the launch; ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches
    (``detect_races``, ``preempt_on_set``); ``seed`` overrides ``options.seed``."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num
    kernel = ex.assemble(assemble, arch, swizzle_direction=0 if m > n else 1)
    element_d = ex.setting("out_dtype")  # the type of D and of both scales
    ex.reserve(kernel, inputs={"a": ((m, k), "int8"), "b": ((k, n), "int8"), "scale": ((n,), element_d),
                               "per_token_scale": ((m,), element_d)},
               gm={"d": ((m, n), element_d)}, golden=golden.peak_bytes("quant_matmul", m=m, n=n, k=k),
               arguments=lambda gm: kernel.Arguments(GemmCoord(m, n, k), core_num, gm["a"], gm["b"], gm["scale"],
                                                     gm["per_token_scale"], gm["d"]))
    a, b, scale, pts = ex.inputs(inputs, m, n, k, element_d)  # the operator stores A, B in the kernel's layouts
    obs = ex.observers(kernel.total_blocks((m, n, k)))
    with ex.timing():
        d, launch_result = quant_matmul(a, b, scale, pts, layout_b="column_major", core_num=core_num, seed=seed,
                                        observers=obs, kernel=kernel, options=options, return_launch=True)
    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.quant_matmul(a, b, scale, pts)
            result = compare_output(d, expect, k)
    return ex.result(
        d, result, golden=expect, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": kernel.total_blocks((m, n, k)),
                 "workspace_bytes": 128 * 256 * core_num * 2 * 4,
                 **({"bit_exact": bool(np.array_equal(d, expect.astype(d.dtype)))} if ex.numerics else {})},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
