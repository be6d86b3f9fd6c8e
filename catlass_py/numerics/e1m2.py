"""FP4 E1M2 (Ascend ``fp4x2_e1m2_t``, one element per byte here): encode/decode between uint8 codes and floats.

Layout of a code (low nibble): ``s e m1 m0``; exponent bias 1. ``e = 0`` is subnormal, value
``(-1)**s * m/4``; ``e = 1`` is normal, value ``(-1)**s * (1 + m/4)``. The 16 codes therefore hold
+-{0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75} -- a uniform grid of step 0.25 -- with two zeros (code 0x0 = +0,
0x8 = -0) and no inf/NaN. This is the table ``Fp4e1m2ToBf16`` of Ascend C (asc-devkit
``impl/basic_api/kernel_type_conversion_utils.h``) and pto-mx-semantics 5.1 (bias 1, max 1.75, min
normal 1, min subnormal 0.25).

Conversions to e1m2 (Ascend C ``Cast`` bf16 -> ``fp4x2_e1m2_t``, modes RINT/ROUND/FLOOR/CEIL/TRUNC) always
saturate: out-of-range values and +-inf give +-1.75, NaN gives +0 (Ascend C Reg ``Cast`` constraints).
"""

from __future__ import annotations

import numpy as np

from catlass_py.errors import ArgumentError
from catlass_py.numerics._grid import E1M2_FORMAT, CodeTable, RoundMode, quantize_values, to_float64

E1M2_MAX = 1.75
E1M2_MIN_NORMAL = 1.0
E1M2_MIN_SUBNORMAL = 0.25
E1M2_NEG_ZERO = 0x8


def _e1m2_values() -> np.ndarray:
    vals = np.empty(16, dtype=np.float64)
    for code in range(16):
        s, e, m = code >> 3, (code >> 2) & 1, code & 3
        mag = (1.0 + m / 4.0) if e else m / 4.0
        vals[code] = -mag if s else mag
    return vals


_TABLE = CodeTable(_e1m2_values(), sign_bit=0x8, nan_code=None, inf_code=None)


def e1m2_values() -> np.ndarray:
    """float64 value of every code 0..15 (read-only); the counterpart of Ascend C ``Fp4e1m2ToBf16``."""
    return _TABLE.values


def _check_codes(codes, limit: int, name: str) -> np.ndarray:
    c = np.asarray(codes)
    if c.dtype.kind not in "iu":
        raise ArgumentError(f"{name}: expected an integer array of codes, got dtype {c.dtype}")
    if c.size and (c.min() < 0 or c.max() >= limit):
        raise ArgumentError(f"{name}: codes must lie in [0, {limit - 1}], got range [{c.min()}, {c.max()}]")
    return c


def e1m2_decode(codes, dtype=np.float32) -> np.ndarray:
    """Decode fp4 e1m2 codes (integers 0..15, one per element) to ``dtype`` (float32 by default).

    Counterpart of Ascend C ``Cast`` ``fp4x2_e1m2_t`` -> ``bfloat16_t`` (exact; every e1m2 value is a
    bf16/fp16/fp32 value). Code 0x8 decodes to -0.0.
    """
    c = _check_codes(codes, 16, "codes")
    return _TABLE.decode(c).astype(dtype)


def e1m2_encode(x, mode=RoundMode.RINT, *, saturate: bool = True) -> np.ndarray:
    """Encode values to fp4 e1m2 codes (uint8, one per element) with rounding ``mode``.

    Counterpart of Ascend C ``Cast`` ``bfloat16_t`` -> ``fp4x2_e1m2_t`` with ``RoundMode::CAST_*`` (also
    ``asc_bfloat162e1m2x2_rn/_rna/_rd/_ru/_rz``). ``x`` may be any real numpy array (it is read exactly,
    not first rounded to bf16). The format has no inf/NaN, so the result always saturates (``saturate`` is
    accepted for symmetry with the other encoders and changes nothing): |x| beyond 1.75 and +-inf give
    +-1.75, NaN gives code 0 (+0). Negative values that round to zero give -0 (code 0x8).
    """
    mode = RoundMode.of(mode)
    if mode is RoundMode.HYBRID:
        raise ArgumentError("mode: CAST_HYBRID exists only for conversions to hifloat8, not to fp4 e1m2")
    v = to_float64(np.asarray(x))
    r = quantize_values(v, E1M2_FORMAT, mode, saturate=True)
    return _TABLE.encode(r)
