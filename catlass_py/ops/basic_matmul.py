"""``basic_matmul``: CATLASS example 00 (``BasicMatmul`` + ``MmadAtlasA2Pingpong``) as a numpy-in / numpy-out
function, for fp16, bf16 and int8 operands stored row- or column-major."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload


from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.basic_matmul import assemble
from catlass_py.gemm import GemmCoord
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import array_op, chosen_kernel, op_options, parse_layout, validate_matmul_inputs

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult


@lru_cache(maxsize=32)
def build_kernel(arch: ArchSpec = ATLAS_A2, element: str = "float16", layout_a="row", layout_b="row",
                 out: str | None = None):
    """Example 00's kernel for these operand types (:mod:`catlass_py.assemblies.basic_matmul`)."""
    return assemble(arch, element=element, layout_a=parse_layout("layout_a", layout_a),
                    layout_b=parse_layout("layout_b", layout_b), out_element=out)


validate_inputs = validate_matmul_inputs  # the plain matmul's input rules


@overload
def basic_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                 out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                 options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                 return_launch: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...) -> ArrayT: ...


@overload
def basic_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                 out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                 options: LaunchParams | None = ..., return_report: Literal[True], return_launch: Literal[False] = ...,
                 observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def basic_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                 out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                 options: LaunchParams | None = ..., return_report: Literal[False] = ..., return_launch: Literal[True],
                 observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def basic_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                 out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                 options: LaunchParams | None = ..., return_report: Literal[True], return_launch: Literal[True],
                 observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def basic_matmul(a: ArrayT, b: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                 out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                 options: LaunchParams | None = ..., return_report: bool = ..., return_launch: bool = ...,
                 observers: Sequence[Observer] = ..., kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def basic_matmul(a, b, *, layout_a="row", layout_b="row", out_dtype=None, core_num: int = 24,
                 seed: int | None = None, arch: ArchSpec | str = ATLAS_A2, options=None, return_report: bool = False,
                 return_launch: bool = False, observers=(), kernel=None):
    """C = A @ B on simulated AI cores (CATLASS ``BasicMatmul``, example 00).

    ``a`` [m, k] and ``b`` [k, n] are the logical matrices, both float16, bfloat16 or int8;
    ``layout_a``/``layout_b`` ('row' or 'column') say how each is stored in device memory (the
    ColumnMajor / "transposed" operands of CATLASS). Returns C [m, n]: float16 / bfloat16 (fp32
    accumulation, rounded once by the fixpipe) or int32 (exact) for int8; ``out_dtype='float32'`` keeps
    the fp32 accumulator for float inputs. ``k`` must be >= 1; m or n may be 0. The launch keywords are
    :mod:`catlass_py.ops.operator`'s (``return_report=True`` adds a
    :class:`~catlass_py.analysis.WorkloadReport`). Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    m, n, k, elem, out = validate_inputs(a, b, layout_a, layout_b, out_dtype, run.core_num, run.arch)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    kernel = chosen_kernel(kernel, build_kernel(run.arch, elem, la, lb, out))
    args, host = run.device_arguments(
        "basic_matmul", kernel, lambda gm: kernel.Arguments(GemmCoord(m, n, k), gm["a"], gm["b"], gm["c"]),
        inputs={"a": (a, la), "b": (b, lb)}, outputs={"c": ((m, n), get_dtype(out).numpy)})
    return run.run(kernel, args, host["c"])


__all__ = ["basic_matmul", "build_kernel", "validate_inputs"]
