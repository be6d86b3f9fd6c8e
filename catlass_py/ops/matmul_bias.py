"""``matmul_bias``: CATLASS example 20 (``MatmulBias`` + ``MmadAtlasA2PingpongBias``) as a numpy-in / numpy-out
function."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload


from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.matmul_bias import assemble
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.operator import (
    chosen_kernel,
    array_op,
    as_array,
    check_core_num,
    check_extent,
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

#: input element -> bias elements the BT path accepts (CATLASS rejects bf16 bias; the BT holds the accumulator)
BIAS_ELEMENTS = {"float16": ("float16", "float32"), "bfloat16": ("float32",), "int8": ("int32",)}


@lru_cache(maxsize=32)
def build_kernel(arch: ArchSpec = ATLAS_A2, element: str = "float16", bias: str = "float16", layout_a="row",
                 layout_b="row", out: str | None = None):
    """Example 20's kernel for these types (:mod:`catlass_py.assemblies.matmul_bias`)."""
    return assemble(arch, element=element, bias_element=bias, layout_a=parse_layout("layout_a", layout_a),
                    layout_b=parse_layout("layout_b", layout_b), out_element=out)


def validate_inputs(a, b, bias, layout_a, layout_b, out_dtype, core_num, arch):
    """Check every input of the op; return (m, n, k, input element, bias element, output element)."""
    a = as_array("a", a, ("float16", "bfloat16", "int8"), 2)
    elem = element_of("a", a)
    b = as_array("b", b, elem, 2)
    bias = as_array("bias", bias, BIAS_ELEMENTS[elem], 1)
    parse_layout("layout_a", layout_a)
    parse_layout("layout_b", layout_b)
    m, k = a.shape
    kb, n = b.shape
    if kb != k:
        raise ArgumentError(f"b: expected shape ({k}, n) to match a's k = {k}, got {b.shape}")
    if bias.shape != (n,):
        raise ArgumentError(f"bias: expected shape ({n},) (one value per column of C), got {bias.shape}")
    check_extent("m", m)
    check_extent("n", n)
    check_extent("k", k, low=1)
    out = out_element(elem, out_dtype)
    check_core_num(core_num, arch)
    return m, n, k, elem, get_dtype(bias.dtype).name, out


@overload
def matmul_bias(a: ArrayT, b: ArrayLike, bias: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                return_launch: Literal[False] = ..., observers: Sequence[Observer] = ..., kernel: Any = ...) -> ArrayT: ...


@overload
def matmul_bias(a: ArrayT, b: ArrayLike, bias: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: Literal[True], return_launch: Literal[False] = ...,
                observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def matmul_bias(a: ArrayT, b: ArrayLike, bias: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: Literal[False] = ..., return_launch: Literal[True],
                observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def matmul_bias(a: ArrayT, b: ArrayLike, bias: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: Literal[True], return_launch: Literal[True],
                observers: Sequence[Observer] = ..., kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def matmul_bias(a: ArrayT, b: ArrayLike, bias: ArrayLike, *, layout_a: LayoutLike = ..., layout_b: LayoutLike = ...,
                out_dtype: DTypeLike = ..., core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ...,
                options: LaunchParams | None = ..., return_report: bool = ..., return_launch: bool = ...,
                observers: Sequence[Observer] = ..., kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def matmul_bias(a, b, bias, *, layout_a="row", layout_b="row", out_dtype=None, core_num: int = 24,
                seed: int | None = None, arch: ArchSpec | str = ATLAS_A2, options=None, return_report: bool = False,
                return_launch: bool = False, observers=(), kernel=None):
    """C = A @ B + bias on simulated AI cores (CATLASS ``MatmulBias``, example 20).

    ``a`` [m, k], ``b`` [k, n] (logical; float16, bfloat16 or int8, stored as ``layout_a``/``layout_b``),
    ``bias`` [n]: float16 or float32 for float16 operands, float32 for bfloat16 (CATLASS has no bf16 bias),
    int32 for int8. The bias initialises the fp32 (int32) accumulator through the BT buffer. Returns C [m, n]
    (the input element, int32 for int8, or ``out_dtype='float32'``). Launch keywords as
    :mod:`catlass_py.ops.operator`. Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    m, n, k, elem, belem, out = validate_inputs(a, b, bias, layout_a, layout_b, out_dtype, run.core_num, run.arch)
    la, lb = parse_layout("layout_a", layout_a), parse_layout("layout_b", layout_b)
    kernel = chosen_kernel(kernel, build_kernel(run.arch, elem, belem, la, lb, out))
    args, host = run.device_arguments(
        "matmul_bias", kernel, lambda gm: kernel.Arguments(GemmCoord(m, n, k), gm["a"], gm["b"], gm["c"], gm["bias"]),
        inputs={"a": (a, la), "b": (b, lb), "bias": bias}, outputs={"c": ((m, n), get_dtype(out).numpy)})
    return run.run(kernel, args, host["c"])


__all__ = ["BIAS_ELEMENTS", "build_kernel", "matmul_bias", "validate_inputs"]
