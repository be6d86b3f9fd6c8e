"""CATLASS example 08: grouped_matmul on simulated Atlas A2 AI cores.

    python examples/08_grouped_matmul.py 8 256 512 1024
    catlass-py run 08_grouped_matmul 8 256 512 1024 --cores 4 --json

``GroupedMatmul`` takes a list of problem shapes and layouts, one per group (at most 256). The C++ example
builds the list by slicing K with ``GenerateGroupList(k, G)``: group g is (m, n, k_g) with A_g the column-major
m x k_g slab of A and B_g the row-major k_g x n slab of B; C is [G, m, n]. fp16 in and out,
``MmadAtlasA2PreloadAsync<1, 2, 4, 2, 1, true, true>``, L1 128x256x256, L0 128x256x64, swizzle ``<3,1>``.
A group with k_g = 0 issues no work: its C keeps the uninitialised device memory, and CATLASS's compare
(the slice-K overload) skips it. Inputs: fp16_t bounds -5..5 as in the C++ (see
:func:`catlass_py.data.fill_random_fp16_t`).

The host follows the assembly's template parameters: ``--set element=bf16`` (or int8) casts the drawn values to
that type (``FillRandomData<ElementA>`` with the fp16_t bounds), ``--set layout_a=row`` / ``layout_b=column``
store every group's slab of the same logical A / B in that layout (the slabs back to back), and C is of the
kernel's ``ElementC``.
"""

from __future__ import annotations

import sys
from itertools import pairwise

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2, GlobalBuffer
from catlass_py.assemblies.grouped_matmul import assemble
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm
from catlass_py.kernel.grouped_matmul import MAX_TENSOR_COUNT
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.ops.operator import as_stored
from catlass_py.runner import ExampleResult, ExampleRun, compare_output, host_dtype, parse_positional, to_device
from catlass_py.virtual import is_virtual, virtual_array

NAME = "08_grouped_matmul"
USAGE = "problem_count m n k [device_id]"
SUMMARY = "grouped matmul over a list of problem shapes (the example slices K), fp16 (GroupedMatmul + PreloadAsync)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16", "int8"), "the grouped matmul's element types"),
    "layout_a": ((RowMajor, ColumnMajor), "the host stores A_g row- or column-major"),
    "layout_b": ((RowMajor, ColumnMajor), "the host stores B_g row- or column-major"),
}


def make_inputs(problem_count: int, m: int, n: int, k: int, element: str = "float16"):
    """(A [m, k] logical, B [k, n], group list int32 over k) as the C++ builds them: A (column-major storage)
    and B with fp16_t bounds -5..5, of ``element`` (fp16 by default; ``FillRandomData<ElementA>``), then
    ``GenerateGroupList(k, G)`` (int32)."""
    rng = data.GlibcRand()
    a_stored = data.fill_random_fp16_t(rng, m * k, -5.0, 5.0, element).reshape(k, m)
    b = data.fill_random_fp16_t(rng, k * n, -5.0, 5.0, element).reshape(k, n)
    group_list = data.generate_group_list(k, problem_count, rng=rng).astype(np.int32)
    return a_stored.T, b, group_list


def stored_slabs(parts, layout) -> np.ndarray:
    """The groups' logical slabs back to back in one buffer, each stored in ``layout`` (as_stored)."""
    flat = [as_stored(x, layout).reshape(-1) for x in parts]
    if any(is_virtual(x) for x in flat):  # a timing-only run: shape-only operands
        return virtual_array(sum(x.size for x in flat), flat[0].dtype)
    return np.concatenate(flat)


def problem_lists(m: int, n: int, group_list, layout_a=ColumnMajor, layout_b=RowMajor, layout_c=RowMajor):
    """The example's per-group shapes (m, n, k_g) and layouts ``LayoutA{m, k_g}``, ``LayoutB{k_g, n}``,
    ``LayoutC{m, n}``."""
    shapes, la, lb, lc = [], [], [], []
    prev = 0
    for v in group_list:
        kg = int(v) - prev
        prev = int(v)
        shapes.append(GemmCoord(m, n, kg))
        la.append(layout_a(m, kg))
        lb.append(layout_b(kg, n))
        lc.append(layout_c(m, n))
    return shapes, la, lb, lc


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``problem_count m n k [device_id]``."""
    problem_count, m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num
    if not 1 <= problem_count <= MAX_TENSOR_COUNT:
        raise ArgumentError(f"problem_count: expected 1..{MAX_TENSOR_COUNT} (Do not support group count greater "
                            f"than 256), got {problem_count}")
    kernel = ex.assemble(assemble, arch)
    element, element_c = ex.setting("element"), kernel.block_mmad.element_c.name  # ElementA = ElementB, ElementC
    layout_a, layout_b = ex.setting("layout_a"), ex.setting("layout_b")
    ex.require_supported(SUPPORTED_SETTINGS)
    c_bytes = host_dtype(element_c).itemsize * problem_count * m * n
    ex.reserve(kernel, inputs={"a": ((m, k), element), "b": ((k, n), element),
                               "group_list": ((problem_count,), "int32")},
               gm={"a": ((k, m), element), "b": ((k, n), element), "c": ((problem_count, m, n), element_c)},
               golden=c_bytes + golden.peak_bytes("grouped_matmul_slice_k", groups=problem_count, m=m, n=n, k=k,
                                                  int8=element == "int8"))  # with the copy of C
    a, b, group_list = ex.inputs(make_inputs, problem_count, m, n, k, element)
    shapes, layouts_a, layouts_b, layouts_c = problem_lists(m, n, group_list, layout_a, layout_b)

    # every group's A_g = A[:, K_g] and B_g = B[K_g, :] stored in its layout, back to back (for the default
    # layouts: A's column-major k x m buffer and B's row-major one)
    bounds = np.concatenate([[0], group_list]).astype(np.int64)
    gm_a = to_device("a", stored_slabs([a[:, lo:hi] for lo, hi in pairwise(bounds)], layout_a))
    gm_b = to_device("b", stored_slabs([b[lo:hi] for lo, hi in pairwise(bounds)], layout_b))
    c_buf = GlobalBuffer.empty(c_bytes, "c")  # uninitialised device memory (poison)
    gm_c = c_buf.tensor(element_c)

    args = kernel.Arguments(problem_count, shapes, gm_a, layouts_a, gm_b, layouts_b, gm_c, layouts_c)
    gemm_op = DeviceGemm(kernel)
    gemm_op.can_implement(args)
    gemm_op.initialize(args)

    total = kernel.total_blocks(shapes)
    obs = ex.observers(total)
    with ex.timing():
        launch_result = gemm_op.run(core_num, seed=seed, observers=obs, options=options)

    # CATLASS's slice-K compare: groups whose K slice is empty are skipped.
    sizes = np.diff(np.concatenate([[0], group_list]))
    nonempty = sizes != 0
    host_c = expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        host_c = c_buf.raw.view(host_dtype(element_c)).reshape(problem_count, m, n).copy()
        with ex.phase("golden"):
            expect = golden.grouped_matmul_slice_k(a, b, group_list.astype(np.int64))
            result = compare_output(host_c[nonempty], expect[nonempty], k)
    sched = kernel.block_scheduler
    return ex.result(
        host_c, result, golden=expect, shape={"problem_count": problem_count, "m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"empty_groups": int((~nonempty).sum()), "total_blocks": total,
                 "swizzle": f"<{sched.swizzle_offset},{sched.swizzle_direction}>"},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
