"""CATLASS example 41: sparse_matmul_tla on simulated Atlas A2 AI cores.

    python examples/41_sparse_matmul_tla.py 160 320 64
    catlass-py run 41_sparse_matmul_tla 160 320 64 --cores 4 --json

C[m, n] = A[m, k] @ B[k, n], int8 in, int32 out, with B 4:2 structured-sparse (at most two non-zeros in every four
consecutive elements along k): the host keeps B's two values per group (the dense ``k/2 x n`` B, column-major)
and their 2-bit positions (the index, in NZ fractals of 16 columns x 8 bytes); on the cube
``LoadDataWithSparse`` brings both into L0B and ``MmadWithSparse`` picks the matching elements of A
(``KernelSparseMatmul`` + ``BlockMmadSparseTla<SparseMatmulMultiBlockOnKAxis>``, ``BlockSchedulerIterateK``;
:mod:`catlass_py.assemblies.sparse_matmul_tla` follows ``sparse_matmul_tla.cpp``). The launch uses the example's
``GetTotalBlockNum`` AI cores.

The host data is ``sparse_gen_data.py``'s: A int8 in -10..9, B with two distinct non-zero positions per group
holding values in 1..9, compressed to the dense B and the NZ index (:mod:`catlass_py.sparse`); the generator is
unseeded, here it draws from ``numpy.random.RandomState(1)`` (vectorised, so not the Python loop's stream). The
golden is the generator's: B expanded from the dense values and the index, then the exact int32 product, compared
exactly (``CompareData`` of int32). The index buffer holds the whole padded NZ index (``round_up(n, 16) *
round_up(k / 8, 8)`` bytes); the C++ reads ``(n * k + 7) / 8`` bytes of the file, the same when ``n % 16 == 0`` and
``k % 64 == 0``, too few otherwise (the kernel reads whole fractals). Shapes whose last block the kernel stores past
C (m > 128 or n > 256 and not a multiple of 16) are refused before the launch, as is a k that is not a multiple
of 8 (the generator's check).
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden, sparse
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.sparse_matmul_tla import assemble
from catlass_py.gemm.block import MatmulShape
from catlass_py.kernel import DeviceGemm
from catlass_py.kernel.sparse_matmul_tla import SparseBlockMmadArguments
from catlass_py.ops.sparse_matmul_tla import validate_inputs
from catlass_py.runner import ExampleResult, ExampleRun, parse_positional, to_device
from catlass_py.tla import make_layout_tag
from catlass_py.virtual import virtual_array

NAME = "41_sparse_matmul_tla"
USAGE = "m n k [device_id]"
SUMMARY = ("int8 C = A @ B with a 4:2 structured-sparse B (dense values + 2-bit NZ index; LoadDataWithSparse, "
           "MmadWithSparse; KernelSparseMatmul + BlockMmadSparseTla)")


def make_inputs(m: int, n: int, k: int):
    """``sparse_gen_data.py``'s host data: A [m, k] int8 in -10..9, then the sparse B [k, n] (two positions of every
    group of four along k hold 1..9), compressed: the dense B [n, k/2] and the ND index [n, k/8]; returns (A,
    sparse B, dense B, index); shape-only arrays inside :func:`catlass_py.data.shape_only_fills` (a timing-only
    run)."""
    if data.shape_only_active():
        return (virtual_array((m, k), np.int8), virtual_array((k, n), np.int8), virtual_array((n, k // 2), np.int8),
                virtual_array((n, k // 8), np.uint8))
    rs = np.random.RandomState(1)
    a = rs.randint(-10, 10, (m, k)).astype(np.int8)
    keys = rs.random_sample((n, k // 4, 4))
    values = rs.randint(1, 10, (n, k // 4, 2)).astype(np.int8)
    groups = np.zeros((n, k // 4, 4), np.int8)
    np.put_along_axis(groups, np.argsort(keys, axis=-1)[..., :2], values, axis=-1)
    b = np.ascontiguousarray(groups.reshape(n, k).T)
    dense, index = sparse.compress_4to2(b)
    return a, b, dense, index


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``; ``observers`` join the launch,
    ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches and ``config`` holds keywords for
    :func:`~catlass_py.assemblies.sparse_matmul_tla.assemble` (tile shapes, policy); ``numerics=False``: timing
    only (shape-only operands and index, nothing compared)."""
    m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    aic_core_num = ex.core_num  # GetCoreNumAic()
    kernel = ex.assemble(assemble, arch)
    l1 = kernel.block_mmad.l1_tile_shape
    validate_inputs(np.empty((m, k), np.int8), np.empty((k, n), np.int8), aic_core_num, arch, (l1.m, l1.n))
    idx_bytes = sparse.index_nz_bytes(n, k)
    ex.reserve(kernel, inputs={"a": ((m, k), "int8"), "b": ((k, n), "int8"), "dense": ((n, k // 2), "int8"),
                               "index": ((n, k // 8), "uint8")},
               gm={"index_nz": ((idx_bytes,), "uint8"), "c": ((m, n), "int32")},
               golden=golden.peak_bytes("sparse_matmul", m=m, n=n, k=k))
    a, b, dense, index = ex.inputs(make_inputs, m, n, k)

    # LayoutTagA::MakeLayout<ElementA>(m, k), LayoutTagB::MakeLayout<ElementB>(k / 2, n) (ColumnMajor: trans B),
    # LayoutTagC::MakeLayout<ElementC>(m, n), each through tla::MakeLayoutFromTag
    layout_a = make_layout_tag("int8", "RowMajor", m, k)
    layout_b = make_layout_tag("int8", "ColumnMajor", k // 2, n)
    layout_c = make_layout_tag("int32", "RowMajor", m, n)
    gm_a = to_device("a", a)
    gm_b = to_device("b", dense)  # the ColumnMajor k/2 x n B: one row of k/2 values per column
    index_nz = sparse.index_to_nz(index) if ex.numerics else virtual_array((idx_bytes,), np.uint8)
    gm_idx = to_device("index", index_nz)
    host_c = ex.zeros((m, n), np.int32)
    gm_c = to_device("c", host_c, read_only=False)

    shape = MatmulShape(m, n, k, 1)
    args = kernel.Arguments(shape, SparseBlockMmadArguments(gm_a, gm_b, gm_c, None, gm_idx, layout_a, layout_b,
                                                            layout_c), aic_core_num)
    gemm_op = DeviceGemm(kernel)
    gemm_op.can_implement(args)  # the C++ ignores the answer; here CheckShape's failures raise
    gemm_op.initialize(args)  # no workspace
    block_num = kernel.block_num(shape, aic_core_num)  # GetTotalBlockNum<L1TileShape>(aicCoreNum, shape)

    obs = ex.observers(kernel.total_blocks((m, n, k)))
    with ex.timing():
        launch_result = gemm_op.run(block_num, seed=seed, observers=obs, options=options)

    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.sparse_matmul(a, dense, index)
            result = golden.compare_exact(host_c, expect)
    return ex.result(
        host_c, result, shape={"m": m, "n": n, "k": k}, launch_result=launch_result, golden=expect,
        details={"total_blocks": kernel.total_blocks((m, n, k)), "block_num": block_num,
                 "index_bytes": idx_bytes,
                 **({"nonzeros": int(np.count_nonzero(b))} if ex.numerics else {})},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
