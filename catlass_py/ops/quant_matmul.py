"""``quant_matmul``: CATLASS example 12 (``QuantMatmulMultiStageWorkspace``) as a numpy-in / numpy-out function.
The kernel is assembled by :mod:`catlass_py.assemblies.quant_matmul`."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload


from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.quant_matmul import assemble
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.ops.operator import (
    check_kernel,
    array_op,
    as_array,
    check_core_num,
    check_positive,
    check_shape,
    op_options,
    parse_layout,
)

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult


@lru_cache(maxsize=32)
def build_kernel(arch: ArchSpec = ATLAS_A2, swizzle_direction: int = 0, out_dtype: str = "float16",
                 layout_a=RowMajor, layout_b=ColumnMajor, workspace_stages: int = 2):
    """Example 12's kernel (L1 128x256x512, L0 128x256x128, PreloadAsyncWithCallback<1,2,2,2,1,false,true>,
    per-token dequant 32x256, GemmIdentityBlockSwizzle<3, direction>, 2 workspace stages)."""
    return assemble(arch, swizzle_direction=swizzle_direction, out_dtype=out_dtype, layout_a=layout_a,
                    layout_b=layout_b, workspace_stages=workspace_stages)


def validate_inputs(a, b, scale, per_token_scale, core_num, arch) -> tuple[int, int, int, str]:
    """Check every input of the op; return (m, n, k, out dtype name)."""
    a = as_array("a", a, "int8", 2)
    b = as_array("b", b, "int8", 2)
    scale = as_array("scale", scale, ("float16", "bfloat16"), 1)
    out = str(scale.dtype)
    per_token_scale = as_array("per_token_scale", per_token_scale, out, 1)
    m, k = a.shape
    if b.shape[0] != k:
        raise ArgumentError(f"b: expected shape ({k}, n) to match a's k = {k}, got {b.shape}")
    n = b.shape[1]
    check_positive("a", k, "k (with k == 0 no block is ever stored and the CATLASS kernel deadlocks)")
    check_shape("scale", scale, (n,), "one per column of b")
    check_shape("per_token_scale", per_token_scale, (m,), "one per row of a")
    check_core_num(core_num, arch)
    return m, n, k, out


@overload
def quant_matmul(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *, layout_a: LayoutLike = ...,
                 layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                 return_report: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...,
                 options: LaunchParams | None = ..., return_launch: Literal[False] = ...) -> ArrayT: ...


@overload
def quant_matmul(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *, layout_a: LayoutLike = ...,
                 layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                 return_report: Literal[True], observers: Sequence[Observer] = ..., kernel: Any = ...,
                 options: LaunchParams | None = ..., return_launch: Literal[False] = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def quant_matmul(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *, layout_a: LayoutLike = ...,
                 layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                 return_report: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...,
                 options: LaunchParams | None = ..., return_launch: Literal[True]) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def quant_matmul(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *, layout_a: LayoutLike = ...,
                 layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                 return_report: Literal[True], observers: Sequence[Observer] = ..., kernel: Any = ...,
                 options: LaunchParams | None = ..., return_launch: Literal[True]) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def quant_matmul(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *, layout_a: LayoutLike = ...,
                 layout_b: LayoutLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                 return_report: bool = ..., observers: Sequence[Observer] = ..., kernel: Any = ...,
                 options: LaunchParams | None = ..., return_launch: bool = ...) -> OperatorResult[ArrayT]: ...


@array_op
def quant_matmul(a, b, scale, per_token_scale, *, layout_a="row_major", layout_b="column_major", core_num: int = 24,
                 seed: int | None = None, arch: ArchSpec | str = ATLAS_A2, return_report: bool = False, observers=(),
                 kernel=None, options=None, return_launch: bool = False):
    """CATLASS example 12 on simulated AI cores.

    ``a`` int8 [m, k] and ``b`` int8 [k, n] (logical; stored in GM per ``layout_a``/``layout_b``, the example
    keeps B column-major), ``scale`` [n] and ``per_token_scale`` [m], both float16 (or both bfloat16).
    Returns D [m, n] in the scales' dtype; bit-exact: D == cast(golden.quant_matmul(...)).
    Launch keywords as :mod:`catlass_py.ops.operator`. Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    m, n, k, out = validate_inputs(a, b, scale, per_token_scale, run.core_num, run.arch)
    if m == 0 or n == 0:
        return run.empty((m, n), scale.dtype)
    if kernel is None:
        kernel = build_kernel(run.arch, 0 if m > n else 1, out, la, lb)
    else:
        check_kernel(kernel, build_kernel(run.arch, 0 if m > n else 1, out, la, lb), adopts=("A", "B"))
        la, lb = kernel.block_mmad.a_type.layout, kernel.block_mmad.b_type.layout
    args, host = run.device_arguments(
        "quant_matmul", kernel,
        lambda gm: kernel.Arguments(GemmCoord(m, n, k), run.core_num, gm["a"], gm["b"], gm["scale"],
                                    gm["per_token_scale"], gm["d"]),
        inputs={"a": (a, la), "b": (b, lb), "scale": scale, "per_token_scale": per_token_scale},
        outputs={"d": ((m, n), scale.dtype)})
    return run.run(kernel, args, host["d"])


__all__ = ["build_kernel", "quant_matmul", "validate_inputs"]
