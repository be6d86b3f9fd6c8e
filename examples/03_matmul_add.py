"""CATLASS example 03: matmul_add, D = A @ B + X (fp16) on simulated Atlas A2 AI cores.

    python examples/03_matmul_add.py 256 512 1024
    catlass-py run 03_matmul_add 256 512 1024 --cores 4

The cube cores compute C = A @ B (fp16 out of the fixpipe) into a GM workspace; after each block they
signal the vector cores, which add X element-wise (each vector core half a block) and write D. The assembly
follows ``examples/03_matmul_add/matmul_add.cpp``; inputs are generated like the C++ host code (glibc rand).

The host follows the assembly's template parameters: ``--set element=bf16`` draws A, B and X (and makes D) bf16,
and the operator stores the logical A and B in the layouts the kernel was assembled with (``layout_a`` /
``layout_b``).
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.matmul_add import assemble
from catlass_py.gemm import GemmCoord
from catlass_py.ops.matmul_add import matmul_add
from catlass_py.runner import ExampleResult, ExampleRun, compare_output, parse_positional

NAME = "03_matmul_add"
USAGE = "m n k [device_id]"
SUMMARY = "fp16 matmul + element-wise add of X on the vector cores (MatmulEpilogue, full-size workspace)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16"), "the add epilogue's element types"),
}


def inputs(m: int, n: int, k: int, element: str = "float16"):
    """Host data like the C++: one glibc stream, A, B, X = FillRandomData<Element>(-5.0f, 5.0f) in that order,
    fp16 by default."""
    rng = data.GlibcRand()
    lo, hi = np.float32(-5.0), np.float32(5.0)
    a = data.fill_random(rng, m * k, lo, hi, element).reshape(m, k)
    b = data.fill_random(rng, k * n, lo, hi, element).reshape(k, n)
    x = data.fill_random(rng, m * n, lo, hi, element).reshape(m, n)
    return a, b, x


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``.

    ``observers`` join the launch; ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches
    (``detect_races``, ``preempt_on_set``); ``seed`` overrides ``options.seed``."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num
    kernel = ex.assemble(assemble, arch, swizzle_direction=0 if m > n else 1)
    element = ex.setting("element")  # A, B, C, X and D
    ex.require_supported(SUPPORTED_SETTINGS)
    ex.reserve(kernel, inputs={"a": ((m, k), element), "b": ((k, n), element), "x": ((m, n), element)},
               gm={"d": ((m, n), element)}, golden=golden.peak_bytes("matmul_add", m=m, n=n, k=k),
               arguments=lambda gm: kernel.Arguments(GemmCoord(m, n, k), kernel.block_mmad.element_c.nbytes(1),
                                                     gm["a"], gm["b"], gm["d"]))
    a, b, x = ex.inputs(inputs, m, n, k, element)  # the operator stores A and B in the kernel's layouts
    obs = ex.observers(kernel.total_blocks((m, n, k)))
    with ex.timing():
        d, launch_result = matmul_add(a, b, x, core_num=core_num, seed=seed, observers=obs, kernel=kernel,
                                      options=options, return_launch=True)
    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.matmul_add(a, b, x)
            if element == "bfloat16":  # the device rounds C to bf16 before adding X; under cancellation two bf16
                # roundings are far from the fp32 C + X, so the golden adds X to that C (as the kernel tests do)
                expect = golden.matmul(a, b).astype(a.dtype).astype(np.float32) + x.astype(np.float32)
            result = compare_output(d, expect, k)
    return ex.result(
        d, result, golden=expect, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": kernel.total_blocks((m, n, k)), "workspace_bytes": 2 * m * n,
                 "tiles_per_aiv": ex.report.tiles_per_aiv()},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
