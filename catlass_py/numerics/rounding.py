"""Hardware casts between the dtypes of the simulated machine, with the Ascend rounding modes.

Counterpart of Ascend C ``Cast`` (Memory and Reg vector APIs, SIMT ``__<src>2<dst>_r*[_sat]`` intrinsics)
with ``RoundMode::CAST_*`` and ``SatMode``. Everything is vectorised numpy; every narrowing is exact:
the input is read into float64 without loss (64-bit integers above 2**53 are pre-rounded *to odd*, which
keeps the final rounding correct), its two neighbours on the target grid are computed exactly and the
mode picks one. ml_dtypes' own (round-to-nearest-even) casts are used to store values that are already
exactly representable, for the fixpipe hot path fp32 -> fp16/bf16 RINT, and for RINT from fp16/bf16/fp32 to
fp8, e8m0 and fp4 e2m1 with the NaN cases patched (:data:`_FAST_NARROW_SOURCES`); their equality with the
exact path is tested exhaustively.

Policy summary (Ascend C Reg ``Cast`` "不同类型转换场景下的不饱和模式和饱和模式" and the SIMT conversion overview):

=================  =======================================  ===========================================
path               ``saturate=False``                       ``saturate=True``
=================  =======================================  ===========================================
float -> float     overflow/inf -> +-inf; e4m3fn and e8m0   overflow/inf -> +-max finite; NaN -> 0
                   (no inf) -> NaN; fp4 -> +-max;           (``keep_nan=True``: NaN stays NaN, Ascend
                   NaN -> NaN (fp4: +0)                     CTRL[50]=1)
float -> int       rounded, then wrapped to the width       rounded, then clamped to the int range
                   (keep the low bits); +-inf -> int max/   +-inf -> int max/min; NaN -> 0
                   min; NaN -> 0
int -> int         wrapped (two's complement low bits)      clamped to the range
int -> float       as float -> float (exact integer input)  as float -> float
=================  =======================================  ===========================================

The default mode is RINT (CAST_ROUND for hifloat8 targets, the only nearest mode its hardware has).
``RoundMode.NONE`` behaves as RINT (Ascend: "CAST_RINT when the conversion loses precision, no rounding
otherwise" -- the two coincide). ``RoundMode.HYBRID`` is accepted only for hifloat8 targets.
e8m0 (no zero, no sign): zero, negative and NaN inputs give NaN (0xFF, as ml_dtypes); positive values
below 2**-127 give 2**-127. Same-dtype float casts return the input values (inf/NaN policy still
applied); Ascend's same-type ``Cast`` (round to an integral value) is :func:`round_to_integral`.
"""

from __future__ import annotations

import numpy as np

from catlass_py.errors import ArgumentError
from catlass_py.numerics import dtypes as _dt
from catlass_py.numerics._grid import (
    BF16_FORMAT,
    E1M2_FORMAT,
    E2M1_FORMAT,
    E4M3FN_FORMAT,
    E5M2_FORMAT,
    E8M0_FORMAT,
    FP16_FORMAT,
    FP32_FORMAT,
    HIF8_FORMAT,
    FloatFormat,
    RoundMode,
    quantize_values,
    to_float64,
)
from catlass_py.numerics.e1m2 import _TABLE as _E1M2_TABLE
from catlass_py.numerics.hif8 import _TABLE as _HIF8_TABLE
from catlass_py.numerics.hif8 import hif8_quantize_values

_FORMATS: dict[str, FloatFormat] = {
    _dt.FLOAT32.name: FP32_FORMAT,
    _dt.FLOAT16.name: FP16_FORMAT,
    _dt.BFLOAT16.name: BF16_FORMAT,
    _dt.FLOAT8_E4M3FN.name: E4M3FN_FORMAT,
    _dt.FLOAT8_E5M2.name: E5M2_FORMAT,
    _dt.FLOAT8_E8M0.name: E8M0_FORMAT,
    _dt.FLOAT4_E2M1.name: E2M1_FORMAT,
    _dt.FLOAT4_E1M2.name: E1M2_FORMAT,
    _dt.HIFLOAT8.name: HIF8_FORMAT,
}


