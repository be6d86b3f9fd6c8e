"""``transpose_quant_batch_matmul``: the pypto-gym MXFP8 batch matmul (seed 004) as a numpy-in / numpy-out
function running on simulated Ascend 950 cores through the PTO MX tile instructions.

Contract (pto-mx-semantics 7): ``x1`` [M, B, K] fp8 (e4m3fn or e5m2, the same for x2); ``x2`` [B, K, N] with
``perm_x2=(0, 1, 2)`` or [B, N, K] with ``(0, 2, 1)``; ``x1_scale`` [M, B, K//64, 2] and ``x2_scale``
[B, K//64, N, 2] / [B, N, K//64, 2] E8M0 (uint8 bytes or ``float8_e8m0fnu``); ``perm_x1 = perm_y = (1, 0, 2)``;
K % 64 == 0; out [M, B, N] fp16 (pypto dtype flag 1) or bf16 (flag 27). See
:class:`~catlass_py.kernel.transpose_quant_batch_matmul.TransposeQuantBatchMatmulKernel` for the kernel and
:func:`catlass_py.golden.transpose_quant_batch_matmul` for the reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload

import ml_dtypes
import numpy as np

from catlass_py.arch import ASCEND_950, ArchSpec
from catlass_py.assemblies.transpose_quant_batch_matmul import assemble
from catlass_py.errors import ArgumentError
from catlass_py.kernel.transpose_quant_batch_matmul import (
    PERM_DN,
    PERM_ND,
    TransposeQuantBatchMatmulParams,
)
from catlass_py.layout import RowMajor
from catlass_py.numerics.rounding import cast
from catlass_py.ops.operator import array_op, check_flag, chosen_kernel, op_options, parse_out_dtype, to_numpy

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, DTypeLike, LayoutLike, OperatorResult

FP8 = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}
OUT_DTYPES = ("bfloat16", "float16")
PYPTO_DTYPE_FLAGS = {27: "bfloat16", 1: "float16"}  # pypto's dtype flags of the output
DEFAULT_TILE_SHAPE = (256, 256, 128)  # seed 004's m / n / k tile shapes


def _perm(name: str, value, allowed) -> tuple:
    try:
        p = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise ArgumentError(f"{name}: expected a permutation such as {allowed[0]}, got {value!r}") from None
    if p not in allowed:
        raise ArgumentError(f"{name}: expected {' or '.join(map(str, allowed))}, got {p}")
    return p


def out_dtype_name(out_dtype) -> str:
    """'bfloat16' / 'float16' from a name or alias, a numpy / ml_dtypes type, or the pypto dtype flag (27 = bf16,
    1 = fp16)."""
    if isinstance(out_dtype, (int, np.integer)) and not isinstance(out_dtype, bool):
        if int(out_dtype) not in PYPTO_DTYPE_FLAGS:
            raise ArgumentError(f"out_dtype: expected 'bfloat16' (flag 27) or 'float16' (flag 1), got {out_dtype!r}")
        return PYPTO_DTYPE_FLAGS[int(out_dtype)]
    if out_dtype is None:
        raise ArgumentError("out_dtype: expected 'bfloat16' (flag 27) or 'float16' (flag 1), got None")
    return parse_out_dtype(out_dtype, OUT_DTYPES, "bfloat16")


def _scale_bytes(name: str, s) -> np.ndarray:
    s = to_numpy(name, s)
    if s.dtype == np.dtype(ml_dtypes.float8_e8m0fnu):
        return s.view(np.uint8)
    if s.dtype != np.uint8:
        raise ArgumentError(f"{name}: expected E8M0 scales as uint8 bytes or float8_e8m0fnu, got dtype {s.dtype}")
    return s


def validate_inputs(x1, x2, x1_scale, x2_scale, perm_x1, perm_x2, perm_y, out_dtype):
    """Check every input; return (m, batch, k, n, in dtype name, perm_x2, out dtype name)."""
    x1, x2 = to_numpy("x1", x1), to_numpy("x2", x2)
    for name, x, nd in (("x1", x1, 3), ("x2", x2, 3)):
        if x.ndim != nd:
            raise ArgumentError(f"{name}: expected a {nd}-D array, got shape {x.shape}")
    in_name = next((k for k, v in FP8.items() if x1.dtype == np.dtype(v)), None)
    if in_name is None:
        raise ArgumentError(f"x1: expected dtype float8_e4m3fn or float8_e5m2, got {x1.dtype}")
    if x2.dtype != x1.dtype:
        raise ArgumentError(f"x2: expected the dtype of x1 ({x1.dtype}), got {x2.dtype}")
    _perm("perm_x1", perm_x1, ((1, 0, 2),))
    _perm("perm_y", perm_y, ((1, 0, 2),))
    p2 = _perm("perm_x2", perm_x2, (PERM_ND, PERM_DN))
    out = out_dtype_name(out_dtype)
    m, batch, k = x1.shape
    if k == 0 or k % 64:
        raise ArgumentError(f"x1: K must be a positive multiple of 64 (MXFP8 scale pairs), got K = {k}")
    if batch == 0:
        raise ArgumentError(f"x1: expected at least one batch, got shape {x1.shape}")
    if p2 == PERM_ND:
        if x2.shape[:2] != (batch, k):
            raise ArgumentError(f"x2: expected shape ({batch}, {k}, N) for perm_x2 {p2}, got {x2.shape}")
        n = x2.shape[2]
        s2_shape = (batch, k // 64, n, 2)
    else:
        if x2.shape[0] != batch or x2.shape[2] != k:
            raise ArgumentError(f"x2: expected shape ({batch}, N, {k}) for perm_x2 {p2}, got {x2.shape}")
        n = x2.shape[1]
        s2_shape = (batch, n, k // 64, 2)
    if n == 0:
        raise ArgumentError(f"x2: N must be positive, got shape {x2.shape}")
    s1 = _scale_bytes("x1_scale", x1_scale)
    s2 = _scale_bytes("x2_scale", x2_scale)
    if s1.shape != (m, batch, k // 64, 2):
        raise ArgumentError(f"x1_scale: expected shape {(m, batch, k // 64, 2)} ([M, B, K//64, 2]), got {s1.shape}")
    if s2.shape != s2_shape:
        want = "[B, K//64, N, 2]" if p2 == PERM_ND else "[B, N, K//64, 2]"
        raise ArgumentError(f"x2_scale: expected shape {s2_shape} ({want} for perm_x2 {p2}), got {s2.shape}")
    return m, batch, k, n, in_name, p2, out


@lru_cache(maxsize=16)
def build_kernel(in_dtype: str, out_dtype: str, perm_x2=PERM_ND, tile_shape=DEFAULT_TILE_SHAPE, saturation=True,
                 arch: ArchSpec = ASCEND_950):
    """The assembled kernel (:mod:`catlass_py.assemblies.transpose_quant_batch_matmul`; immutable, so cached per
    configuration)."""
    return assemble(in_dtype=in_dtype, out_dtype=out_dtype, perm_x2=perm_x2, tile_shape=tile_shape, arch=arch,
                    saturation=saturation)


@overload
def transpose_quant_batch_matmul(x1: ArrayT, x2: ArrayLike, x1_scale: ArrayLike, x2_scale: ArrayLike, *,
                                 perm_x1: Sequence[int] = ..., perm_x2: Sequence[int] = ...,
                                 perm_y: Sequence[int] = ..., out_dtype: DTypeLike = ..., core_num: int = ...,
                                 seed: int | None = ..., arch: ArchSpec | str = ...,
                                 options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                                 return_launch: Literal[False] = ..., observers: Sequence[Observer] = ...,
                                 kernel: Any = ..., tile_shape: Sequence[int] = ..., saturation: bool = ...) -> ArrayT: ...


@overload
def transpose_quant_batch_matmul(x1: ArrayT, x2: ArrayLike, x1_scale: ArrayLike, x2_scale: ArrayLike, *,
                                 perm_x1: Sequence[int] = ..., perm_x2: Sequence[int] = ...,
                                 perm_y: Sequence[int] = ..., out_dtype: DTypeLike = ..., core_num: int = ...,
                                 seed: int | None = ..., arch: ArchSpec | str = ...,
                                 options: LaunchParams | None = ..., return_report: Literal[True],
                                 return_launch: Literal[False] = ..., observers: Sequence[Observer] = ...,
                                 kernel: Any = ..., tile_shape: Sequence[int] = ..., saturation: bool = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def transpose_quant_batch_matmul(x1: ArrayT, x2: ArrayLike, x1_scale: ArrayLike, x2_scale: ArrayLike, *,
                                 perm_x1: Sequence[int] = ..., perm_x2: Sequence[int] = ...,
                                 perm_y: Sequence[int] = ..., out_dtype: DTypeLike = ..., core_num: int = ...,
                                 seed: int | None = ..., arch: ArchSpec | str = ...,
                                 options: LaunchParams | None = ..., return_report: Literal[False] = ...,
                                 return_launch: Literal[True], observers: Sequence[Observer] = ..., kernel: Any = ...,
                                 tile_shape: Sequence[int] = ..., saturation: bool = ...) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def transpose_quant_batch_matmul(x1: ArrayT, x2: ArrayLike, x1_scale: ArrayLike, x2_scale: ArrayLike, *,
                                 perm_x1: Sequence[int] = ..., perm_x2: Sequence[int] = ...,
                                 perm_y: Sequence[int] = ..., out_dtype: DTypeLike = ..., core_num: int = ...,
                                 seed: int | None = ..., arch: ArchSpec | str = ...,
                                 options: LaunchParams | None = ..., return_report: Literal[True],
                                 return_launch: Literal[True], observers: Sequence[Observer] = ..., kernel: Any = ...,
                                 tile_shape: Sequence[int] = ..., saturation: bool = ...) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def transpose_quant_batch_matmul(x1: ArrayT, x2: ArrayLike, x1_scale: ArrayLike, x2_scale: ArrayLike, *,
                                 perm_x1: Sequence[int] = ..., perm_x2: Sequence[int] = ...,
                                 perm_y: Sequence[int] = ..., out_dtype: DTypeLike = ..., core_num: int = ...,
                                 seed: int | None = ..., arch: ArchSpec | str = ...,
                                 options: LaunchParams | None = ..., return_report: bool = ...,
                                 return_launch: bool = ..., observers: Sequence[Observer] = ..., kernel: Any = ...,
                                 tile_shape: Sequence[int] = ..., saturation: bool = ...) -> OperatorResult[ArrayT]: ...


@array_op
def transpose_quant_batch_matmul(x1, x2, x1_scale, x2_scale, *, perm_x1=(1, 0, 2), perm_x2=(0, 1, 2),
                                 perm_y=(1, 0, 2), out_dtype="bfloat16", core_num: int = 32, seed: int | None = None,
                                 arch: ArchSpec | str = ASCEND_950, options=None, return_report: bool = False,
                                 return_launch: bool = False, observers=(), kernel=None,
                                 tile_shape=DEFAULT_TILE_SHAPE, saturation: bool = True):
    """pypto-gym ``transpose_quant_batch_matmul`` on simulated Ascend 950 cores (module docstring for the
    contract). Returns ``out`` [M, B, N] (ml_dtypes bfloat16 or float16). Bad inputs raise
    :class:`ArgumentError` before anything runs; inputs are never modified. Launch keywords as
    :mod:`catlass_py.ops.operator`.

    ``saturation`` is the fixpipe's CTRL[48] mode: True (default, CTRL[48] = 0) maps NaN results (E8M0 0xFF
    scales) to 0 and overflow to +-max; False propagates NaN / inf like the float32 golden."""
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    m, batch, k, n, in_name, p2, out = validate_inputs(x1, x2, x1_scale, x2_scale, perm_x1, perm_x2, perm_y, out_dtype)
    saturation = check_flag("saturation", saturation)
    kernel = chosen_kernel(kernel, build_kernel(in_name, out, p2, tuple(tile_shape), saturation, run.arch))
    out_np = ml_dtypes.bfloat16 if out == "bfloat16" else np.float16
    if m == 0:
        return run.empty((m, batch, n), out_np)
    params, host = run.device_arguments(
        "transpose_quant_batch_matmul", kernel,
        lambda gm: TransposeQuantBatchMatmulParams(m, batch, k, n, gm["x1"], gm["x2"], gm["x1_scale"], gm["x2_scale"],
                                                   gm["out"].reinterpret(out)),
        inputs={"x1": (x1, RowMajor, in_name), "x2": (x2, RowMajor, in_name),
                "x1_scale": (_scale_bytes("x1_scale", x1_scale), RowMajor, "float8_e8m0fnu"),
                "x2_scale": (_scale_bytes("x2_scale", x2_scale), RowMajor, "float8_e8m0fnu")},
        outputs={"out": ((m, batch, n), out_np)})
    return run.run_kernel(kernel, params, host["out"])


def make_inputs(m: int, k: int, n: int, batch: int, *, in_dtype="float8_e4m3fn", out_dtype="bfloat16",
                perm_x2=(0, 1, 2), seed: int = 0):
    """Inputs drawn like the pypto-gym test (seed 004): data uniform(0, r) cast to fp8 (r = 1.0 for fp16 output,
    0.05 for bf16), x1_scale uniform(0.9, 1.1) and x2_scale uniform(0, r) cast to E8M0 (round to the nearer
    power of two, as torch/ml_dtypes). numpy's generator replaces torch's. Returns (x1, x2, x1_scale, x2_scale)
    with the scales as uint8 bytes."""
    out = out_dtype_name(out_dtype)
    fp8 = FP8.get(str(in_dtype)) or FP8.get({"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}.get(str(in_dtype), ""))
    if fp8 is None:
        raise ArgumentError(f"in_dtype: expected float8_e4m3fn (e4m3) or float8_e5m2 (e5m2), got {in_dtype!r}")
    p2 = _perm("perm_x2", perm_x2, (PERM_ND, PERM_DN))
    if k % 64:
        raise ArgumentError(f"k: must be a multiple of 64, got {k}")
    r = np.float32(1.0 if out == "float16" else 0.05)
    rng = np.random.default_rng(seed)
    x1 = (rng.random((m, batch, k), dtype=np.float32) * r).astype(fp8)
    x2_shape = (batch, k, n) if p2 == PERM_ND else (batch, n, k)
    x2 = (rng.random(x2_shape, dtype=np.float32) * r).astype(fp8)

    def e8m0(shape, lo, hi):
        v = rng.uniform(lo, hi, size=shape).astype(np.float32)
        return cast(v, "float8_e8m0fnu").view(np.uint8)

    x1_scale = e8m0((m, batch, k // 64, 2), 0.9, 1.1)
    s2_shape = (batch, k // 64, n, 2) if p2 == PERM_ND else (batch, n, k // 64, 2)
    x2_scale = e8m0(s2_shape, 0.0, float(r))
    return x1, x2, x1_scale, x2_scale


__all__ = ["build_kernel", "make_inputs", "out_dtype_name", "transpose_quant_batch_matmul", "validate_inputs"]
