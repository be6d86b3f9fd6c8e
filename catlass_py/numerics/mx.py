"""MX (microscaling) block quantisation: OCP MX v1.0 "FLOOR" shared scale, E8M0 scales.

Counterpart of PTO ``TQUANT`` (OCP variants, ``MxQuantAlg::OcpMxFp8E4M3`` / ``OcpMxFp4E2M1``) and of the
reference ``to_mx`` of torchao ``prototype/mx_formats`` (pto-mx-semantics 5.2/5.3). For each block ``V`` of
``block`` consecutive elements along ``axis``:

1. ``amax = max |V_i|`` (NaN if any element is NaN);
2. shared exponent ``s = floor(log2(amax)) - emax_elem`` (the exponent of ``amax``, read exactly; for fp32
   this is the biased exponent field minus 127, and fp32 subnormals/zero give -127), clamped to
   ``[-127, 128]``; the E8M0 scale byte is ``s + 127`` (so 128 gives 0xFF); a non-finite ``amax`` gives
   0xFF (NaN scale: pto-mx-semantics' default, although torchao gives ``255 - emax`` for inf);
3. ``P_i = V_i * 2**-s`` (exact), then rounded to the element format with RNE and saturation to +-max
   (explicit clamp as in the PTO goldens; :func:`~catlass_py.numerics.rounding.cast` with
   ``saturate=True``). NaN elements stay NaN for fp8 and become 0 for fp4; blocks with a NaN scale are
   NaN after dequantisation whatever their elements.

``emax_elem`` (largest power of two of the element format): e4m3fn 8, e5m2 15, e2m1 2, e1m2 0.
Inputs are read exactly (fp32/bf16/fp16 as on hardware; float64 is not first rounded to fp32).

Options where the sources disagree (pto-mx-semantics 5.3, [CONFLICT]); the defaults follow the PTO goldens:

* ``inf_scale="nan"``: an infinite block maximum gives the NaN scale 0xFF (goldens, torchao for NaN);
  ``"exponent"`` keeps the PTO CPU simulator's arithmetic, biased fp32 exponent 255 minus ``emax_elem``
  (0xF7 for e4m3).
* ``rounding="rne"``: stage 3 rounds to nearest even (goldens, CPU simulator); ``"stochastic"`` rounds
  up with probability equal to the fractional distance to the next grid point (what the TQUANT document
  says the hardware does with SPR.CTRL[50] = 1), drawing from ``rng``.
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


_INF_SCALES = ("nan", "exponent")


def mx_scale_exponent(amax, elem_dtype, *, inf_scale: str = "nan") -> np.ndarray:
    """E8M0 scale bytes (uint8) for block maxima ``amax`` (OCP FLOOR; PTO ``TQUANT`` stage 2 for OCP).

    ``inf_scale`` chooses what an infinite maximum gives: ``"nan"`` (0xFF, default) or ``"exponent"`` (the
    PTO CPU simulator's ``255 - emax_elem``). A NaN maximum always gives 0xFF.
    """
    t = _elem(elem_dtype)
    if inf_scale not in _INF_SCALES:
        raise ArgumentError(f"inf_scale: expected one of {_INF_SCALES}, got {inf_scale!r}")
    a = np.abs(to_float64(np.asarray(amax)))
    finite = np.isfinite(a)
    _, exp = np.frexp(np.where(finite & (a > 0), a, 1.0))
    e = np.where(finite & (a > 0), exp.astype(np.int64) - 1, -E8M0_BIAS)
    # [-127, 128] as torchao: 128 (only reachable from float64 inputs beyond the fp32 range) is 0xFF = NaN
    s = np.clip(e - MX_ELEMENT_EMAX[t.name], -E8M0_BIAS, E8M0_BIAS + 1)
    biased = (s + E8M0_BIAS).astype(np.uint8)
    out = np.where(finite, biased, np.uint8(E8M0_NAN)).astype(np.uint8)
    if inf_scale == "exponent":
        out = np.where(np.isinf(a), np.uint8(255 - MX_ELEMENT_EMAX[t.name]), out).astype(np.uint8)
    return out


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


def quantize_mx(x, elem_dtype, block: int = 32, axis: int = -1, *, inf_scale: str = "nan",
                rounding: str = "rne", rng=None) -> tuple[np.ndarray, np.ndarray]:
    """Quantise ``x`` to MX: returns ``(data, scales)`` (PTO ``TQUANT`` OCP / torchao ``to_mx`` FLOOR).

    ``data`` has ``x``'s shape and ``elem_dtype``'s storage (ml_dtypes float8_e4m3fn / float8_e5m2 /
    float4_e2m1fn, or uint8 codes for fp4 e1m2; :func:`~catlass_py.numerics.packing.pack_fp4` packs fp4 two
    per byte). ``scales`` are uint8 E8M0 bytes (decode with :func:`e8m0_decode`) with ``x``'s shape except
    ``shape[axis] // block`` along ``axis``. ``inf_scale`` and ``rounding`` select the alternatives of the
    module docstring; ``rounding="stochastic"`` needs ``rng`` (a ``numpy.random.Generator``).
    """
    t = _elem(elem_dtype)
    if rounding not in ("rne", "stochastic"):
        raise ArgumentError(f"rounding: expected 'rne' or 'stochastic', got {rounding!r}")
    if rounding == "stochastic" and not isinstance(rng, np.random.Generator):
        raise ArgumentError(f"rng: stochastic rounding needs a numpy.random.Generator, got {rng!r}")
    xv = np.asarray(x)
    if xv.dtype.kind not in "fiuV":
        raise ArgumentError(f"x: expected a real numeric array, got dtype {xv.dtype}")
    v = to_float64(xv)
    blocks, ax = _blocked(v, block, axis)
    with np.errstate(invalid="ignore"):
        amax = np.max(np.abs(blocks), axis=-1)  # NaN propagates
    scales = mx_scale_exponent(amax, t, inf_scale=inf_scale)
    nan_scale = scales == E8M0_NAN
    s = np.where(nan_scale, 0, scales.astype(np.int64) - E8M0_BIAS)
    p = np.ldexp(blocks, (-s)[..., None].astype(np.int32))  # exact power-of-two scaling
    fmt = float_format(t)
    p = np.where(nan_scale[..., None], np.nan, p)
    with np.errstate(invalid="ignore"):
        p = np.clip(p, -fmt.max_finite, fmt.max_finite)  # PTO golden clamp (NaN passes through)
    if rounding == "stochastic":
        p = _stochastic(p, fmt, rng)  # exact grid points: the cast below only stores them
    data = cast(_unblocked(p, ax), t, RoundMode.RINT, saturate=True, keep_nan=True)
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