def float_format(dtype) -> FloatFormat:
    """Grid description (``FloatFormat``: emin, mantissa bits, max finite, inf/NaN/zero flags) of a float dtype.

    Counterpart of ``std::numeric_limits`` / ``ml_dtypes.finfo`` for the registry's float types, including
    the formats numpy lacks (fp4 e1m2, HiFloat8).
    """
    t = _dt.get_dtype(dtype)
    fmt = _FORMATS.get(t.name)
    if fmt is None:
        raise ArgumentError(f"dtype: expected a floating-point dtype, got {t.name}")
    return fmt


def _int_range(t: _dt.DType) -> tuple[int, int]:
    if t.kind == "uint":
        return 0, (1 << t.bits) - 1
    return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1


def _resolve_source(x: np.ndarray, src_dtype) -> tuple[np.ndarray, _dt.DType | None]:
    """Return (array, registry dtype or None for plain host numpy types such as float64/int64/bool)."""
    if src_dtype is not None:
        t = _dt.get_dtype(src_dtype)
        if t.codes:
            if x.dtype.kind not in "iu":
                raise ArgumentError(f"x: {t.name} data must be an integer array of codes, got dtype {x.dtype}")
            return x, t
        if x.dtype != t.numpy:
            raise ArgumentError(f"x: src_dtype {t.name} needs a {t.numpy} array, got dtype {x.dtype}")
        return x, t
    try:
        return x, _dt.get_dtype(x.dtype)
    except ArgumentError:
        if x.dtype.kind in "biuf":
            return x, None
        raise ArgumentError(f"x: cannot cast an array of dtype {x.dtype}") from None


def _source_values(x: np.ndarray, t: _dt.DType | None) -> np.ndarray:
    """Exact float64 view of a float/code source (see ``to_float64`` for 64-bit integers)."""
    if t is not None and t.codes:
        table = _HIF8_TABLE if t is _dt.HIFLOAT8 else _E1M2_TABLE
        c = np.asarray(x)
        if c.size and (c.min() < 0 or c.max() >= len(table.values)):
            raise ArgumentError(f"x: {t.name} codes must lie in [0, {len(table.values) - 1}]")
        return table.decode(c)
    return to_float64(x)


def _round_integer(v: np.ndarray, mode: RoundMode) -> np.ndarray:
    """float64 -> integral float64 by mode (finite inputs; exact)."""
    if mode in (RoundMode.NONE, RoundMode.RINT):
        return np.rint(v)
    if mode is RoundMode.FLOOR:
        return np.floor(v)
    if mode is RoundMode.CEIL:
        return np.ceil(v)
    if mode is RoundMode.TRUNC:
        return np.trunc(v)
    a = np.abs(v)
    fl = np.floor(a)
    if mode is RoundMode.ROUND:
        r = fl + ((a - fl) >= 0.5)
    elif mode is RoundMode.ODD:
        r = np.where((a != fl) & (np.fmod(fl, 2.0) == 0.0), fl + 1.0, fl)
    else:
        raise ArgumentError(f"mode: {mode.name} is not defined for conversions to integers")
    return np.copysign(r, v)


def _wrap_int64(r: np.ndarray, t: _dt.DType) -> np.ndarray:
    """Integral float64 (|r| may be huge) -> the low ``t.bits`` bits, as int64 (uint64 for UINT64)."""
    m = np.fmod(r, 2.0**64)  # exact
    neg = m < 0
    u = np.where(neg, -m, m).astype(np.uint64)
    u = np.where(neg, (~u) + np.uint64(1), u)  # two's complement of the magnitude, mod 2**64
    return _wrap_bits(u, t)


