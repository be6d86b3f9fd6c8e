"""CATLASS example 02: grouped_matmul_slice_m on simulated Atlas A2 AI cores.

    python examples/02_grouped_matmul_slice_m.py 8 512 256 1024
    catlass-py run 02_grouped_matmul_slice_m 8 512 256 1024 --cores 4 --json

A [m, k] is split along M by a group list (inclusive prefix sums); group g computes C[rows_g] = A[rows_g] @ B_g with
its own B_g [k, n], stored column-major (n x k) back to back. fp16 in and out. The assembly
(:mod:`catlass_py.assemblies.grouped_matmul_slice_m`) follows ``grouped_matmul_slice_m.cpp``, which picks its tiling
at runtime: for k > n an L1 tile of 256 x 128 x 256 with 4 L0B stages and swizzle ``<3,0>``, else 128 x 256 x 256
with 4 L0A stages and ``<3,1>``; both use ``MmadAtlasA2PreloadAsync`` (preload 1, unit flag and shuffle-K on).
Inputs as the C++: A then B from glibc's stream (``-5.0..5.0`` in double), then ``GenerateGroupList(m, G)``.

The host follows the assembly's template parameters like the C++ host: ``--set element=bf16`` (or int8) draws A and
B of that type, ``--set layout_b=row`` stores the same logical B_g row-major, C is of the kernel's ``ElementC``, and
``--set segmented=true`` makes the group list hold group sizes.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.grouped_matmul_slice_m import assemble, tiling_for
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.ops.grouped_matmul_slice_m import validate_inputs
from catlass_py.ops.operator import as_stored
from catlass_py.runner import ExampleResult, ExampleRun, compare_output, host_dtype, parse_positional, to_device

NAME = "02_grouped_matmul_slice_m"
USAGE = "problem_count m n k [device_id]"
SUMMARY = "grouped C[rows_g] = A[rows_g] @ B_g, A split along M, fp16 (GroupedMatmulSliceM + PreloadAsync)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16", "int8"), "the grouped matmul's element types"),
    "layout_b": ((RowMajor, ColumnMajor), "the host stores B row- or column-major"),
}


def make_inputs(problem_count: int, m: int, n: int, k: int, *, segmented: bool = False, element: str = "float16"):
    """(A [m, k], B [G, k, n] logical, group list int64) as the C++ builds them, A and B of ``element`` (fp16 by
    default). B is drawn as the column-major storage (per group n x k) and returned as the logical k x n
    matrices."""
    rng = data.GlibcRand()
    a = data.fill_random(rng, m * k, -5.0, 5.0, element).reshape(m, k)
    b_stored = data.fill_random(rng, problem_count * k * n, -5.0, 5.0, element).reshape(problem_count, n, k)
    group_list = data.generate_group_list(m, problem_count, rng=rng, segmented=segmented)
    return a, np.swapaxes(b_stored, 1, 2), group_list


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``problem_count m n k [device_id]``."""
    problem_count, m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num
    tiling = tiling_for(n, k)
    kernel = ex.assemble(assemble, arch, tiling=tiling)
    element, element_c = ex.setting("element"), kernel.block_mmad.element_c.name  # ElementA = ElementB, ElementC
    layout_b = ex.setting("layout_b")
    ex.require_supported(SUPPORTED_SETTINGS)
    ex.reserve(kernel, inputs={"a": ((m, k), element), "b": ((problem_count, k, n), element),
                               "group_list": ((problem_count,), "int64")},
               gm={"b": ((problem_count, k, n), element), "c": ((m, n), element_c)},
               golden=golden.peak_bytes("grouped_matmul_slice_m", groups=problem_count, m=m, n=n, k=k,
                                        int8=element == "int8"))
    segmented = ex.setting("segmented")  # the CATLASS_EXPERIMENTAL_GROUPLIST_SEGMENTED build: group sizes
    a, b, group_list = ex.inputs(make_inputs, problem_count, m, n, k, segmented=segmented, element=element)
    with ex.host_checks():
        validate_inputs(a, b, group_list, layout_b, segmented, element_c, core_num, arch)

    gm_a = to_device("a", a)
    gm_b = to_device("b", as_stored(b, layout_b))  # the C++ buffer: per group n x k for ColumnMajor
    gm_gl = to_device("group_list", group_list)
    host_c = ex.zeros((m, n), host_dtype(element_c))
    gm_c = to_device("c", host_c, read_only=False)

    args = kernel.Arguments(GemmCoord(m, n, k), problem_count, gm_gl, gm_a, gm_b, gm_c)
    gemm_op = DeviceGemm(kernel)
    gemm_op.initialize(args)

    total = kernel.total_blocks(group_list, n)
    obs = ex.observers(total)
    with ex.timing():
        launch_result = gemm_op.run(core_num, seed=seed, observers=obs, options=options)

    rows = int(group_list.sum() if segmented else group_list[-1]) if problem_count else 0
    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.grouped_matmul_slice_m(a, b, group_list, segmented=segmented)
            result = compare_output(host_c, expect, k, valid=rows * n)
    sched = kernel.block_scheduler
    sizes = group_list if segmented else np.diff(np.concatenate([[0], group_list]))
    return ex.result(
        host_c, result, golden=expect, shape={"problem_count": problem_count, "m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"rows_written": rows, "empty_groups": int((sizes == 0).sum()), "total_blocks": total,
                 "tiling": tiling, "swizzle": f"<{sched.swizzle_offset},{sched.swizzle_direction}>"},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
