"""``grouped_matmul_slice_m_per_token_dequant``: CATLASS example 10 as a numpy-in / numpy-out function.

The kernel is assembled exactly like the C++ example
(:mod:`catlass_py.assemblies.grouped_matmul_slice_m_per_token_dequant` has the step-by-step version) and runs on the
simulated Atlas A2 AI cores.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload


from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.grouped_matmul_slice_m_per_token_dequant import assemble
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace
from catlass_py.ops.operator import (
    chosen_kernel,
    array_op,
    as_array,
    check_core_num,
    check_group_list,
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
def build_kernel(arch: ArchSpec = ATLAS_A2, out_dtype: str = "bfloat16", *, policy=None, workspace_stages: int = 2,
                 ub_stages: int = 2) -> GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace:
    """Example 10's kernel (L1 128x256x512, L0 128x256x128, PreloadAsyncWithCallback<1,2,2,2,1,false,true>,
    per-token dequant epilogue on 32x256 tiles, GemmIdentityBlockSwizzle<3,0>, 2 workspace stages); the keywords
    swap template parameters."""
    return assemble(arch, out_dtype=out_dtype, dispatch_policy=policy, workspace_stages=workspace_stages,
                    ub_stages=ub_stages)


def validate_inputs(a, b, group_list, scale, per_token_scale, core_num, arch) -> tuple[int, int, int, int, str]:
    """Check every input of the op; return (g, m, n, k, out dtype name)."""
    a = as_array("a", a, "int8", 2)
    b = as_array("b", b, "int8", 3)
    scale = as_array("scale", scale, ("bfloat16", "float16"), 2)
    out = str(scale.dtype)
    per_token_scale = as_array("per_token_scale", per_token_scale, out, 1)
    m, k = a.shape
    g, kb, n = b.shape
    if kb != k:
        raise ArgumentError(f"b: expected shape (g, {k}, n) to match a's k = {k}, got {b.shape}")
    if g == 0:
        raise ArgumentError("b: expected at least one group, got shape " + str(b.shape))
    if k == 0:
        raise ArgumentError("a: k == 0 is not supported (the CATLASS kernel would deadlock: no block ever stores)")
    check_shape("scale", scale, (g, n), "groups x n")
    check_shape("per_token_scale", per_token_scale, (m,), "one per row of a")
    check_group_list(group_list, g, m)
    check_core_num(core_num, arch)
    return g, m, n, k, out


@overload
def grouped_matmul_slice_m_per_token_dequant(a: ArrayT, b: ArrayLike, group_list: ArrayLike,
                                             scale: ArrayLike, per_token_scale: ArrayLike, *, core_num: int = ...,
                                             seed: int | None = ..., arch: ArchSpec | str = ...,
                                             options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                                             return_launch: Literal[False] = ..., observers: Sequence[Observer] = ...,
                                             kernel: Any = ...) -> ArrayT: ...


@overload
def grouped_matmul_slice_m_per_token_dequant(a: ArrayT, b: ArrayLike, group_list: ArrayLike,
                                             scale: ArrayLike, per_token_scale: ArrayLike, *, core_num: int = ...,
                                             seed: int | None = ..., arch: ArchSpec | str = ...,
                                             options: LaunchParams | None = ..., return_report: Literal[True],
                                             return_launch: Literal[False] = ..., observers: Sequence[Observer] = ...,
                                             kernel: Any = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def grouped_matmul_slice_m_per_token_dequant(a: ArrayT, b: ArrayLike, group_list: ArrayLike,
                                             scale: ArrayLike, per_token_scale: ArrayLike, *, core_num: int = ...,
                                             seed: int | None = ..., arch: ArchSpec | str = ...,
                                             options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                                             return_launch: Literal[True], observers: Sequence[Observer] = ...,
                                             kernel: Any = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def grouped_matmul_slice_m_per_token_dequant(a: ArrayT, b: ArrayLike, group_list: ArrayLike,
                                             scale: ArrayLike, per_token_scale: ArrayLike, *, core_num: int = ...,
                                             seed: int | None = ..., arch: ArchSpec | str = ...,
                                             options: LaunchParams | None = ..., return_report: Literal[True],
                                             return_launch: Literal[True], observers: Sequence[Observer] = ...,
                                             kernel: Any = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def grouped_matmul_slice_m_per_token_dequant(a: ArrayT, b: ArrayLike, group_list: ArrayLike,
                                             scale: ArrayLike, per_token_scale: ArrayLike, *, core_num: int = ...,
                                             seed: int | None = ..., arch: ArchSpec | str = ...,
                                             options: LaunchParams | None = ..., return_report: bool = ...,
                                             return_launch: bool = ..., observers: Sequence[Observer] = ...,
                                             kernel: Any = ...) -> OperatorResult[ArrayT]: ...


@array_op
def grouped_matmul_slice_m_per_token_dequant(a, b, group_list, scale, per_token_scale, *, core_num: int = 24,
                                             seed: int | None = None, arch: ArchSpec | str = ATLAS_A2, options=None,
                                             return_report: bool = False, return_launch: bool = False, observers=(),
                                             kernel=None):
    """CATLASS example 10 (``GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace``) on simulated AI cores.

    ``a`` int8 [m, k] (k >= 1); ``b`` int8 [g, k, n] (g >= 1); ``group_list`` int64 [g] prefix sums of group row counts;
    ``scale`` bf16 [g, n] (per channel, per group); ``per_token_scale`` bf16 [m]. Returns D, ml_dtypes
    bfloat16 [m, n] (float16 when the scales are float16); rows at or past ``group_list[-1]`` are 0.
    Bit-exact: D == bf16(golden). The launch keywords are :mod:`catlass_py.ops.operator`'s: with
    ``return_report=True`` the result also has a :class:`~catlass_py.analysis.WorkloadReport` of the split
    across cores, with ``return_launch=True`` the :class:`~catlass_py.arch.LaunchResult` (its race detector
    with ``options=LaunchParams(detect_races=True)``). Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    g, m, n, k, out = validate_inputs(a, b, group_list, scale, per_token_scale, run.core_num, run.arch)
    kernel = chosen_kernel(kernel, build_kernel(run.arch, out))
    args, host = run.device_arguments(
        "grouped_matmul_slice_m_per_token_dequant", kernel,
        lambda gm: kernel.Arguments(GemmCoord(m, n, k), g, run.core_num, gm["group_list"], gm["a"], gm["b"],
                                    gm["scale"], gm["per_token_scale"], gm["d"]),
        inputs={"group_list": group_list, "a": a, "b": b, "scale": scale, "per_token_scale": per_token_scale},
        outputs={"d": ((m, n), scale.dtype)})
    return run.run(kernel, args, host["d"])


__all__ = ["build_kernel", "grouped_matmul_slice_m_per_token_dequant", "validate_inputs"]