def _wrap_bits(u: np.ndarray, t: _dt.DType) -> np.ndarray:
    """uint64 two's-complement bit patterns -> values of ``t`` (int64 array, or uint64 for UINT64)."""
    if t.bits == 64:
        return u.astype(np.uint64) if t.kind == "uint" else u.view(np.int64)
    low = (u & np.uint64((1 << t.bits) - 1)).astype(np.int64)
    if t.kind == "int":
        half = 1 << (t.bits - 1)
        low = np.where(low >= half, low - (1 << t.bits), low)
    return low


def _store(values: np.ndarray, t: _dt.DType) -> np.ndarray:
    """Store exact values (float64 grid values, or int64/uint64 in range) as dtype ``t``."""
    if t is _dt.HIFLOAT8:
        return _HIF8_TABLE.encode(values)
    if t is _dt.FLOAT4_E1M2:
        return _E1M2_TABLE.encode(values)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(values).astype(t.numpy)


def _float_to_int(v: np.ndarray, t: _dt.DType, mode: RoundMode, saturate: bool) -> np.ndarray:
    lo, hi = _int_range(t)
    nan = np.isnan(v)
    posinf = np.isposinf(v)
    neginf = np.isneginf(v)
    finite = np.isfinite(v)
    r = _round_integer(np.where(finite, v, 0.0), mode)
    if saturate:
        if t.bits == 64:
            npt = np.uint64 if t.kind == "uint" else np.int64
            top = 2.0**64 if t.kind == "uint" else 2.0**63
            above = r >= top
            res = np.maximum(np.where(above, 0.0, r), float(lo)).astype(npt)
            res = np.where(above, npt(hi), res)
        else:
            res = np.clip(r, lo, hi).astype(np.int64)
        res = np.where(posinf, res.dtype.type(hi), np.where(neginf, res.dtype.type(lo), res))
    else:
        res = _wrap_int64(r, t)
        res = np.where(posinf, res.dtype.type(hi), np.where(neginf, res.dtype.type(lo), res))
    res = np.where(nan, res.dtype.type(0), res)
    return _store(res, t)


def _int_to_int(x: np.ndarray, t: _dt.DType, saturate: bool) -> np.ndarray:
    lo, hi = _int_range(t)
    xi = np.asarray(x)
    if xi.dtype.kind not in "iu":  # ml_dtypes int4
        xi = xi.astype(np.int64)
    if not saturate:
        return _store(_wrap_bits(xi.astype(np.uint64), t), t)
    if xi.dtype == np.uint64:
        res = np.minimum(xi, np.uint64(hi))
        return _store(res if t.bits == 64 else res.astype(np.int64), t)
    xi = xi.astype(np.int64)
    if t.bits == 64 and t.kind == "uint":
        return _store(np.maximum(xi, 0).astype(np.uint64), t)
    return _store(np.clip(xi, max(lo, -(1 << 63)), min(hi, (1 << 63) - 1)), t)


