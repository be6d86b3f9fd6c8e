"""``grouped_matmul_slice_k_per_token_dequant``: CATLASS example 11 (``GroupedMatmulSliceKPerTokenDequant``) as
a numpy-in / numpy-out function. The kernel is assembled by
:mod:`catlass_py.assemblies.grouped_matmul_slice_k_per_token_dequant`."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.grouped_matmul_slice_k_per_token_dequant import assemble
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord

OUT_TYPES = ("bfloat16", "float16")
from catlass_py.ops.operator import (
    chosen_kernel,
    array_op,
    as_array,
    check_core_num,
    check_group_list,
    check_positive,
    check_shape,
    op_options,
)

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult


@lru_cache(maxsize=16)
def build_kernel(arch: ArchSpec = ATLAS_A2, out_dtype: str = "bfloat16", element_group_list: str = "int64"):
    """Example 11's kernel (A ColumnMajor, PreloadAsync<1,2,2,4,1,false,true>, L1 128x256x256, L0 128x256x64,
    per-token dequant 32x256, GemmIdentityBlockSwizzle<3,0>), assembled by
    :mod:`catlass_py.assemblies.grouped_matmul_slice_k_per_token_dequant`."""
    return assemble(arch, out_dtype=out_dtype, element_group_list=element_group_list)


def validate_inputs(a, b, group_list, scale, per_token_scale, core_num, arch):
    """Check every input; return (g, m, n, k, out dtype, group-list dtype)."""
    a = as_array("a", a, "int8", 2)
    b = as_array("b", b, "int8", 2)
    gl = as_array("group_list", group_list, ("int64", "int32"), 1)
    scale = as_array("scale", scale, OUT_TYPES, 2)
    out = str(scale.dtype)
    per_token_scale = as_array("per_token_scale", per_token_scale, out, 2)
    m, k = a.shape
    if b.shape[0] != k:
        raise ArgumentError(f"b: expected shape ({k}, n) to match a's k = {k}, got {b.shape}")
    n = b.shape[1]
    g = gl.shape[0]
    check_positive("group_list", g, "the group count")
    check_shape("scale", scale, (g, n), "groups x n")
    check_shape("per_token_scale", per_token_scale, (g, m), "groups x m")
    check_group_list(gl.astype(np.int64), g, k, axis="k")
    check_core_num(core_num, arch)
    return g, m, n, k, out, str(gl.dtype)


@overload
def grouped_matmul_slice_k_per_token_dequant(a: ArrayT, b: ArrayLike, group_list: ArrayLike,
                                             scale: ArrayLike, per_token_scale: ArrayLike, *, core_num: int = ...,
                                             seed: int | None = ..., arch: ArchSpec | str = ...,
                                             return_report: Literal[False] = ..., observers: Sequence[Observer] = ...,
                                             kernel: Any = ..., options: LaunchParams | None = ...,
                                             return_launch: Literal[False] = ...) -> ArrayT: ...


@overload
def grouped_matmul_slice_k_per_token_dequant(a: ArrayT, b: ArrayLike, group_list: ArrayLike,
                                             scale: ArrayLike, per_token_scale: ArrayLike, *, core_num: int = ...,
                                             seed: int | None = ..., arch: ArchSpec | str = ...,
                                             return_report: Literal[True], observers: Sequence[Observer] = ...,
                                             kernel: Any = ..., options: LaunchParams | None = ...,
                                             return_launch: Literal[False] = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def grouped_matmul_slice_k_per_token_dequant(a: ArrayT, b: ArrayLike, group_list: ArrayLike,
                                             scale: ArrayLike, per_token_scale: ArrayLike, *, core_num: int = ...,
                                             seed: int | None = ..., arch: ArchSpec | str = ...,
                                             return_report: Literal[False] = ..., observers: Sequence[Observer] = ...,
                                             kernel: Any = ..., options: LaunchParams | None = ...,
                                             return_launch: Literal[True]) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def grouped_matmul_slice_k_per_token_dequant(a: ArrayT, b: ArrayLike, group_list: ArrayLike,
                                             scale: ArrayLike, per_token_scale: ArrayLike, *, core_num: int = ...,
                                             seed: int | None = ..., arch: ArchSpec | str = ...,
                                             return_report: Literal[True], observers: Sequence[Observer] = ...,
                                             kernel: Any = ..., options: LaunchParams | None = ...,
                                             return_launch: Literal[True]) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def grouped_matmul_slice_k_per_token_dequant(a: ArrayT, b: ArrayLike, group_list: ArrayLike,
                                             scale: ArrayLike, per_token_scale: ArrayLike, *, core_num: int = ...,
                                             seed: int | None = ..., arch: ArchSpec | str = ...,
                                             return_report: bool = ..., observers: Sequence[Observer] = ...,
                                             kernel: Any = ..., options: LaunchParams | None = ...,
                                             return_launch: bool = ...) -> OperatorResult[ArrayT]: ...


@array_op
def grouped_matmul_slice_k_per_token_dequant(a, b, group_list, scale, per_token_scale, *, core_num: int = 24,
                                             seed: int | None = None, arch: ArchSpec | str = ATLAS_A2,
                                             return_report: bool = False, observers=(), kernel=None, options=None,
                                             return_launch: bool = False):
    """CATLASS example 11 on simulated AI cores.

    ``a`` int8 [m, k] (logical; stored column-major in GM, as the kernel requires), ``b`` int8 [k, n],
    ``group_list`` int64 (or int32) [g] prefix sums over k, ``scale`` [g, n] and ``per_token_scale``
    [g, m], both bfloat16 (or both float16, which is then D's type). Returns D [g, m, n]; groups with an
    empty K range are 0. Bit-exact against the golden after its final rounding.
    Launch keywords as :mod:`catlass_py.ops.operator`. Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    g, m, n, k, out, gdt = validate_inputs(a, b, group_list, scale, per_token_scale, run.core_num, run.arch)
    if m == 0 or n == 0:
        return run.empty((g, m, n), scale.dtype)
    kernel = chosen_kernel(kernel, build_kernel(run.arch, out, gdt), adopts=("A", "B", "epilogue d_type"))
    mmad = kernel.block_mmad
    args, host = run.device_arguments(
        "grouped_matmul_slice_k_per_token_dequant", kernel,
        lambda gm: kernel.Arguments(GemmCoord(m, n, k), g, gm["group_list"], gm["a"], gm["b"], gm["scale"],
                                    gm["per_token_scale"], gm["d"]),
        inputs={"group_list": group_list, "a": (a, mmad.a_type.layout), "b": (b, mmad.b_type.layout),
                "scale": scale, "per_token_scale": per_token_scale},
        outputs={"d": ((g, m, n), kernel.block_epilogue.d_type.element.numpy)})
    return run.run(kernel, args, host["d"])


__all__ = ["build_kernel", "grouped_matmul_slice_k_per_token_dequant", "validate_inputs"]
