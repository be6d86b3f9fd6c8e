"""``basic_matmul_tla``: CATLASS example 13 (``BasicMatmulTla`` + ``BlockMmadTla<MmadPingpong>``) as a numpy-in /
numpy-out function, for fp16, bf16 and int8 operands stored row- or column-major."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.basic_matmul_tla import assemble, swizzle_for
from catlass_py.gemm import GemmCoord
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import array_op, chosen_kernel, op_options, parse_layout, validate_matmul_inputs
from catlass_py.tla import make_layout_tag

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult


@lru_cache(maxsize=32)
def build_kernel(arch: ArchSpec = ATLAS_A2, element: str = "float16", layout_a="row", layout_b="row",
                 out: str | None = None, swizzle: tuple[int, int] = (3, 0)):
    """Example 13's kernel for these operand types (:mod:`catlass_py.assemblies.basic_matmul_tla`)."""
    return assemble(arch, element=element, layout_a=parse_layout("layout_a", layout_a),
                    layout_b=parse_layout("layout_b", layout_b), out_element=out, swizzle=swizzle)


validate_inputs = validate_matmul_inputs  # the plain matmul's input rules


@overload
def basic_matmul_tla(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                     out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ...,
                     arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                     return_report: Literal[False] = ..., return_launch: Literal[False] = ...,
                     observers: Sequence[Observer] = ..., kernel: Any = ...) -> ArrayT: ...


@overload
def basic_matmul_tla(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                     out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ...,
                     arch: ArchSpec | str = ..., options: LaunchParams | None = ..., return_report: Literal[True],
                     return_launch: Literal[False] = ..., observers: Sequence[Observer] = ...,
                     kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def basic_matmul_tla(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                     out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ...,
                     arch: ArchSpec | str = ..., options: LaunchParams | None = ...,
                     return_report: Literal[False] = ..., return_launch: Literal[True],
                     observers: Sequence[Observer] = ...,
                     kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def basic_matmul_tla(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                     out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ...,
                     arch: ArchSpec | str = ..., options: LaunchParams | None = ..., return_report: Literal[True],
                     return_launch: Literal[True], observers: Sequence[Observer] = ...,
                     kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def basic_matmul_tla(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                     out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ...,
                     arch: ArchSpec | str = ..., options: LaunchParams | None = ..., return_report: bool = ...,
                     return_launch: bool = ..., observers: Sequence[Observer] = ...,
                     kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def basic_matmul_tla(a, b, *, layout_a="row", layout_b="row", out_dtype=None, core_num: int = 24,
                     seed: int | None = None, arch: ArchSpec | str = ATLAS_A2, options=None,
                     return_report: bool = False, return_launch: bool = False, observers=(), kernel=None):
    """C = A @ B on simulated AI cores through TLA tensors (CATLASS ``BasicMatmulTla``, example 13).

    ``a`` [m, k] and ``b`` [k, n] are the logical matrices, both float16, bfloat16 or int8; ``layout_a`` /
    ``layout_b`` ('row' or 'column') say how each is stored in device memory; the kernel receives the matching
    TLA layouts (``tla::MakeLayout<Element, LayoutTag>``). Returns C [m, n]: float16 / bfloat16 (fp32
    accumulation, rounded once by the fixpipe; ``out_dtype='float32'`` keeps it) or int32 (exact) for int8.
    The swizzle is the example's: ``<3,0>`` when m > n, else ``<3,1>``. ``k`` must be >= 1; m or n may be 0. The
    launch keywords are :mod:`catlass_py.ops.operator`'s. Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    m, n, k, elem, out = validate_inputs(a, b, layout_a, layout_b, out_dtype, run.core_num, run.arch)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    kernel = chosen_kernel(kernel, build_kernel(run.arch, elem, la, lb, out, swizzle_for(m, n)))
    mm = kernel.block_mmad
    layouts = (make_layout_tag(mm.element_a, mm.layout_tag_a, m, k), make_layout_tag(mm.element_b, mm.layout_tag_b, k, n),
               make_layout_tag(mm.element_c, mm.layout_tag_c, m, n))
    args, host = run.device_arguments(
        "basic_matmul_tla", kernel,
        lambda gm: kernel.Arguments(GemmCoord(m, n, k), gm["a"], layouts[0], gm["b"], layouts[1], gm["c"], layouts[2]),
        inputs={"a": (a, la), "b": (b, lb)}, outputs={"c": ((m, n), get_dtype(out).numpy)})
    return run.run(kernel, args, host["c"])


__all__ = ["basic_matmul_tla", "build_kernel", "validate_inputs"]