def cast(x, dst_dtype, mode=None, *, saturate: bool = False, src_dtype=None, keep_nan: bool = False):
    """Convert ``x`` to ``dst_dtype`` the way the hardware does (Ascend C ``Cast`` with ``RoundMode::CAST_*``).

    ``x`` is any numpy array of a registry dtype (or a plain host float64/int64/bool array); arrays of the
    code-only formats (fp4 e1m2, hifloat8: raw uint8 codes) need ``src_dtype``. ``dst_dtype`` is anything
    :func:`get_dtype` accepts. The result has ``dst_dtype``'s numpy storage (uint8 codes for e1m2/hif8,
    ml_dtypes arrays for bf16/fp8/fp4/e8m0/int4) and ``x``'s shape; ``x`` is never modified.
    ``mode`` is a :class:`RoundMode` (or its name); None (default) means the hardware default of the
    target: ``CAST_RINT``, except ``CAST_ROUND`` for hifloat8 (which has no RINT instruction). ``saturate``
    selects ``SatMode::SAT``; ``keep_nan`` keeps NaN (instead of 0) in saturating float casts to formats
    that have NaN. Integer -> integer casts ignore ``mode``. See the module docstring for the complete
    inf/NaN/overflow policy.
    """
    dst = _dt.get_dtype(dst_dtype)
    if mode is None:
        mode = RoundMode.ROUND if dst is _dt.HIFLOAT8 else RoundMode.RINT
    mode = RoundMode.of(mode)
    x = np.asarray(x)
    x, src = _resolve_source(x, src_dtype)
    src_is_int = (src.kind in ("int", "uint")) if src is not None else x.dtype.kind in "biu"
    if mode is RoundMode.HYBRID and dst is not _dt.HIFLOAT8:
        raise ArgumentError(f"mode: CAST_HYBRID exists only for conversions to hifloat8, not to {dst.name}")
    if dst.kind in ("int", "uint"):
        if src_is_int:
            return _int_to_int(x, dst, saturate)
        return _float_to_int(_source_values(x, src), dst, mode, saturate)
    if dst is _dt.HIFLOAT8:
        # HYBRID reads the fp32/fp16 bit pattern, so float32/float16 arrays go in as they are
        raw = x if mode is RoundMode.HYBRID and x.dtype in (np.float16, np.float32) else _source_values(x, src)
        return _store(hif8_quantize_values(raw, mode, saturate=saturate, keep_nan=keep_nan), dst)
    fmt = _FORMATS[dst.name]
    plain = src is None or not src.codes  # uint8 arrays may hold e1m2/hif8 codes, not integers
    if plain and dst is _dt.FLOAT32 and x.dtype in _EXACT_IN_FP32:
        return x.astype(np.float32)  # every value is representable: no rounding, whatever the mode
    if plain and dst is _dt.FLOAT32 and x.dtype == np.int32 and mode in (RoundMode.RINT, RoundMode.NONE):
        return x.astype(np.float32)  # C int->float conversion rounds to nearest even (tested against the exact path)
    if mode in (RoundMode.RINT, RoundMode.NONE) and x.dtype == np.float32 and dst in (_dt.FLOAT16, _dt.BFLOAT16):
        return _fast_rne_from_fp32(x, dst, fmt, saturate=saturate, keep_nan=keep_nan)
    if mode in (RoundMode.RINT, RoundMode.NONE) and x.dtype in _FAST_NARROW_SOURCES and dst in _FAST_NARROW_TARGETS:
        return _fast_rne_narrow(x, dst, fmt, saturate=saturate, keep_nan=keep_nan)
    vals = quantize_values(_source_values(x, src), fmt, mode, saturate=saturate, keep_nan=keep_nan)
    return _store(vals, dst)


_EXACT_IN_FP32 = tuple(
    np.dtype(t) for t in (np.float16, _dt.BFLOAT16.numpy, np.float32, np.int8, np.uint8, np.int16, np.uint16, np.bool_)
)


