"""``quant_optimized_matmul_tla``: CATLASS example 42 (``QuantOptimizedMatmulTla``: int8 matmul with the TLA preload
block and padding prologues, per-token dequant on the vector cores) as a numpy-in / numpy-out function."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.quant_optimized_matmul_tla import assemble, padding_for, swizzle_for
from catlass_py.epilogue.block import PerTokenDequantTlaParams
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.kernel.optimized_matmul_tla import padding_layout, padding_workspace_len
from catlass_py.kernel.quant_optimized_matmul_tla import OptimizedMmadArguments
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import array_op, chosen_kernel, op_options, parse_layout, parse_out_dtype
from catlass_py.ops.quant_multi_core_splitk_matmul_tla import validate_quant_inputs
from catlass_py.tla import make_layout_tag

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult


@lru_cache(maxsize=32)
def build_kernel(arch: ArchSpec = ATLAS_A2, layout_a: str = "RowMajor", layout_b: str = "ColumnMajor",
                 padding_a: bool = False, padding_b: bool = False, swizzle: tuple[int, int] = (3, 0),
                 element_d: str = "bfloat16"):
    """Example 42's kernel (:mod:`catlass_py.assemblies.quant_optimized_matmul_tla`); a float32 D takes one UB
    stage (two stages of 32 x 256 tiles exceed UB)."""
    return assemble(arch, layout_a=layout_a, layout_b=layout_b, padding_a=padding_a, padding_b=padding_b,
                    swizzle=swizzle, element_d=element_d, ub_stages=1 if element_d == "float32" else 2)


@overload
def quant_optimized_matmul_tla(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *,
                               layout_a: LayoutLike = ..., layout_b: LayoutLike = ..., out_dtype: DTypeLike = ...,
                               core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                               options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                               return_launch: Literal[False] = ..., observers: Sequence[Observer] = ...,
                               kernel: Any = ...) -> ArrayT: ...


@overload
def quant_optimized_matmul_tla(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *,
                               layout_a: LayoutLike = ..., layout_b: LayoutLike = ..., out_dtype: DTypeLike = ...,
                               core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                               options: LaunchParams | None = ..., return_report: Literal[True],
                               return_launch: Literal[False] = ..., observers: Sequence[Observer] = ...,
                               kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def quant_optimized_matmul_tla(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *,
                               layout_a: LayoutLike = ..., layout_b: LayoutLike = ..., out_dtype: DTypeLike = ...,
                               core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                               options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                               return_launch: Literal[True], observers: Sequence[Observer] = ...,
                               kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def quant_optimized_matmul_tla(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *,
                               layout_a: LayoutLike = ..., layout_b: LayoutLike = ..., out_dtype: DTypeLike = ...,
                               core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                               options: LaunchParams | None = ..., return_report: Literal[True],
                               return_launch: Literal[True], observers: Sequence[Observer] = ...,
                               kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def quant_optimized_matmul_tla(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *,
                               layout_a: LayoutLike = ..., layout_b: LayoutLike = ..., out_dtype: DTypeLike = ...,
                               core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                               options: LaunchParams | None = ..., return_report: bool = ...,
                               return_launch: bool = ..., observers: Sequence[Observer] = ...,
                               kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def quant_optimized_matmul_tla(a, b, scale, per_token_scale, *, layout_a="row", layout_b="column",
                               out_dtype="bfloat16", core_num: int = 24, seed: int | None = None,
                               arch: ArchSpec | str = ATLAS_A2, options=None, return_report: bool = False,
                               return_launch: bool = False, observers=(), kernel=None):
    """D = float(A @ B) * scale[col] * per_token_scale[row] (CATLASS ``QuantOptimizedMatmulTla``, example 42).

    ``a`` int8 [m, k] and ``b`` int8 [k, n] (logical; stored ``layout_a`` / ``layout_b``, the example's: A row-major,
    B column-major), ``scale`` [n] and ``per_token_scale`` [m] float32. As the example: an operand whose leading
    dimension is not a multiple of 256 elements (or is >= 65536) is padded by the vector cores first; swizzle
    ``<3,0>`` when m > n, else ``<3,1>``. Returns D [m, n] in ``out_dtype`` (bfloat16, float16 or float32),
    bit-exact against int32 -> fp32 -> two fp32 multiplies -> one rounding. Launch keywords as
    :mod:`catlass_py.ops.operator`. Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    m, n, k = validate_quant_inputs(a, b, scale, per_token_scale, run.core_num, run.arch)
    out = parse_out_dtype(out_dtype, ("bfloat16", "float16", "float32"), "bfloat16")
    if m == 0 or n == 0:
        return run.empty((m, n), get_dtype(out).numpy)
    ta, tb = la.__name__, lb.__name__
    pad_a, pad_b = padding_for(m, n, k, ta, tb)
    kernel = chosen_kernel(kernel, build_kernel(run.arch, ta, tb, pad_a, pad_b, swizzle_for(m, n), out),
                           adopts=("A", "B", "epilogue element_d"))
    if (kernel.padding_a is not None, kernel.padding_b is not None) != (pad_a, pad_b):
        raise ArgumentError(f"kernel: assembled for padding (A, B) = "
                            f"{(kernel.padding_a is not None, kernel.padding_b is not None)}, these operands need "
                            f"{(pad_a, pad_b)}")
    mm, ep = kernel.block_mmad, kernel.block_epilogue
    l1 = mm.l1_tile_shape
    lay_a, lay_b = make_layout_tag("int8", mm.layout_tag_a, m, k), make_layout_tag("int8", mm.layout_tag_b, k, n)
    lay_wa = padding_layout(mm.layout_tag_a, m, k, l1.m, l1.k) if pad_a else lay_a
    lay_wb = padding_layout(mm.layout_tag_b, k, n, l1.k, l1.n) if pad_b else lay_b
    outputs = {"d": ((m, n), ep.element_d.numpy)}
    if pad_a:
        outputs["wa"] = ((padding_workspace_len(m, k, l1.m, l1.k),), get_dtype("int8").numpy)
    if pad_b:
        outputs["wb"] = ((padding_workspace_len(k, n, l1.k, l1.n),), get_dtype("int8").numpy)

    def arguments(gm):
        mmad = OptimizedMmadArguments(gm["a"], lay_a, gm["b"], lay_b, gm["wa"] if pad_a else gm["a"], lay_wa,
                                      gm["wb"] if pad_b else gm["b"], lay_wb)
        epi = PerTokenDequantTlaParams(gm["scale"], make_layout_tag("float32", "RowMajor", 1, n), gm["per_token_scale"],
                                       make_layout_tag("float32", "RowMajor", 1, m), gm["d"],
                                       make_layout_tag(ep.element_d, "RowMajor", m, n))
        return kernel.Arguments(GemmCoord(m, n, k), run.core_num, mmad, epi)

    store_a, store_b = parse_layout("layout_a", mm.layout_tag_a.lower()), parse_layout("layout_b", mm.layout_tag_b.lower())
    args, host = run.device_arguments(
        "quant_optimized_matmul_tla", kernel, arguments,
        inputs={"a": (a, store_a), "b": (b, store_b), "scale": scale, "per_token_scale": per_token_scale},
        outputs=outputs)
    return run.run(kernel, args, host["d"])


__all__ = ["build_kernel", "quant_optimized_matmul_tla"]
