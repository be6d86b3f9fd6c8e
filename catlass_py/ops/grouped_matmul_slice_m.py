"""``grouped_matmul_slice_m``: CATLASS example 02 (``GroupedMatmulSliceM`` + ``MmadAtlasA2PreloadAsync``) as a
numpy-in / numpy-out function."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.grouped_matmul_slice_m import assemble, tiling_for
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
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
    parse_layout,
)

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult


@lru_cache(maxsize=32)
def build_kernel(arch: ArchSpec = ATLAS_A2, tiling: str = "k<=n", element: str = "float16", layout_b="column",
                 out: str | None = None, segmented: bool = False):
    """Example 02's kernel for one tiling and these types (:mod:`catlass_py.assemblies.grouped_matmul_slice_m`)."""
    return assemble(arch, tiling=tiling, element=element, layout_b=parse_layout("layout_b", layout_b),
                    out_element=out, segmented=segmented)


def check_segmented_group_list(group_list, group_count: int, total: int, *, axis: str = "m") -> np.ndarray:
    """A segmented group list: int64 group sizes, one per group, each >= 0, summing to at most ``total``."""
    gl = as_array("group_list", group_list, "int64", 1)
    if gl.shape[0] != group_count:
        raise ArgumentError(f"group_list: expected {group_count} entries (one per group of b), got {gl.shape[0]}")
    if group_count and gl.min() < 0:
        i = int(np.argmin(gl))
        raise ArgumentError(f"group_list: group sizes must be >= 0, got {int(gl[i])} at index {i}")
    s = sum(gl.tolist())  # Python ints: an int64 sum would wrap (four times 2**62 is 0)
    if s > total:
        raise ArgumentError(f"group_list: group sizes must sum to at most {axis} = {total}, got {s}")
    return gl


def validate_inputs(a, b, group_list, layout_b, segmented, out_dtype, core_num, arch):
    """Check every input of the op; return (g, m, n, k, input element, output element)."""
    a = as_array("a", a, ("float16", "bfloat16", "int8"), 2)
    elem = element_of("a", a)
    b = as_array("b", b, elem, 3)
    parse_layout("layout_b", layout_b)
    if not isinstance(segmented, bool):
        raise ArgumentError(f"segmented: expected a bool, got {segmented!r}")
    m, k = a.shape
    g, kb, n = b.shape
    if kb != k:
        raise ArgumentError(f"b: expected shape (g, {k}, n) to match a's k = {k}, got {b.shape}")
    if g == 0:
        raise ArgumentError(f"b: expected at least one group, got shape {b.shape}")
    check_extent("m", m)
    check_extent("n", n)
    check_extent("k", k, low=1)
    if segmented:
        check_segmented_group_list(group_list, g, m)
    else:
        check_group_list(group_list, g, m)
    out = out_element(elem, out_dtype)
    check_core_num(core_num, arch)
    return g, m, n, k, elem, out


@overload
def grouped_matmul_slice_m(a: ArrayT, b: ArrayLike, group_list: ArrayLike, *, layout_b: LayoutLike = ...,
                           segmented: bool = ..., out_dtype: DTypeLike = ..., core_num: int = ...,
                           seed: int | None = ..., arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                           return_report: Literal[False] = ..., return_launch: Literal[False] = ...,
                           observers: Sequence[Observer] = ..., kernel: Any = ...) -> ArrayT: ...


@overload
def grouped_matmul_slice_m(a: ArrayT, b: ArrayLike, group_list: ArrayLike, *, layout_b: LayoutLike = ...,
                           segmented: bool = ..., out_dtype: DTypeLike = ..., core_num: int = ...,
                           seed: int | None = ..., arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                           return_report: Literal[True], return_launch: Literal[False] = ...,
                           observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def grouped_matmul_slice_m(a: ArrayT, b: ArrayLike, group_list: ArrayLike, *, layout_b: LayoutLike = ...,
                           segmented: bool = ..., out_dtype: DTypeLike = ..., core_num: int = ...,
                           seed: int | None = ..., arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                           return_report: Literal[False] = ..., return_launch: Literal[True],
                           observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def grouped_matmul_slice_m(a: ArrayT, b: ArrayLike, group_list: ArrayLike, *, layout_b: LayoutLike = ...,
                           segmented: bool = ..., out_dtype: DTypeLike = ..., core_num: int = ...,
                           seed: int | None = ..., arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                           return_report: Literal[True], return_launch: Literal[True],
                           observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def grouped_matmul_slice_m(a: ArrayT, b: ArrayLike, group_list: ArrayLike, *, layout_b: LayoutLike = ...,
                           segmented: bool = ..., out_dtype: DTypeLike = ..., core_num: int = ...,
                           seed: int | None = ..., arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                           return_report: bool = ..., return_launch: bool = ..., observers: Sequence[Observer] = ...,
                           kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def grouped_matmul_slice_m(a, b, group_list, *, layout_b="column", segmented: bool = False, out_dtype=None,
                           core_num: int = 24, seed: int | None = None, arch: ArchSpec | str = ATLAS_A2,
                           options=None, return_report: bool = False, return_launch: bool = False, observers=(),
                           kernel=None):
    """Grouped matmul with A split along M (CATLASS ``GroupedMatmulSliceM``, example 02) on simulated AI cores.

    ``a`` [m, k]; ``b`` [g, k, n] (the logical per-group matrices; ``layout_b`` 'column' - the example's
    ColumnMajor, each stored n x k - or 'row'); ``group_list`` int64 [g]: inclusive prefix sums of the group
    row counts, or the row counts themselves with ``segmented=True``. float16, bfloat16 or int8 operands.
    The tiling follows the example (k > n: 256 x 128 blocks and swizzle <3,0>; else 128 x 256 and <3,1>).
    Returns C [m, n]; rows past the last group are 0. Launch keywords as :mod:`catlass_py.ops.operator`.
    Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    g, m, n, k, elem, out = validate_inputs(a, b, group_list, layout_b, segmented, out_dtype, run.core_num, run.arch)
    lb = parse_layout("layout_b", layout_b)
    kernel = chosen_kernel(kernel, build_kernel(run.arch, tiling_for(n, k), elem, lb, out, segmented))
    args, host = run.device_arguments(
        "grouped_matmul_slice_m", kernel,
        lambda gm: kernel.Arguments(GemmCoord(m, n, k), g, gm["group_list"], gm["a"], gm["b"], gm["c"]),
        inputs={"group_list": group_list, "a": a, "b": (b, lb)},
        outputs={"c": ((m, n), get_dtype(out).numpy)})
    return run.run(kernel, args, host["c"])


__all__ = ["build_kernel", "check_segmented_group_list", "grouped_matmul_slice_m", "validate_inputs"]