def _fast_rne_from_fp32(x: np.ndarray, dst: _dt.DType, fmt: FloatFormat, *, saturate: bool, keep_nan: bool):
    """fp32 -> fp16/bf16 RINT through numpy/ml_dtypes (correctly rounded RNE, overflow -> inf), the fixpipe
    hot path; same results as the exact path (tested)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if not saturate:
            return x.astype(dst.numpy)
        y = np.clip(x, np.float32(-fmt.max_finite), np.float32(fmt.max_finite)).astype(dst.numpy)
    if not keep_nan:
        y = np.where(np.isnan(x), dst.numpy.type(0), y)
    return y


#: fp8 / fp4 / e8m0 RINT from fp16, bf16 and fp32 arrays goes through ml_dtypes' own round-to-nearest-even
#: casts (12-100x faster than the exact grid, benchmarks/bench_casts.py), which give the exact path's bits for
#: every input but NaNs: ml_dtypes keeps the sign of a NaN (and makes negative overflow -NaN in e4m3fn) where
#: the exact path writes the one positive NaN code, and maps NaN to a finite code in fp4 (no NaN) where the
#: policy says +0. :func:`_fast_rne_narrow` patches exactly those elements; the equality with the exact path
#: is tested exhaustively over all fp16 and bf16 inputs and a dense fp32 sample (every tie and its neighbours,
#: subnormals, NaN payloads, infinities). float64 sources keep the exact path (a float64 -> fp8 cast through
#: float32 could round twice).
#: ml_dtypes before 0.7 rounds the values below e8m0's smallest code 2^-127 (fp32 and bf16 subnormals) up to
#: the code 2^-126; e8m0 takes the fast path only from 0.7 on, where its bits equal the exact path's (tested).
_FAST_NARROW_SOURCES = tuple(np.dtype(t) for t in (np.float16, _dt.BFLOAT16.numpy, np.float32))
_FAST_NARROW_TARGETS = (_dt.FLOAT8_E4M3FN, _dt.FLOAT8_E5M2, _dt.FLOAT4_E2M1) + (
    (_dt.FLOAT8_E8M0,) if _dt.ML_DTYPES_VERSION >= (0, 7) else ())


def _fast_rne_narrow(x: np.ndarray, dst: _dt.DType, fmt: FloatFormat, *, saturate: bool, keep_nan: bool):
    """fp16/bf16/fp32 -> fp8 e4m3fn / e5m2, e8m0, fp4 e2m1 RINT through ml_dtypes, with the exact path's NaN
    policy (module docstring); saturation clips to the format's range first (exact: everything that would
    overflow or is infinite becomes +-max; e8m0, unsigned, only overflows upwards)."""
    with np.errstate(over="ignore", invalid="ignore"):
        src = x
        if saturate and fmt.has_zero:
            limit = x.dtype.type(fmt.max_finite)
            src = np.clip(x, -limit, limit)
        y = np.asarray(src.astype(dst.numpy))
    nan_in = np.isnan(x)
    if not fmt.has_nan:  # fp4: NaN -> +0 (saturating or not)
        return np.where(nan_in, dst.numpy.type(0), y) if nan_in.any() else y
    nan_out = np.isnan(y)
    if not nan_out.any():
        return y
    nan = dst.numpy.type(np.nan)  # the code the exact path stores for NaN
    if not fmt.has_zero:  # e8m0: zero, negative and NaN inputs are NaN; saturation bounds only the overflow
        if saturate:
            with np.errstate(invalid="ignore"):
                over = nan_out & ~nan_in & (x > 0)
            return np.where(over, dst.numpy.type(fmt.max_finite), np.where(nan_out, nan, y))
        return np.where(nan_out, nan, y)
    if saturate and not keep_nan:
        return np.where(nan_in, dst.numpy.type(0), np.where(nan_out, nan, y))
    return np.where(nan_out, nan, y)


def round_to_integral(x, mode=RoundMode.RINT) -> np.ndarray:
    """Round float values to integral values in the same dtype (Ascend C same-type ``Cast``, e.g. float->float
    with ``CAST_FLOOR``; also the ``Round`` family). NaN and +-inf pass through; -0.0 keeps its sign."""
    mode = RoundMode.of(mode)
    x = np.asarray(x)
    t = _dt.get_dtype(x.dtype) if x.dtype != np.float64 else None
    if t is not None and (t.kind != "float" or t.codes):
        raise ArgumentError(f"x: round_to_integral needs a float array of a numpy-backed type, got {t.name}")
    if mode is RoundMode.HYBRID:
        raise ArgumentError("mode: CAST_HYBRID is not an integral rounding mode")
    v = x.astype(np.float64)
    finite = np.isfinite(v)
    r = np.where(finite, _round_integer(np.where(finite, v, 0.0), mode), v)
    r = np.copysign(r, v)  # keep the sign of zeros produced from negative inputs
    return r.astype(x.dtype)
