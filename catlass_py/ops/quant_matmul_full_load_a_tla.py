"""``quant_matmul_full_load_a_tla``: CATLASS example 44 (``QuantMatmulFullLoadATla``: int8 matmul keeping A's whole K
panel in L1, per-token dequant on the vector cores, on TLA tensors) as a numpy-in / numpy-out function."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

import dataclasses
from functools import lru_cache

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.quant_matmul_full_load_a_tla import L1_TILE, assemble, scheduler_for
from catlass_py.epilogue.block import PerTokenDequantTlaParams
from catlass_py.gemm import GemmCoord
from catlass_py.gemm.coord import ceil_div
from catlass_py.kernel.quant_matmul_full_load_a_tla import FullLoadABlockMmadArguments
from catlass_py.ops.operator import array_op, check_kernel, op_options, parse_layout, parse_out_dtype
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.quant_multi_core_splitk_matmul_tla import validate_quant_inputs
from catlass_py.tla import make_layout_tag

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult


@lru_cache(maxsize=16)
def build_kernel(arch: ArchSpec = ATLAS_A2, layout_a="row", layout_b="row", element_d: str = "bfloat16",
                 full_load_scheduler: bool = True):
    """Example 44's kernel (:mod:`catlass_py.assemblies.quant_matmul_full_load_a_tla`); a float32 D takes one UB
    stage (two stages of 32 x 256 tiles exceed UB)."""
    return assemble(arch, layout_a=parse_layout("layout_a", layout_a).__name__,
                    layout_b=parse_layout("layout_b", layout_b).__name__, element_d=element_d,
                    block_scheduler=scheduler_for(L1_TILE[0] + 1 if full_load_scheduler else 0),
                    ub_stages=1 if element_d == "float32" else 2)


@overload
def quant_matmul_full_load_a_tla(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *,
                                 layout_a: LayoutLike = ..., layout_b: LayoutLike = ..., out_dtype: DTypeLike = ...,
                                 core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                                 options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                                 return_launch: Literal[False] = ..., observers: Sequence[Observer] = ...,
                                 kernel: Any = ...) -> ArrayT: ...


@overload
def quant_matmul_full_load_a_tla(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *,
                                 layout_a: LayoutLike = ..., layout_b: LayoutLike = ..., out_dtype: DTypeLike = ...,
                                 core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                                 options: LaunchParams | None = ..., return_report: Literal[True],
                                 return_launch: Literal[False] = ..., observers: Sequence[Observer] = ...,
                                 kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def quant_matmul_full_load_a_tla(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *,
                                 layout_a: LayoutLike = ..., layout_b: LayoutLike = ..., out_dtype: DTypeLike = ...,
                                 core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                                 options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                                 return_launch: Literal[True], observers: Sequence[Observer] = ...,
                                 kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def quant_matmul_full_load_a_tla(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *,
                                 layout_a: LayoutLike = ..., layout_b: LayoutLike = ..., out_dtype: DTypeLike = ...,
                                 core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                                 options: LaunchParams | None = ..., return_report: Literal[True],
                                 return_launch: Literal[True], observers: Sequence[Observer] = ...,
                                 kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def quant_matmul_full_load_a_tla(a: ArrayT, b: ArrayLike, scale: ArrayLike, per_token_scale: ArrayLike, *,
                                 layout_a: LayoutLike = ..., layout_b: LayoutLike = ..., out_dtype: DTypeLike = ...,
                                 core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                                 options: LaunchParams | None = ..., return_report: bool = ...,
                                 return_launch: bool = ..., observers: Sequence[Observer] = ...,
                                 kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def quant_matmul_full_load_a_tla(a, b, scale, per_token_scale, *, layout_a="row", layout_b="row",
                                 out_dtype="bfloat16", core_num: int = 24, seed: int | None = None,
                                 arch: ArchSpec | str = ATLAS_A2, options=None, return_report: bool = False,
                                 return_launch: bool = False, observers=(), kernel=None):
    """D = float(A @ B) * scale[col] * per_token_scale[row] with A's K panel held in L1 (CATLASS
    ``QuantMatmulFullLoadATla``, example 44).

    ``a`` int8 [m, k] and ``b`` int8 [k, n] (logical; stored ``layout_a`` / ``layout_b``, 'row' or 'column', the
    example's: both row-major), ``scale`` [n] and ``per_token_scale`` [m] float32. Returns D [m, n] in ``out_dtype``
    (bfloat16, float16 or float32), bit-exact against int32 -> fp32 -> two fp32 multiplies -> one rounding. As the
    example: the scheduler is ``GemmIdentityBlockSwizzleL1FullLoad<1, 0>`` when m > 128, else
    ``GemmIdentityBlockSwizzle<3, 0>``; the launch uses ``min(core_num, blocks)`` cores (``aicCoreUsed``); A's panel
    must fit L1 (``128 * k + 512 * 256 * 2 <= 512 KiB``, i.e. k <= 2048, else :class:`ArgumentError`). Launch
    keywords as :mod:`catlass_py.ops.operator`. Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    m, n, k = validate_quant_inputs(a, b, scale, per_token_scale, run.core_num, run.arch)
    out = parse_out_dtype(out_dtype, ("bfloat16", "float16", "float32"), "bfloat16")
    if m == 0 or n == 0:
        return run.empty((m, n), kernel.block_epilogue.element_d.numpy if kernel else get_dtype(out).numpy)
    if kernel is None:
        kernel = build_kernel(run.arch, la, lb, out, m > L1_TILE[0])
    else:
        check_kernel(kernel, build_kernel(run.arch, la, lb, out, m > L1_TILE[0]),
                     adopts=("A", "B", "epilogue element_d"))
    mm, ep = kernel.block_mmad, kernel.block_epilogue
    l1 = mm.l1_tile_shape
    used = min(run.core_num, ceil_div(m, l1.m) * ceil_div(n, l1.n))
    store_a, store_b = parse_layout("layout_a", mm.layout_tag_a.lower()), parse_layout("layout_b", mm.layout_tag_b.lower())

    def arguments(gm):
        mmad = FullLoadABlockMmadArguments(gm["a"], make_layout_tag("int8", mm.layout_tag_a, m, k), gm["b"],
                                           make_layout_tag("int8", mm.layout_tag_b, k, n))
        epi = PerTokenDequantTlaParams(gm["scale"], make_layout_tag("float32", "RowMajor", 1, n), gm["per_token_scale"],
                                       make_layout_tag("float32", "RowMajor", 1, m), gm["d"],
                                       make_layout_tag(ep.element_d, "RowMajor", m, n))
        return kernel.Arguments(GemmCoord(m, n, k), run.core_num, mmad, epi)

    args, host = run.device_arguments(
        "quant_matmul_full_load_a_tla", kernel, arguments,
        inputs={"a": (a, store_a), "b": (b, store_b), "scale": scale, "per_token_scale": per_token_scale},
        outputs={"d": ((m, n), ep.element_d.numpy)})
    return dataclasses.replace(run, core_num=used).run(kernel, args, host["d"])


__all__ = ["build_kernel", "quant_matmul_full_load_a_tla"]
