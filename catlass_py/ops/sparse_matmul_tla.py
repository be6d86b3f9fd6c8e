"""``sparse_matmul_tla``: CATLASS example 41 (``KernelSparseMatmul``: int8 A times a 4:2-sparse int8 B on the cube's
sparse Mmad, on TLA tensors) as a numpy-in / numpy-out function."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.sparse_matmul_tla import assemble
from catlass_py.errors import ArgumentError
from catlass_py.gemm.block.scheduler_iterate_k import MatmulShape
from catlass_py.kernel.sparse_matmul_tla import MATRIX_INNER_DIM_LIMIT_SIZE, SparseBlockMmadArguments
from catlass_py.ops.operator import array_op, as_array, check_core_num, chosen_kernel, op_options
from catlass_py.sparse import compress_4to2, index_to_nz
from catlass_py.tla import make_layout_tag

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, OperatorResult


@lru_cache(maxsize=8)
def build_kernel(arch: ArchSpec = ATLAS_A2):
    """Example 41's kernel (:mod:`catlass_py.assemblies.sparse_matmul_tla`)."""
    return assemble(arch)


def validate_inputs(a, b, core_num, arch, l1_tile=(128, 256)) -> tuple[int, int, int]:
    """Check the operands (the 4:2 structure is checked by the compression); return (m, n, k)."""
    a = as_array("a", a, "int8", 2)
    b = as_array("b", b, "int8", 2)
    m, k = a.shape
    if b.shape[0] != k:
        raise ArgumentError(f"b: expected shape ({k}, n) to match a's k = {k}, got {b.shape}")
    n = b.shape[1]
    if k <= 0 or k % 8:
        raise ArgumentError(f"a: k = {k} must be a positive multiple of 8 (sparse k must be multiple of 8: two groups "
                            "of four per index byte; with k == 0 the block would store an accumulator it never "
                            "computed)")
    if k > MATRIX_INNER_DIM_LIMIT_SIZE:
        raise ArgumentError(f"a: k = {k} exceeds CheckShape's inner-dimension limit {MATRIX_INNER_DIM_LIMIT_SIZE}")
    for name, extent, tile in (("m", m, l1_tile[0]), ("n", n, l1_tile[1])):
        if extent > tile and extent % 16:
            raise ArgumentError(
                f"{name} = {extent}: with more than one block along {name} ({tile} per block) it must be a multiple "
                f"of 16: the kernel moves whole 16-row/column fractals of its last block (CopyL0CToGmSparseTla's "
                f"{'mSize' if name == 'm' else 'nSize'} = min(fractals of the L0C tile, {name} - 0) from the block's "
                f"pointer), so the store would run past C" + (" and A's load past A" if name == "m" else
                                                               " into the next row of C"))
    check_core_num(core_num, arch)
    return m, n, k


@overload
def sparse_matmul_tla(a: ArrayT, b: ArrayLike, *, core_num: int = ..., seed: int | None = ...,
                      arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                      return_report: Literal[False] = ..., return_launch: Literal[False] = ...,
                      observers: Sequence[Observer] = ..., kernel: Any = ...) -> ArrayT: ...


@overload
def sparse_matmul_tla(a: ArrayT, b: ArrayLike, *, core_num: int = ..., seed: int | None = ...,
                      arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                      return_report: Literal[True], return_launch: Literal[False] = ...,
                      observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def sparse_matmul_tla(a: ArrayT, b: ArrayLike, *, core_num: int = ..., seed: int | None = ...,
                      arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                      return_report: Literal[False] = ..., return_launch: Literal[True],
                      observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def sparse_matmul_tla(a: ArrayT, b: ArrayLike, *, core_num: int = ..., seed: int | None = ...,
                      arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                      return_report: Literal[True], return_launch: Literal[True],
                      observers: Sequence[Observer] = ...,
                      kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def sparse_matmul_tla(a: ArrayT, b: ArrayLike, *, core_num: int = ..., seed: int | None = ...,
                      arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                      return_report: bool = ..., return_launch: bool = ...,
                      observers: Sequence[Observer] = ..., kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def sparse_matmul_tla(a, b, *, core_num: int = 24, seed: int | None = None, arch: ArchSpec | str = ATLAS_A2,
                      options=None, return_report: bool = False, return_launch: bool = False, observers=(),
                      kernel=None):
    """C = A @ B with a 4:2 structured-sparse B on the cube's sparse Mmad (CATLASS ``KernelSparseMatmul``, example
    41).

    ``a`` int8 [m, k] (row-major on the device) and ``b`` int8 [k, n], the logical sparse B: at most two non-zeros
    in every group of four consecutive elements along k (:class:`ArgumentError` naming the first group that has
    more). The host compresses B as the example's generator does (:mod:`catlass_py.sparse`: the dense ``k/2 x n``
    values stored column-major and their 2-bit indices in NZ) and the kernel expands it on the cube. Returns C [m,
    n] int32, exact (wrapping like int32). k must be a positive multiple of 8 and at most 65536; m (n) above 128
    (256), i.e. more than one block, must be a multiple of 16 (the kernel stores whole fractals of its last block,
    which would run past C). The launch uses the example's ``GetTotalBlockNum`` AI cores (at most ``core_num``).
    Launch keywords as :mod:`catlass_py.ops.operator`. Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    kernel = chosen_kernel(kernel, build_kernel(run.arch))
    l1 = kernel.block_mmad.l1_tile_shape
    m, n, k = validate_inputs(a, b, run.core_num, run.arch, (l1.m, l1.n))
    dense, index = compress_4to2(b)
    if m == 0 or n == 0:
        return run.empty((m, n), np.int32)
    shape = MatmulShape(m, n, k, 1)
    used = kernel.block_num(shape, run.core_num)

    def arguments(gm):
        mmad = SparseBlockMmadArguments(gm["a"], gm["b"], gm["c"], None, gm["index"],
                                        make_layout_tag("int8", "RowMajor", m, k),
                                        make_layout_tag("int8", "ColumnMajor", k // 2, n),
                                        make_layout_tag("int32", "RowMajor", m, n))
        return kernel.Arguments(shape, mmad, run.core_num)

    args, host = run.device_arguments("sparse_matmul_tla", kernel, arguments,
                                      inputs={"a": a, "b": dense, "index": index_to_nz(index)},
                                      outputs={"c": ((m, n), np.int32)})
    return dataclasses.replace(run, core_num=used).run(kernel, args, host["c"])


__all__ = ["build_kernel", "sparse_matmul_tla", "validate_inputs"]
