"""``quant_multi_core_splitk_matmul_tla``: CATLASS example 52 (``QuantMultiCoreSplitkMatmulTla``: int8 matmul with K
split across cube cores, int32 reduction and per-token dequant on the vector cores, on TLA tensors) as a numpy-in /
numpy-out function."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.quant_multi_core_splitk_matmul_tla import assemble
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import (
    check_kernel,
    array_op,
    as_array,
    check_core_num,
    check_positive,
    check_shape,
    op_options,
    parse_layout,
    parse_out_dtype,
)
from catlass_py.tla import make_layout_tag

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult


@lru_cache(maxsize=16)
def build_kernel(arch: ArchSpec = ATLAS_A2, layout_a="row", layout_b="column", element_d: str = "bfloat16"):
    """Example 52's kernel for these layouts and D element (:mod:`catlass_py.assemblies.quant_multi_core_splitk_matmul_tla`).
    A float32 D takes one UB stage: two stages of 32 x 256 tiles exceed UB (the epilogue's UB rule)."""
    return assemble(arch, layout_a=parse_layout("layout_a", layout_a).__name__,
                    layout_b=parse_layout("layout_b", layout_b).__name__, element_d=element_d,
                    ub_stages=1 if element_d == "float32" else 2)


def validate_quant_inputs(a, b, scale, per_token_scale, core_num, arch) -> tuple[int, int, int]:
    """Check the inputs of the TLA quant matmuls: int8 ``a`` [m, k] and ``b`` [k, n], float32 ``scale`` [n] and
    ``per_token_scale`` [m], k >= 1, the core count; return (m, n, k)."""
    a = as_array("a", a, "int8", 2)
    b = as_array("b", b, "int8", 2)
    scale = as_array("scale", scale, "float32", 1)
    per_token_scale = as_array("per_token_scale", per_token_scale, "float32", 1)
    m, k = a.shape
    if b.shape[0] != k:
        raise ArgumentError(f"b: expected shape ({k}, n) to match a's k = {k}, got {b.shape}")
    n = b.shape[1]
    check_positive("a", k, "k (the K tiles are what the cube cores split)")
    check_shape("scale", scale, (n,), "one per column of b")
    check_shape("per_token_scale", per_token_scale, (m,), "one per row of a")
    check_core_num(core_num, arch)
    return m, n, k


def validate_inputs(a, b, scale, per_token_scale, core_num, arch) -> tuple[int, int, int]:
    """:func:`validate_quant_inputs` and at least 2 AI cores (the epilogue's step); return (m, n, k)."""
    m, n, k = validate_quant_inputs(a, b, scale, per_token_scale, core_num, arch)
    if core_num < 2:
        raise ArgumentError("core_num: the kernel's epilogue steps by GetBlockNum() / GetSubBlockNum() AI cores, 0 "
                            "on one AI core (its loop would never end); use at least 2")
    return m, n, k


@overload
def quant_multi_core_splitk_matmul_tla(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *,
                                       layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                                       out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ...,
                                       arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                                       return_report: Literal[False] = ..., return_launch: Literal[False] = ...,
                                       observers: Sequence[Observer] = ..., kernel: Any = ...) -> ArrayT: ...


@overload
def quant_multi_core_splitk_matmul_tla(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *,
                                       layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                                       out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ...,
                                       arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                                       return_report: Literal[True], return_launch: Literal[False] = ...,
                                       observers: Sequence[Observer] = ...,
                                       kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def quant_multi_core_splitk_matmul_tla(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *,
                                       layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                                       out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ...,
                                       arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                                       return_report: Literal[False] = ..., return_launch: Literal[True],
                                       observers: Sequence[Observer] = ...,
                                       kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def quant_multi_core_splitk_matmul_tla(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *,
                                       layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                                       out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ...,
                                       arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                                       return_report: Literal[True], return_launch: Literal[True],
                                       observers: Sequence[Observer] = ...,
                                       kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def quant_multi_core_splitk_matmul_tla(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *,
                                       layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                                       out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ...,
                                       arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                                       return_report: bool = ..., return_launch: bool = ...,
                                       observers: Sequence[Observer] = ...,
                                       kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def quant_multi_core_splitk_matmul_tla(a, b, scale, per_token_scale, *, layout_a="row", layout_b="column",
                                       out_dtype="bfloat16", core_num: int = 24, seed: int | None = None,
                                       arch: ArchSpec | str = ATLAS_A2, options=None, return_report: bool = False,
                                       return_launch: bool = False, observers=(), kernel=None):
    """D = float(A @ B) * scale[col] * per_token_scale[row] with K split across cube cores (CATLASS
    ``QuantMultiCoreSplitkMatmulTla``, example 52).

    ``a`` int8 [m, k] and ``b`` int8 [k, n] are the logical matrices, stored ``layout_a`` / ``layout_b`` ('row' or
    'column'; the example: A row-major, B column-major); ``scale`` [n] and ``per_token_scale`` [m] float32.
    Returns D [m, n] in ``out_dtype`` (bfloat16, the example's; float16 or float32). The cube cores store int32
    partial sums of their K slices, the vector cores add them (exact int32) and dequantise: int32 -> fp32 (RINT),
    two fp32 multiplies, one rounding to D. ``core_num`` >= 2 (see :func:`validate_inputs`). Launch keywords as
    :mod:`catlass_py.ops.operator`. Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    m, n, k = validate_inputs(a, b, scale, per_token_scale, run.core_num, run.arch)
    out = parse_out_dtype(out_dtype, ("bfloat16", "float16", "float32"), "bfloat16")
    out_np = get_dtype(out).numpy
    if m == 0 or n == 0:
        return run.empty((m, n), out_np)
    if kernel is None:
        kernel = build_kernel(run.arch, la, lb, out)
    else:
        check_kernel(kernel, build_kernel(run.arch, la, lb, out), adopts=("A", "B", "epilogue element_d"))
    mm, ep = kernel.block_mmad, kernel.block_epilogue
    layouts = (make_layout_tag("int8", mm.layout_tag_a, m, k), make_layout_tag("int8", mm.layout_tag_b, k, n),
               make_layout_tag("float32", "RowMajor", 1, n), make_layout_tag("float32", "RowMajor", 1, m),
               make_layout_tag(ep.element_d, "RowMajor", m, n))
    store_a, store_b = parse_layout("layout_a", mm.layout_tag_a.lower()), parse_layout("layout_b", mm.layout_tag_b.lower())
    args, host = run.device_arguments(
        "quant_multi_core_splitk_matmul_tla", kernel,
        lambda gm: kernel.Arguments(GemmCoord(m, n, k), run.core_num, gm["a"], gm["b"], gm["scale"],
                                    gm["per_token_scale"], gm["d"], *layouts),
        inputs={"a": (a, store_a), "b": (b, store_b), "scale": scale, "per_token_scale": per_token_scale},
        outputs={"d": ((m, n), ep.element_d.numpy)})
    return run.run(kernel, args, host["d"])


__all__ = ["build_kernel", "quant_multi_core_splitk_matmul_tla", "validate_inputs", "validate_quant_inputs"]
