"""CATLASS example 37: streamk_matmul, C = A @ B (fp16) with stream-K scheduling on simulated Atlas A2.

    python examples/37_streamk_matmul.py 512 1280 2048
    catlass-py run 37_streamk_matmul 512 1280 2048 --cores 24

Output blocks are dealt whole in rounds of ``cores``; the K tiles of the last, incomplete round are spread evenly
over all cores, whose fp32 partial sums (two workspace slots per core: a range may cross into the next tail block)
the vector cores add up and cast to fp16. The assembly (:mod:`catlass_py.assemblies.streamk_matmul`) follows
``examples/37_streamk_matmul/streamk_matmul.cpp``; inputs are generated like the C++ host code (glibc rand).

The host follows the assembly's template parameters: ``--set element=bf16`` draws A and B of that type (same
generator), the operator stores the logical matrices in the layouts the kernel was assembled with (``layout_a`` /
``layout_b``), and C is of the kernel's output type.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.streamk_matmul import assemble
from catlass_py.gemm import GemmCoord
from catlass_py.ops.streamk_matmul import streamk_matmul
from catlass_py.runner import ExampleResult, ExampleRun, compare_output, parse_positional

NAME = "37_streamk_matmul"
USAGE = "m n k [device_id]"
SUMMARY = "fp16 matmul with stream-K scheduling of the tail blocks, fp32 partial sums reduced on the vector cores"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16"), "the kernel's element types: fp16 or bf16"),
}


def inputs(m: int, n: int, k: int, element: str = "float16"):
    """Host data like the C++: A then B = FillRandomData<ElementA>(-5.0f, 5.0f), fp16 by
    default."""
    rng = data.GlibcRand()
    lo, hi = np.float32(-5.0), np.float32(5.0)
    a = data.fill_random(rng, m * k, lo, hi, element).reshape(m, k)
    b = data.fill_random(rng, k * n, lo, hi, element).reshape(k, n)
    return a, b


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``.

    ``observers`` join the launch; ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches
    (``detect_races``, ``preempt_on_set``); ``seed`` overrides ``options.seed``."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num
    kernel = ex.assemble(assemble, arch)
    element, element_c = ex.setting("element"), kernel.block_mmad.element_c.name  # ElementA = ElementB, ElementC
    ex.require_supported(SUPPORTED_SETTINGS)
    ex.reserve(kernel, inputs={"a": ((m, k), element), "b": ((k, n), element)}, gm={"c": ((m, n), element_c)},
               golden=golden.peak_bytes("matmul", m=m, n=n, k=k),
               arguments=lambda gm: kernel.Arguments(GemmCoord(m, n, k), core_num, gm["a"], gm["b"], gm["c"]))
    a, b = ex.inputs(inputs, m, n, k, element)  # the operator stores them in the kernel's layouts
    obs = ex.observers(kernel.total_blocks((m, n, k), core_num))
    with ex.timing():
        c, launch_result = streamk_matmul(a, b, core_num=core_num, seed=seed, observers=obs, kernel=kernel,
                                          options=options, return_launch=True)
    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.matmul(a, b)
            result = compare_output(c, expect, k)
    sched = kernel.scheduler((m, n, k), core_num)
    return ex.result(
        c, result, golden=expect, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"normal_blocks": sched.get_normal_block_num(), "streamk_blocks": sched.get_streamk_block_num(),
                 "k_tiles_per_core": sched.k_tile_num_per_core, "k_tile_remain": sched.k_tile_remain,
                 "workspace_bytes": ex.footprint.by_kind().get("workspace", 0),
                 "tiles_per_aiv": ex.report.tiles_per_aiv()},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
