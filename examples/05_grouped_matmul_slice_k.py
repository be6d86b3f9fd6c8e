"""CATLASS example 05: grouped_matmul_slice_k on simulated Atlas A2 AI cores.

    python examples/05_grouped_matmul_slice_k.py 8 256 512 1024
    catlass-py run 05_grouped_matmul_slice_k 8 256 512 1024 --cores 4 --json

The K axis is split by a group list (inclusive prefix sums over k): C_g = A[:, K_g] @ B[K_g, :] for every group, C
is [G, m, n]. A is column-major, B row-major, fp16 in and out. Groups with an empty K slice get C_g = 0 from the
vector cores (``MemFill``); the device C starts uninitialised (here: the poison pattern, NaN in fp16), so a missing
zero fill shows. The assembly (:mod:`catlass_py.assemblies.grouped_matmul_slice_k`) follows
``grouped_matmul_slice_k.cpp`` (``MmadAtlasA2PreloadAsync<1, 2, 4, 2, 1, true, true>``, L1 128x256x256, L0
128x256x64, swizzle ``<3,1>``). The inputs are generated like the C++, whose bounds are ``fp16_t`` values: see
:func:`catlass_py.data.fill_random_fp16_t` for why nearly every element of A and B is then 5.0.

The host follows the assembly's ``element`` (bf16, int8: the fp16_t values cast to it, as
``FillRandomData<ElementA>`` with the fp16_t bounds) and C's ``out_element`` (int32 for int8).
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2, GlobalBuffer
from catlass_py.assemblies.grouped_matmul_slice_k import assemble
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm
from catlass_py.ops.grouped_matmul_slice_k import validate_inputs
from catlass_py.runner import ExampleResult, ExampleRun, compare_output, host_dtype, parse_positional, to_device

NAME = "05_grouped_matmul_slice_k"
USAGE = "problem_count m n k [device_id]"
SUMMARY = "grouped C_g = A[:, K_g] @ B[K_g, :], K split by groups, empty groups zeroed by AIV, fp16 (GroupedMatmulSliceK)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16", "int8"), "the grouped matmul's element types"),
}


def make_inputs(problem_count: int, m: int, n: int, k: int, element: str = "float16"):
    """(A [m, k] logical, B [k, n], group list int64 over k) as the C++ builds them: A (column-major storage),
    B, then the unused host C (its draws still advance the stream), all with fp16_t bounds -5..5 and A, B of
    ``element`` (fp16 by default; ``FillRandomData<ElementA>``); then ``GenerateGroupList<int64_t>(k, G)``."""
    rng = data.GlibcRand()
    a_stored = data.fill_random_fp16_t(rng, m * k, -5.0, 5.0, element).reshape(k, m)
    b = data.fill_random_fp16_t(rng, k * n, -5.0, 5.0, element).reshape(k, n)
    rng.skip(m * n * problem_count)  # hostC is filled too (to "verify Ki = 0"), but never copied to the device
    group_list = data.generate_group_list(k, problem_count, rng=rng)
    return a_stored.T, b, group_list


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``problem_count m n k [device_id]``."""
    problem_count, m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num
    kernel = ex.assemble(assemble, arch)
    element, element_c = ex.setting("element"), kernel.block_mmad.element_c.name  # ElementA = ElementB, ElementC
    ex.require_supported(SUPPORTED_SETTINGS)
    c_bytes = host_dtype(element_c).itemsize * problem_count * m * n
    ex.reserve(kernel, inputs={"a": ((m, k), element), "b": ((k, n), element),
                               "group_list": ((problem_count,), "int64")},
               gm={"a": ((k, m), element), "c": ((problem_count, m, n), element_c)},
               golden=c_bytes + golden.peak_bytes("grouped_matmul_slice_k", groups=problem_count, m=m, n=n, k=k,
                                                  int8=element == "int8"))  # with the copy of C
    a, b, group_list = ex.inputs(make_inputs, problem_count, m, n, k, element)
    with ex.host_checks():
        validate_inputs(a, b, group_list, element_c, core_num, arch)

    gm_a = to_device("a", a.T)  # stored column-major (to_device makes the transpose contiguous)
    gm_b = to_device("b", b)
    gm_gl = to_device("group_list", group_list)
    c_buf = GlobalBuffer.empty(c_bytes, "c")  # uninitialised device memory (poison)
    gm_c = c_buf.tensor(element_c)

    args = kernel.Arguments(GemmCoord(m, n, k), problem_count, gm_gl, gm_a, gm_b, gm_c)
    gemm_op = DeviceGemm(kernel)
    gemm_op.initialize(args)

    total = kernel.total_blocks(group_list, m, n)
    obs = ex.observers(total)
    with ex.timing():
        launch_result = gemm_op.run(core_num, seed=seed, observers=obs, options=options)

    host_c = expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        host_c = c_buf.raw.view(host_dtype(element_c)).reshape(problem_count, m, n).copy()
        with ex.phase("golden"):
            expect = golden.grouped_matmul_slice_k(a, b, group_list)
            result = compare_output(host_c, expect, k)
    sizes = np.diff(np.concatenate([[0], group_list]))
    sched = kernel.block_scheduler
    return ex.result(
        host_c, result, golden=expect, shape={"problem_count": problem_count, "m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"empty_groups": int((sizes == 0).sum()), "total_blocks": total,
                 "swizzle": f"<{sched.swizzle_offset},{sched.swizzle_direction}>"},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
