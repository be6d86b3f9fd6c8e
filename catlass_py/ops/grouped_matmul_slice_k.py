"""``grouped_matmul_slice_k``: CATLASS example 05 (``GroupedMatmulSliceK`` + ``MmadAtlasA2PreloadAsync``) as a
numpy-in / numpy-out function."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload


from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.grouped_matmul_slice_k import assemble
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.layout import ColumnMajor
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import (
    chosen_kernel,
    array_op,
    as_array,
    check_core_num,
    check_extent,
    check_group_list,
    element_of,
    op_options,
    out_element,
)

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult


@lru_cache(maxsize=16)
def build_kernel(arch: ArchSpec = ATLAS_A2, element: str = "float16", out: str | None = None):
    """Example 05's kernel for these types (:mod:`catlass_py.assemblies.grouped_matmul_slice_k`)."""
    return assemble(arch, element=element, out_element=out)


def validate_inputs(a, b, group_list, out_dtype, core_num, arch):
    """Check every input of the op; return (g, m, n, k, input element, output element)."""
    a = as_array("a", a, ("float16", "bfloat16", "int8"), 2)
    elem = element_of("a", a)
    b = as_array("b", b, elem, 2)
    m, k = a.shape
    kb, n = b.shape
    if kb != k:
        raise ArgumentError(f"b: expected shape ({k}, n) to match a's k = {k}, got {b.shape}")
    gl = as_array("group_list", group_list, "int64", 1)
    g = gl.shape[0]
    if g == 0:
        raise ArgumentError("group_list: expected at least one group, got none")
    check_extent("m", m)
    check_extent("n", n)
    check_extent("k", k)
    check_group_list(gl, g, k, axis="k")
    out = out_element(elem, out_dtype)
    check_core_num(core_num, arch)
    return g, m, n, k, elem, out


@overload
def grouped_matmul_slice_k(a: ArrayT, b: ArrayLike, group_list: ArrayLike, *, out_dtype: DTypeLike = ...,
                           core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                           options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                           return_launch: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...) -> ArrayT: ...


@overload
def grouped_matmul_slice_k(a: ArrayT, b: ArrayLike, group_list: ArrayLike, *, out_dtype: DTypeLike = ...,
                           core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                           options: LaunchParams | None = ..., return_report: Literal[True],
                           return_launch: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def grouped_matmul_slice_k(a: ArrayT, b: ArrayLike, group_list: ArrayLike, *, out_dtype: DTypeLike = ...,
                           core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                           options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                           return_launch: Literal[True], observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def grouped_matmul_slice_k(a: ArrayT, b: ArrayLike, group_list: ArrayLike, *, out_dtype: DTypeLike = ...,
                           core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                           options: LaunchParams | None = ..., return_report: Literal[True],
                           return_launch: Literal[True], observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def grouped_matmul_slice_k(a: ArrayT, b: ArrayLike, group_list: ArrayLike, *, out_dtype: DTypeLike = ...,
                           core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                           options: LaunchParams | None = ..., return_report: bool = ..., return_launch: bool = ...,
                           observers: Sequence[Observer] = ..., kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def grouped_matmul_slice_k(a, b, group_list, *, out_dtype=None, core_num: int = 24, seed: int | None = None,
                           arch: ArchSpec | str = ATLAS_A2, options=None, return_report: bool = False,
                           return_launch: bool = False, observers=(), kernel=None):
    """Grouped matmul with K split by groups (CATLASS ``GroupedMatmulSliceK``, example 05) on simulated AI cores.

    ``a`` [m, k] (stored column-major on the device, as the kernel requires) and ``b`` [k, n] (row-major),
    float16, bfloat16 or int8; ``group_list`` int64 [g]: inclusive prefix sums over k (K past the last value
    is unused). Returns C [g, m, n] with ``C[i] = a[:, K_i] @ b[K_i, :]``; a group with an empty K slice is
    zero-filled by the vector cores. Launch keywords as :mod:`catlass_py.ops.operator`. Inputs are never
    modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    g, m, n, k, elem, out = validate_inputs(a, b, group_list, out_dtype, run.core_num, run.arch)
    kernel = chosen_kernel(kernel, build_kernel(run.arch, elem, out))
    args, host = run.device_arguments(
        "grouped_matmul_slice_k", kernel,
        lambda gm: kernel.Arguments(GemmCoord(m, n, k), g, gm["group_list"], gm["a"], gm["b"], gm["c"]),
        inputs={"group_list": group_list, "a": (a, ColumnMajor), "b": b},
        outputs={"c": ((g, m, n), get_dtype(out).numpy)})
    return run.run(kernel, args, host["c"])


__all__ = ["build_kernel", "grouped_matmul_slice_k", "validate_inputs"]
