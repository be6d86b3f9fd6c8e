"""CATLASS example 07: GMM sliceM + per-token dequant ("MoE" variant) on simulated Atlas A2 AI cores.

    python examples/07_grouped_matmul_slice_m_per_token_dequant_moe.py 8 512 1024 256
    catlass-py run 07_grouped_matmul_slice_m_per_token_dequant_moe 8 512 1024 256 --cores 4

D[m, n] (fp16) = per group g: (A_g int8 @ B_g int8 -> int32) * scale_g[n] (fp32) * perTokenScale[mg] (fp32).
Unlike example 10 the int32 C of every group goes to a full-size workspace (no ring), and one flag with
back-pressure (``CrossCoreFlagWithReverse``) tells the vector cores which blocks are stored. The assembly
follows ``grouped_matmul_slice_m_per_token_dequant_moe.cpp``; inputs are generated like the C++ host code.

The host follows the assembly's element types: the scales are drawn as ``scale_dtype`` and the group list is of
``element_group_list``; D is of ``out_dtype``.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.grouped_matmul_slice_m_per_token_dequant_moe import assemble
from catlass_py.gemm import GemmCoord
from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant_moe import (
    grouped_matmul_slice_m_per_token_dequant_moe,
)
from catlass_py.runner import ExampleResult, ExampleRun, parse_positional

NAME = "07_grouped_matmul_slice_m_per_token_dequant_moe"
USAGE = "problem_count m n k [device_id]"
SUMMARY = "int8 grouped matmul split along M + fp32 per-channel x per-token dequant -> fp16 (full-size workspace)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element_group_list": (("int32", "int64"), "GenerateGroupList's element types"),
}


def inputs(problem_count: int, m: int, n: int, k: int, element_scale: str = "float32",
           element_group_list: str = "int32"):
    """Host data like the C++: A, B (int8 -16..16), scale [G, n] and per-token scale [m] (``element_scale``, fp32
    by default, from doubles in 0.0..1.0), then ``GenerateGroupList`` (of ``element_group_list``, int32 by
    default, after ``srand(0)``)."""
    rng = data.GlibcRand()
    a = data.fill_random(rng, m * k, -16, 16, "int8").reshape(m, k)
    b = data.fill_random(rng, problem_count * k * n, -16, 16, "int8").reshape(problem_count, k, n)
    scale = data.fill_random(rng, problem_count * n, 0.0, 1.0, element_scale).reshape(problem_count, n)
    per_token_scale = data.fill_random(rng, m, 0.0, 1.0, element_scale)
    group_list = data.generate_group_list(m, problem_count, rng=rng).astype(element_group_list)
    return a, b, group_list, scale, per_token_scale


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``problem_count m n k [device_id]``.

    ``observers`` join the launch; ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches
    (``detect_races``, ``preempt_on_set``); ``seed`` overrides ``options.seed``."""
    problem_count, m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num
    kernel = ex.assemble(assemble, arch)
    d_type = kernel.block_epilogue.d_type.element
    element_scale, element_group_list = ex.setting("scale_dtype"), ex.setting("element_group_list")
    ex.require_supported(SUPPORTED_SETTINGS)
    ex.reserve(kernel, inputs={"a": ((m, k), "int8"), "b": ((problem_count, k, n), "int8"),
                               "group_list": ((problem_count,), element_group_list),
                               "scale": ((problem_count, n), element_scale), "per_token_scale": ((m,), element_scale)},
               gm={"d": ((m, n), d_type)},
               golden=golden.peak_bytes("grouped_matmul_slice_m_per_token_dequant", groups=problem_count, m=m, n=n,
                                        k=k),
               arguments=lambda gm: kernel.Arguments(GemmCoord(m, n, k), problem_count, gm["group_list"], gm["a"],
                                                     gm["b"], gm["scale"], gm["per_token_scale"], gm["d"]))
    a, b, group_list, scale, pts = ex.inputs(inputs, problem_count, m, n, k, element_scale, element_group_list)
    obs = ex.observers(kernel.total_blocks((m, n, k), group_list))
    with ex.timing():
        d, launch_result = grouped_matmul_slice_m_per_token_dequant_moe(a, b, group_list, scale, pts, core_num=core_num,
                                                                        seed=seed, observers=obs, kernel=kernel,
                                                                        options=options, return_launch=True)
    rows = int(group_list[-1]) if problem_count else 0
    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.grouped_matmul_slice_m_per_token_dequant(a, b, group_list, scale, pts)
            result = golden.compare_data(d, expect, k, valid=rows * n)
    return ex.result(
        d, result, golden=expect, shape={"problem_count": problem_count, "m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"rows_written": rows, "total_blocks": kernel.total_blocks((m, n, k), group_list),
                 "workspace_bytes": m * n * 4,
                 **({"bit_exact": bool(np.array_equal(d[:rows], expect[:rows].astype(d.dtype)))}
                    if ex.numerics else {})},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
