"""MX (microscaling) block quantisation: E8M0 shared scales with the OCP (FLOOR) or NV (RCEIL) rule.

Counterpart of the arithmetic of PTO ``TQUANT`` (``docs/isa/TQUANT.md``, ``include/pto/npu/a5/TQuant.hpp``,
goldens ``tests/npu/a5/src/st/testcase/tquant/gen_data.py``) and of torchao ``prototype/mx_formats`` ``to_mx``.
For each block ``V`` of ``block`` consecutive elements along ``axis``:

1. ``amax = max |V_i|`` (NaN if any element is NaN);
2. the E8M0 scale byte ``e``:

   * ``scale_alg="ocp"`` (FLOOR; ``MxQuantAlg::OcpMx*``): ``e = max(E(amax) - emax, 0)`` with ``E`` the biased
     fp32 exponent field of ``amax`` (0 for zero and fp32 subnormals; values beyond fp32 saturate at 255 -
     emax) and ``emax`` the largest power of two of the element format (e4m3fn 8, e5m2 15, e2m1 2, e1m2 0);
   * ``scale_alg="nv"`` (RCEIL; ``MxQuantAlg::NvMx*``): ``d = fp32(fp32(amax) * fp32(1 / max_finite))`` and
     ``e = ceil(log2 d) + 127`` read off the bits of ``d`` (exponent field, plus one when the mantissa is
     non-zero below 0xFE, or when a subnormal ``d`` exceeds 2**-127); an infinite ``d`` gives 0xFE;
   * a NaN ``amax`` gives 0xFF (NaN scale);

3. ``P_i = V_i * 2**(127 - e)`` (exact), clamped to +-max_finite, rounded to the element format with RNE
   (:func:`~catlass_py.numerics.rounding.cast`, ``saturate=True``). In a NaN-scale block every ``P_i`` is NaN:
   fp8 stores NaN (0x7F); fp4 has no NaN and stores code 0x7 (+6), as PTO's E2M1 encoder does for NaN.

Inputs are read exactly (fp32/bf16/fp16 as on hardware; float64 is not first rounded to fp32, except that the
NV rule multiplies the maximum in fp32 as the hardware does).

Where PTO-ISA's ISA text and its reference code disagree, the default follows the code and its goldens and
the other behaviour is a named option:

* ``inf_scale="exponent"`` (default): an infinite block maximum keeps the OCP exponent arithmetic, ``255 -
  emax`` (0xF7 for e4m3, 0xFD for e2m1: the ``inf_only`` goldens of ``tquant/gen_data.py``, ``TQuant.hpp``
  ``ComputeF32OcpExpAndScaling``); ``"nan"`` gives the NaN scale 0xFF (pto-mx-semantics' earlier reading);
* ``fp4_nan="max"`` (default): NaN elements of fp4 blocks become code 0x7 (``TQuant.hpp``
  ``CalcE2M1SignedCodeI32`` and ``SaturateBf16NaNToPosInf``); ``"zero"`` stores 0 instead;
* ``rounding="rne"`` (default, goldens and ``vcvt ... ROUND_R``); ``"stochastic"`` rounds up with probability
  equal to the fractional distance to the next grid point, which ``TQUANT.md`` says stage 3 does with
  ``SPR.CTRL[50] = 1`` (draws from ``rng``);
* ``emax=None`` (default: the table above, as ``TQuant.hpp``'s ``OcpMxFp4E2M1Spec`` uses 2 for e2m1);
  ``TQUANT.md``'s table gives 1 for e2m1, which ``emax=1`` selects.
"""

from __future__ import annotations

import numpy as np

from catlass_py.errors import ArgumentError
from catlass_py.numerics import dtypes as _dt
from catlass_py.numerics._grid import RoundMode, quantize_values, to_float64
from catlass_py.numerics.e1m2 import e1m2_values
from catlass_py.numerics.rounding import cast, float_format

E8M0_BIAS = 127
E8M0_NAN = 0xFF
#: the code PTO's E2M1 encoder gives a NaN element (+6, the largest magnitude): TQuant.hpp, tquant goldens
FP4_NAN_CODE = 0x7
MX_ELEMENT_EMAX = {
    _dt.FLOAT8_E4M3FN.name: 8,
    _dt.FLOAT8_E5M2.name: 15,
    _dt.FLOAT4_E2M1.name: 2,
    _dt.FLOAT4_E1M2.name: 0,
}


