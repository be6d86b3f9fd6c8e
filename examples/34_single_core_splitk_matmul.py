"""CATLASS example 34: single_core_splitk_matmul, C = A @ B (fp16) with K looped on each core.

    python examples/34_single_core_splitk_matmul.py 256 512 2048
    catlass-py run 34_single_core_splitk_matmul 256 512 2048 --cores 8

The vector cores first repack A (row-major) and B (column-major) into NZ workspaces (``PaddingMatrixNZ``). Every
cube core then owns a contiguous range of output blocks and walks their K tiles (K outermost), storing the first
tile and atomically adding the others into an fp32 workspace C; finally the vector cores cast that into fp16 C
(``RemovePaddingNDAndCast``). The assembly (:mod:`catlass_py.assemblies.single_core_splitk_matmul`) follows
``examples/34_single_core_splitk_matmul/single_core_splitk.cpp``; inputs are generated like the C++ host code.

The host follows the assembly's template parameters: ``--set element=bf16`` draws A and B of that type (same
generator), the operator stores the logical matrices in the layouts the kernel was assembled with (``layout_a`` /
``layout_b``), and C is of the kernel's output type.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.single_core_splitk_matmul import assemble
from catlass_py.gemm import GemmCoord
from catlass_py.ops.single_core_splitk_matmul import single_core_splitk_matmul
from catlass_py.runner import ExampleResult, ExampleRun, compare_output, parse_positional

NAME = "34_single_core_splitk_matmul"
USAGE = "m n k [device_id]"
SUMMARY = "fp16 matmul, K looped on one core with atomic adds into fp32 C (NZ padding prologue, cast epilogue)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16"), "the kernel's element types: fp16 or bf16"),
}


def inputs(m: int, n: int, k: int, element: str = "float16"):
    """Host data like the C++: A then B (B in its column-major storage order) = FillRandomData<ElementA>(-5.0f,
    5.0f), fp16 by default. Returns logical (a [m, k], b [k, n])."""
    rng = data.GlibcRand()
    lo, hi = np.float32(-5.0), np.float32(5.0)
    a = data.fill_random(rng, m * k, lo, hi, element).reshape(m, k)
    b = data.fill_random(rng, k * n, lo, hi, element).reshape(n, k).T
    return a, b


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``.

    ``observers`` join the launch; ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches
    (``detect_races``, ``preempt_on_set``); ``seed`` overrides ``options.seed``."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num
    kernel = ex.assemble(assemble, arch, m_gt_n=m > n)
    element, element_c = ex.setting("element"), kernel.element_c.name  # ElementA = ElementB, ElementC
    ex.require_supported(SUPPORTED_SETTINGS)
    ex.reserve(kernel, inputs={"a": ((m, k), element), "b": ((k, n), element)}, gm={"c": ((m, n), element_c)},
               golden=golden.peak_bytes("matmul", m=m, n=n, k=k),
               arguments=lambda gm: kernel.Arguments(GemmCoord(m, n, k), gm["a"], gm["b"], gm["c"]))
    a, b = ex.inputs(inputs, m, n, k, element)  # the operator stores them in the kernel's layouts
    obs = ex.observers(kernel.total_blocks((m, n, k)))
    with ex.timing():
        c, launch_result = single_core_splitk_matmul(a, b, layout_b="column_major", core_num=core_num, seed=seed,
                                                     observers=obs, kernel=kernel, options=options, return_launch=True)
    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.matmul(a, b)
            result = compare_output(c, expect, k)
    return ex.result(
        c, result, golden=expect, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"k_tiles_total": kernel.total_blocks((m, n, k)),
                 "workspace_bytes": ex.footprint.by_kind().get("workspace", 0),
                 "tiles_per_aiv": ex.report.tiles_per_aiv()},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
