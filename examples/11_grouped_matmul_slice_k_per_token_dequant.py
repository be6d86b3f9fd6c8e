"""CATLASS example 11: GMM sliceK + per-token dequant on simulated Atlas A2 AI cores.

    python examples/11_grouped_matmul_slice_k_per_token_dequant.py 8 256 512 1024
    catlass-py run 11_grouped_matmul_slice_k_per_token_dequant 8 256 512 1024 --cores 4

D[g] (bf16, [G, m, n]) = (A[:, K_g] int8 @ B[K_g, :] int8 -> int32) * scale[g][n] * perTokenScale[g][m], with the K
ranges K_g given by prefix sums over k. A is column-major. Groups with an empty K range give zeros (written by the
vector cores without any cube work). The assembly
(:mod:`catlass_py.assemblies.grouped_matmul_slice_k_per_token_dequant`) follows
``grouped_matmul_slice_k_per_token_dequant.cpp``; inputs are generated like the C++ host code.

The host follows the assembly's element types: D and both scales are of ``out_dtype`` (bf16; fp16 also), the
scales drawn as it, and the group list is of ``element_group_list``.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.grouped_matmul_slice_k_per_token_dequant import assemble
from catlass_py.gemm import GemmCoord
from catlass_py.ops.grouped_matmul_slice_k_per_token_dequant import grouped_matmul_slice_k_per_token_dequant
from catlass_py.runner import ExampleResult, ExampleRun, parse_positional

NAME = "11_grouped_matmul_slice_k_per_token_dequant"
USAGE = "problem_count m n k [device_id]"
SUMMARY = "int8 grouped matmul split along K + per-channel x per-token dequant -> bf16 [G, m, n]"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element_group_list": (("int32", "int64"), "GenerateGroupList's element types"),
}


def inputs(problem_count: int, m: int, n: int, k: int, element_scale: str = "bfloat16",
           element_group_list: str = "int64"):
    """Host data like the C++: A (int8, filled in its column-major storage order), B (int8), scale [G, n] and
    per-token scale [G, m] (``element_scale``, bf16 by default, from doubles in 0.0..1.0), then
    ``GenerateGroupList<ElementGroupList>(k, G)`` (int64 by default). Returns logical (a [m, k], b [k, n],
    group_list, scale, per_token_scale)."""
    rng = data.GlibcRand()
    a = data.fill_random(rng, m * k, -16, 16, "int8").reshape(k, m).T
    b = data.fill_random(rng, k * n, -16, 16, "int8").reshape(k, n)
    scale = data.fill_random(rng, problem_count * n, 0.0, 1.0, element_scale).reshape(problem_count, n)
    per_token_scale = data.fill_random(rng, problem_count * m, 0.0, 1.0, element_scale).reshape(problem_count, m)
    group_list = data.generate_group_list(k, problem_count, rng=rng).astype(element_group_list, copy=False)
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
    element_d, element_group_list = ex.setting("out_dtype"), ex.setting("element_group_list")  # D and both scales
    ex.require_supported(SUPPORTED_SETTINGS)
    ex.reserve(kernel, inputs={"a": ((m, k), "int8"), "b": ((k, n), "int8"), "scale": ((problem_count, n), element_d),
                               "per_token_scale": ((problem_count, m), element_d),
                               "group_list": ((problem_count,), element_group_list)},
               gm={"d": ((problem_count, m, n), element_d)},
               golden=golden.peak_bytes("grouped_matmul_slice_k_per_token_dequant", groups=problem_count, m=m, n=n,
                                        k=k),
               arguments=lambda gm: kernel.Arguments(GemmCoord(m, n, k), problem_count, gm["group_list"], gm["a"],
                                                     gm["b"], gm["scale"], gm["per_token_scale"], gm["d"]))
    a, b, group_list, scale, pts = ex.inputs(inputs, problem_count, m, n, k, element_d, element_group_list)
    obs = ex.observers(kernel.total_blocks((m, n, k), group_list))
    with ex.timing():
        d, launch_result = grouped_matmul_slice_k_per_token_dequant(a, b, group_list, scale, pts, core_num=core_num,
                                                                    seed=seed, observers=obs, kernel=kernel,
                                                                    options=options, return_launch=True)
    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.grouped_matmul_slice_k_per_token_dequant(a, b, group_list, scale, pts)
            result = golden.compare_data(d, expect, k, valid=problem_count * m * n)
    sizes = np.diff(np.concatenate([[0], group_list]))
    return ex.result(
        d, result, golden=expect, shape={"problem_count": problem_count, "m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"empty_groups": int((sizes == 0).sum()), "k_used": int(group_list[-1]),
                 "total_blocks": kernel.total_blocks((m, n, k), group_list),
                 "workspace_bytes": problem_count * m * n * 4,
                 **({"bit_exact": bool(np.array_equal(d, expect.astype(d.dtype)))} if ex.numerics else {})},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