def _elem(elem_dtype) -> _dt.DType:
    t = _dt.get_dtype(elem_dtype)
    if t.name not in MX_ELEMENT_EMAX:
        raise ArgumentError(
            f"elem_dtype: expected one of {sorted(MX_ELEMENT_EMAX)} (MX element formats), got {t.name}"
        )
    return t


def _blocked(x: np.ndarray, block: int, axis: int) -> tuple[np.ndarray, int]:
    """Move ``axis`` last and split it into (K/block, block)."""
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise ArgumentError(f"block: expected a positive integer, got {block!r}")
    if x.ndim == 0:
        raise ArgumentError("x: expected an array with at least one dimension, got a scalar")
    if not -x.ndim <= axis < x.ndim:
        raise ArgumentError(f"axis: expected a value in [{-x.ndim}, {x.ndim - 1}], got {axis}")
    axis = axis % x.ndim
    k = x.shape[axis]
    if k % block:
        raise ArgumentError(f"x: the length of axis {axis} ({k}) must be a multiple of block ({block})")
    moved = np.moveaxis(x, axis, -1)
    return moved.reshape(*moved.shape[:-1], k // block, block), axis


def _unblocked(b: np.ndarray, axis: int) -> np.ndarray:
    flat = b.reshape(*b.shape[:-2], b.shape[-2] * b.shape[-1])
    return np.moveaxis(flat, -1, axis)


_INF_SCALES = ("exponent", "nan")
_SCALE_ALGS = ("ocp", "nv")
_FP4_NANS = ("max", "zero")
FP32_EXP_MASK = 0x7F800000
FP32_MANT_MASK = 0x007FFFFF


def _choice(name: str, value, allowed) -> None:
    if value not in allowed:
        raise ArgumentError(f"{name}: expected one of {allowed}, got {value!r}")


def _emax(t: _dt.DType, emax) -> int:
    if emax is None:
        return MX_ELEMENT_EMAX[t.name]
    if isinstance(emax, bool) or not isinstance(emax, (int, np.integer)) or not 0 <= emax <= 127:
        raise ArgumentError(f"emax: expected an integer in [0, 127] or None, got {emax!r}")
    return int(emax)


def check_rounding_options(rounding: str, fp4_nan: str, rng) -> None:
    """The checks :func:`quantize_mx` makes of its rounding options, in its order: ``rounding`` ("rne" or
    "stochastic"), ``fp4_nan`` ("max" or "zero"), and ``rng`` a ``numpy.random.Generator`` for stochastic
    rounding. An :class:`ArgumentError` names the first one that is wrong."""
    _choice("rounding", rounding, ("rne", "stochastic"))
    _choice("fp4_nan", fp4_nan, _FP4_NANS)
    if rounding == "stochastic" and not isinstance(rng, np.random.Generator):
        raise ArgumentError(f"rng: stochastic rounding needs a numpy.random.Generator, got {rng!r}")


def check_scale_options(t: _dt.DType, *, inf_scale: str, scale_alg: str, emax) -> int:
    """The checks :func:`mx_scale_exponent` makes of its options for the MX element type ``t``, in its order
    (``inf_scale``, ``scale_alg``, ``emax``); returns the emax in use (``t``'s when ``emax`` is None)."""
    _choice("inf_scale", inf_scale, _INF_SCALES)
    _choice("scale_alg", scale_alg, _SCALE_ALGS)
    return _emax(t, emax)


def _biased_exponent(a: np.ndarray) -> np.ndarray:
    """Biased fp32 exponent field of the non-negative float64 values ``a`` (finite ones): 0 for zero and fp32
    subnormals, 255 beyond the fp32 range (values that would round to inf)."""
    finite = np.isfinite(a)
    _, exp = np.frexp(np.where(finite & (a > 0), a, 1.0))
    e = exp.astype(np.int64) - 1 + E8M0_BIAS  # a = m * 2**(exp-1) with 1 <= m < 2
    return np.where(finite & (a > 0), np.clip(e, 0, 255), 0)


def mx_scale_exponent(amax, elem_dtype, *, inf_scale: str = "exponent", scale_alg: str = "ocp",
                      emax: int | None = None) -> np.ndarray:
    """E8M0 scale bytes (uint8) for block maxima ``amax`` (stage 2 of the module docstring).

    ``scale_alg`` is "ocp" (FLOOR) or "nv" (RCEIL); ``inf_scale`` chooses what an infinite OCP maximum gives:
    "exponent" (``255 - emax``, default) or "nan" (0xFF); ``emax`` overrides the element format's. A NaN
    maximum always gives 0xFF.
    """
    t = _elem(elem_dtype)
    em = check_scale_options(t, inf_scale=inf_scale, scale_alg=scale_alg, emax=emax)
    a = np.abs(to_float64(np.asarray(amax)))
    nan = np.isnan(a)
    if scale_alg == "nv":
        recip = np.float32(1.0) / np.float32(float_format(t).max_finite)
        with np.errstate(over="ignore", invalid="ignore"):
            d = (np.where(nan, 0.0, a).astype(np.float32) * recip).astype(np.float32)
        bits = np.ascontiguousarray(d).view(np.uint32).astype(np.int64)
        exp = (bits & FP32_EXP_MASK) >> 23
        mant = bits & FP32_MANT_MASK
        up = ((mant != 0) & (exp > 0) & (exp < 0xFE)) | ((exp == 0) & (mant > 0x00400000))
        e = np.where(exp == 0xFF, 0xFE, exp + up)
    else:
        biased = _biased_exponent(a)
        e = np.maximum(biased - em, 0)
        if inf_scale == "nan":
            e = np.where(np.isinf(a), E8M0_NAN, e)
        else:
            e = np.where(np.isinf(a), 255 - em, e)
    return np.where(nan, E8M0_NAN, e).astype(np.uint8)


def e8m0_decode(scales, dtype=np.float32) -> np.ndarray:
    """Values of E8M0 scale bytes: ``2**(e - 127)`` (0x00 is ``2**-127``), NaN for 0xFF (OCP MX; PTO
    ``float8_e8m0_t``). Exact in float32 (``2**-127`` is an fp32 subnormal)."""
    sc = np.asarray(scales)
    if sc.dtype == np.dtype(_dt.FLOAT8_E8M0.numpy):
        sc = sc.view(np.uint8)
    if sc.dtype.kind not in "iu":
        raise ArgumentError(f"scales: expected uint8 E8M0 bytes or float8_e8m0fnu, got dtype {sc.dtype}")
    return _E8M0_TABLE[sc.astype(np.intp)].astype(dtype, copy=False)


def _e8m0_table() -> np.ndarray:
    t = np.ldexp(1.0, np.arange(256) - E8M0_BIAS)
    t[E8M0_NAN] = np.nan
    return t


_E8M0_TABLE = _e8m0_table()


def _stochastic(p: np.ndarray, fmt, rng) -> np.ndarray:
    """Round float64 ``p`` (already within +-max) onto ``fmt``'s grid: away from zero with probability equal
    to the distance from the lower-magnitude neighbour over the spacing."""
    toward = quantize_values(p, fmt, RoundMode.TRUNC, saturate=True, keep_nan=True)
    away = np.where(p >= 0, quantize_values(p, fmt, RoundMode.CEIL, saturate=True, keep_nan=True),
                    quantize_values(p, fmt, RoundMode.FLOOR, saturate=True, keep_nan=True))
    gap = np.abs(away - toward)
    with np.errstate(invalid="ignore", divide="ignore"):
        prob = np.where(gap > 0, np.abs(p - toward) / np.where(gap > 0, gap, 1.0), 0.0)
    u = rng.random(p.shape)
    return np.where(u < prob, away, toward)


def quantize_mx(x, elem_dtype, block: int = 32, axis: int = -1, *, scale_alg: str = "ocp",
                inf_scale: str = "exponent", fp4_nan: str = "max", rounding: str = "rne", rng=None,
                emax: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Quantise ``x`` to MX: returns ``(data, scales)`` (the arithmetic of PTO ``TQUANT``; torchao ``to_mx``).

    ``data`` has ``x``'s shape and ``elem_dtype``'s storage (ml_dtypes float8_e4m3fn / float8_e5m2 /
    float4_e2m1fn, or uint8 codes for fp4 e1m2; :func:`~catlass_py.numerics.packing.pack_fp4` packs fp4 two
    per byte). ``scales`` are uint8 E8M0 bytes (decode with :func:`e8m0_decode`) with ``x``'s shape except
    ``shape[axis] // block`` along ``axis``. ``scale_alg``, ``inf_scale``, ``fp4_nan``, ``rounding`` and
    ``emax`` select the alternatives of the module docstring; ``rounding="stochastic"`` needs ``rng`` (a
    ``numpy.random.Generator``). ``x`` is never modified.
    """
    t = _elem(elem_dtype)
    check_rounding_options(rounding, fp4_nan, rng)
    xv = np.asarray(x)
    if xv.dtype.kind not in "fiuV":
        raise ArgumentError(f"x: expected a real numeric array, got dtype {xv.dtype}")
    v = to_float64(xv)
    blocks, ax = _blocked(v, block, axis)
    with np.errstate(invalid="ignore"):
        amax = np.max(np.abs(blocks), axis=-1)  # NaN propagates
    scales = mx_scale_exponent(amax, t, inf_scale=inf_scale, scale_alg=scale_alg, emax=emax)
    nan_scale = scales == E8M0_NAN
    shift = E8M0_BIAS - np.where(nan_scale, E8M0_BIAS, scales.astype(np.int64))
    p = np.ldexp(blocks, shift[..., None].astype(np.int32))  # exact power-of-two scaling
    fmt = float_format(t)
    p = np.where(nan_scale[..., None], np.nan, p)
    with np.errstate(invalid="ignore"):
        p = np.clip(p, -fmt.max_finite, fmt.max_finite)  # PTO golden clamp (NaN passes through)
    if rounding == "stochastic":
        p = _stochastic(p, fmt, rng)  # exact grid points: the cast below only stores them
    flat = _unblocked(p, ax)
    data = cast(flat, t, RoundMode.RINT, saturate=True, keep_nan=True)
    if t.packed and fp4_nan == "max":
        nan = np.isnan(flat)
        if nan.any():
            codes = data.view(np.uint8) if data.dtype != np.uint8 else data
            codes[nan] = FP4_NAN_CODE
    scale_out = np.moveaxis(scales, -1, ax)
    return data, np.ascontiguousarray(scale_out)


def dequantize_mx(
    data, scales, block: int = 32, axis: int = -1, *, elem_dtype=None, dtype=np.float32
) -> np.ndarray:
    """Dequantise MX data: ``value = elem * 2**(scale - 127)``, NaN where the scale byte is 0xFF.

    Counterpart of the scale application in ``MmadMx`` / PTO ``TMATMUL_MX`` goldens (computed in float64,
    returned as ``dtype``). ``data`` is an ml_dtypes fp8/fp4 array, or uint8 codes with ``elem_dtype`` given
    (required for fp4 e1m2). ``scales`` are uint8 bytes or a ``float8_e8m0fnu`` array.
    """
    d = np.asarray(data)
    if elem_dtype is None:
        if d.dtype.kind in "iu":
            raise ArgumentError("elem_dtype: required when data holds raw uint8 codes (e.g. fp4 e1m2)")
        t = _elem(d.dtype)
    else:
        t = _elem(elem_dtype)
    if t.codes:
        c = np.asarray(d)
        if c.dtype.kind not in "iu" or (c.size and (c.min() < 0 or c.max() > 15)):
            raise ArgumentError("data: fp4 e1m2 data must be integer codes in [0, 15]")
        vals = e1m2_values()[c.astype(np.intp)]
    else:
        if d.dtype != t.numpy:
            if d.dtype.kind in "iu":
                d = d.astype(np.uint8).view(t.numpy)
            else:
                raise ArgumentError(f"data: expected a {t.numpy} array or uint8 codes, got dtype {d.dtype}")
        vals = d.astype(np.float64)
    sc = np.asarray(scales)
    if sc.dtype == np.dtype(_dt.FLOAT8_E8M0.numpy):
        sc = sc.view(np.uint8)
    if sc.dtype.kind not in "iu":
        raise ArgumentError(f"scales: expected uint8 E8M0 bytes or float8_e8m0fnu, got dtype {sc.dtype}")
    blocks, ax = _blocked(vals, block, axis)
    sb = np.moveaxis(sc, ax, -1)
    if sb.shape != blocks.shape[:-1]:
        raise ArgumentError(
            f"scales: expected shape {tuple(np.moveaxis(np.empty(blocks.shape[:-1]), -1, ax).shape)}, "
            f"got {sc.shape}"
        )
    e = sb.astype(np.int64) - E8M0_BIAS
    out = np.ldexp(blocks, np.where(sb == E8M0_NAN, 0, e)[..., None].astype(np.int32))
    out = np.where((sb == E8M0_NAN)[..., None], np.nan, out)
    return _unblocked(out, ax).astype(dtype)
