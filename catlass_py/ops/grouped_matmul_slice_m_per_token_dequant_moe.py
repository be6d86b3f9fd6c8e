"""``grouped_matmul_slice_m_per_token_dequant_moe``: CATLASS example 07 (``GroupedMatmulSliceMPerTokenDequant``,
full-size workspace) as a numpy-in / numpy-out function. The kernel is assembled by
:mod:`catlass_py.assemblies.grouped_matmul_slice_m_per_token_dequant_moe`."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.grouped_matmul_slice_m_per_token_dequant_moe import assemble
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import (
    chosen_kernel,
    array_op,
    as_array,
    check_core_num,
    check_group_list,
    check_positive,
    check_shape,
    op_options,
    parse_out_dtype,
)

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult

SCALE_TYPES = ("float32", "float16", "bfloat16")
OUT_TYPES = ("float16", "bfloat16")


@lru_cache(maxsize=16)
def build_kernel(arch: ArchSpec = ATLAS_A2, out_dtype: str = "float16", scale_dtype: str = "float32",
                 element_group_list: str = "int32"):
    """Example 07's kernel (PreloadAsync<1,2,2,4,1,false,true>, L1 128x256x256, L0 128x256x64, per-token
    dequant 32x256, GemmIdentityBlockSwizzle<3,0>), assembled by
    :mod:`catlass_py.assemblies.grouped_matmul_slice_m_per_token_dequant_moe`."""
    return assemble(arch, out_dtype=out_dtype, scale_dtype=scale_dtype, element_group_list=element_group_list)


def validate_inputs(a, b, group_list, scale, per_token_scale, out_dtype, core_num, arch):
    """Check every input; return (g, m, n, k, out dtype, scale dtype, group-list dtype)."""
    a = as_array("a", a, "int8", 2)
    b = as_array("b", b, "int8", 3)
    gl = as_array("group_list", group_list, ("int32", "int64"), 1)
    scale = as_array("scale", scale, SCALE_TYPES, 2)
    sdt = str(scale.dtype)
    per_token_scale = as_array("per_token_scale", per_token_scale, sdt, 1)
    m, k = a.shape
    g, kb, n = b.shape
    if kb != k:
        raise ArgumentError(f"b: expected shape (g, {k}, n) to match a's k = {k}, got {b.shape}")
    check_positive("b", g, "the group count")
    check_shape("scale", scale, (g, n), "groups x n")
    check_shape("per_token_scale", per_token_scale, (m,), "one per row of a")
    if gl.shape[0] != g:
        raise ArgumentError(f"group_list: expected {g} entries (one per group of b), got {gl.shape[0]}")
    check_group_list(gl.astype(np.int64), g, m)
    # float32 scales: D is float16 or bfloat16 (float16 by default); otherwise D has the scales' type
    out = parse_out_dtype(out_dtype, OUT_TYPES if sdt == "float32" else (sdt,), "float16" if sdt == "float32" else sdt)
    check_core_num(core_num, arch)
    return g, m, n, k, out, sdt, str(gl.dtype)


@overload
def grouped_matmul_slice_m_per_token_dequant_moe(a: ArrayT, b: ArrayLike, group_list: ArrayLike,
                                                 scale: ArrayLike, per_token_scale: ArrayLike, *,
                                                 out_dtype: DTypeLike = ..., core_num: int = ...,
                                                 seed: int | None = ..., arch: ArchSpec | str = ...,
                                                 options: LaunchParams | None = ...,
                                                 return_report: Literal[False] = ...,
                                                 return_launch: Literal[False] = ...,
                                                 observers: Sequence[Observer] = ..., kernel: Any = ...) -> ArrayT: ...


@overload
def grouped_matmul_slice_m_per_token_dequant_moe(a: ArrayT, b: ArrayLike, group_list: ArrayLike,
                                                 scale: ArrayLike, per_token_scale: ArrayLike, *,
                                                 out_dtype: DTypeLike = ..., core_num: int = ...,
                                                 seed: int | None = ..., arch: ArchSpec | str = ...,
                                                 options: LaunchParams | None = ..., return_report: Literal[True],
                                                 return_launch: Literal[False] = ...,
                                                 observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def grouped_matmul_slice_m_per_token_dequant_moe(a: ArrayT, b: ArrayLike, group_list: ArrayLike,
                                                 scale: ArrayLike, per_token_scale: ArrayLike, *,
                                                 out_dtype: DTypeLike = ..., core_num: int = ...,
                                                 seed: int | None = ..., arch: ArchSpec | str = ...,
                                                 options: LaunchParams | None = ...,
                                                 return_report: Literal[False] = ..., return_launch: Literal[True],
                                                 observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def grouped_matmul_slice_m_per_token_dequant_moe(a: ArrayT, b: ArrayLike, group_list: ArrayLike,
                                                 scale: ArrayLike, per_token_scale: ArrayLike, *,
                                                 out_dtype: DTypeLike = ..., core_num: int = ...,
                                                 seed: int | None = ..., arch: ArchSpec | str = ...,
                                                 options: LaunchParams | None = ..., return_report: Literal[True],
                                                 return_launch: Literal[True], observers: Sequence[Observer] = ...,
                                                 kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def grouped_matmul_slice_m_per_token_dequant_moe(a: ArrayT, b: ArrayLike, group_list: ArrayLike,
                                                 scale: ArrayLike, per_token_scale: ArrayLike, *,
                                                 out_dtype: DTypeLike = ..., core_num: int = ...,
                                                 seed: int | None = ..., arch: ArchSpec | str = ...,
                                                 options: LaunchParams | None = ..., return_report: bool = ...,
                                                 return_launch: bool = ..., observers: Sequence[Observer] = ...,
                                                 kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def grouped_matmul_slice_m_per_token_dequant_moe(a, b, group_list, scale, per_token_scale, *, out_dtype=None,
                                                 core_num: int = 24, seed: int | None = None,
                                                 arch: ArchSpec | str = ATLAS_A2, options=None,
                                                 return_report: bool = False, return_launch: bool = False,
                                                 observers=(), kernel=None):
    """CATLASS example 07 on simulated AI cores.

    ``a`` int8 [m, k]; ``b`` int8 [g, k, n]; ``group_list`` int32 (as the example) or int64 [g], prefix
    sums of group row counts; ``scale`` [g, n] and ``per_token_scale`` [m], both float32 (the example; D is
    then ``out_dtype``, float16 by default) or both D's type (float16/bfloat16). Returns D [m, n]; rows at or
    past ``group_list[-1]`` are 0. Bit-exact against the golden after its final rounding. ``k == 0`` is
    allowed (D is 0 on the covered rows: the epilogue's zero-fill path). Launch keywords as
    :mod:`catlass_py.ops.operator`. Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    g, m, n, k, out, sdt, gdt = validate_inputs(a, b, group_list, scale, per_token_scale, out_dtype, run.core_num,
                                                run.arch)
    if m == 0 or n == 0:
        return run.empty((m, n), get_dtype(out).numpy)
    kernel = chosen_kernel(kernel, build_kernel(run.arch, out, sdt, gdt), adopts=("epilogue d_type",))
    d_type = kernel.block_epilogue.d_type.element
    args, host = run.device_arguments(
        "grouped_matmul_slice_m_per_token_dequant_moe", kernel,
        lambda gm: kernel.Arguments(GemmCoord(m, n, k), g, gm["group_list"], gm["a"], gm["b"], gm["scale"],
                                    gm["per_token_scale"], gm["d"]),
        inputs={"a": a, "b": b, "group_list": group_list, "scale": scale, "per_token_scale": per_token_scale},
        outputs={"d": ((m, n), d_type.numpy)})
    return run.run(kernel, args, host["d"])


__all__ = ["build_kernel", "grouped_matmul_slice_m_per_token_dequant_moe", "validate_inputs"]
