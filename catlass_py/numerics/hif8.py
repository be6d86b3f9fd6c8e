"""HiFloat8 (Ascend ``hifloat8_t``): tapered 8-bit float, encode/decode between uint8 codes and floats.

A code is ``S | payload(7)``. The payload starts with a prefix-coded *dot* field that fixes how many
exponent bits follow; the exponent is sign-magnitude with an implicit leading 1 in its magnitude
(``|E| = 2**(w-1) + low bits`` for a ``w``-bit field whose first bit is the exponent sign); the mantissa
has an implicit 1 (pto-mx-semantics 6.1; Ascend C ``Hif8ToFloatCommon`` in asc-devkit
``impl/basic_api/kernel_type_conversion_utils.h``):

======  ==========  ========  ===========  ======================================
dot     exp bits    mant      exponents    value
======  ==========  ========  ===========  ======================================
11      4           1         +-8..+-15    (-1)**S * 2**E * (1 + m/2)
10      3           2         +-4..+-7     (-1)**S * 2**E * (1 + m/4)
01      2           3         +-2, +-3     (-1)**S * 2**E * (1 + m/8)
001     1           3         +-1          (-1)**S * 2**E * (1 + m/8)
0001    0           3         0            (-1)**S * (1 + m/8)
0000    --          3         --           m != 0: (-1)**S * 2**(m-23); m == 0: S=0 zero, S=1 NaN
======  ==========  ========  ===========  ======================================

Specials: 0x00 is the only zero, 0x80 is NaN, 0x6F / 0xEF (E = +15, m = 1) are +-inf. Max finite is 2**15 =
32768 (0x6E), min normal 2**-15, min denormal 2**-22.

Rounding (Ascend C Reg ``Cast`` "float转hifloat8_t转换规则" / "half转hifloat8_t转换规则"):

* ``RoundMode.ROUND`` (``CAST_ROUND``, the default, ``__float2hif8_rna``): nearest, ties away from zero, on
  the true value grid. In particular ``[2**-23, 2**-22)`` rounds up to the min denormal and everything
  below 2**-23 to zero; ``|x| >= 1.25 * 2**15`` overflows.
* ``RoundMode.HYBRID`` (``CAST_HYBRID``, ``_rh``): for |E| <= 3 the same ties-away rounding; for 4 <= |E|
  <= 15 and the denormal binades it rounds up iff the 14 fraction bits that follow the kept mantissa
  (``frac``) are ``>=`` the 14 lowest bits of the fp32 input (``thr``); for ``E == -23`` it returns the min
  denormal iff ``{1, fraction[22:10]} >= thr``. For fp16 inputs ``frac`` is 2 bits and ``thr = {bit0, 1}``
  (fp16 subnormal inputs, which the pseudocode does not cover, are normalised first). This is a deterministic, input-driven form of stochastic rounding. Note
  (documented behaviour, reproduced as is): an exactly representable fp32 value with 4 <= |E| <= 15 and
  zero low bits has ``frac == thr == 0`` and is rounded *up* by one step.
* Other modes (RINT, FLOOR, CEIL, TRUNC, ODD) have no hardware instruction; they are provided on the same
  value grid (ties-to-even picks the code with an even last bit) for completeness.

Special values (Ascend SIMT ``__float22hif82_*`` tables): non-saturating: NaN -> 0x80, +-inf and
overflow -> +-inf; saturating: NaN -> 0x00, +-inf and overflow -> +-32768. +-0 -> 0x00.

Where this disagrees with the Huawei golden script ``hif8.py`` (asc-devkit ``examples/.../matmul_fp8/
scripts/hif8.py``): that script sends ``[2**-23, 1.5 * 2**-23)`` to zero under ``round``; the hardware
pseudocode above (and nearest rounding) gives the min denormal. We follow the pseudocode.
"""

from __future__ import annotations

import numpy as np

from catlass_py.errors import ArgumentError
from catlass_py.numerics._grid import HIF8_FORMAT, CodeTable, RoundMode, finish, quantize_values, to_float64

HIF8_NAN = 0x80
HIF8_POS_INF = 0x6F
HIF8_NEG_INF = 0xEF
HIF8_MAX_CODE = 0x6E
HIF8_MAX = 32768.0
HIF8_MIN_NORMAL = 2.0**-15
HIF8_MIN_SUBNORMAL = 2.0**-22


def _decode_one(code: int) -> float:
    s = -1.0 if code & 0x80 else 1.0
    p = code & 0x7F
    if p >> 5 == 0b11:
        w, mb = 4, 1
    elif p >> 5 == 0b10:
        w, mb = 3, 2
    elif p >> 5 == 0b01:
        w, mb = 2, 3
    elif p >> 4 == 0b001:
        w, mb = 1, 3
    elif p >> 3 == 0b0001:
        w, mb = 0, 3
    else:  # dot 0000: denormal, zero or NaN
        m = p & 7
        if m == 0:
            return float("nan") if s < 0 else 0.0
        return s * 2.0 ** (m - 23)
    m = p & ((1 << mb) - 1)
    if w == 0:
        e = 0
    else:
        field = (p >> mb) & ((1 << w) - 1)
        mag = (1 << (w - 1)) + (field & ((1 << (w - 1)) - 1))
        e = -mag if field >> (w - 1) else mag
    if e == 15 and m == 1:
        return s * float("inf")
    return s * 2.0**e * (1.0 + m / 2.0**mb)


_TABLE = CodeTable(
    np.array([_decode_one(c) for c in range(256)], dtype=np.float64),
    sign_bit=0x80,
    nan_code=HIF8_NAN,
    inf_code=HIF8_POS_INF,
)


def hif8_values() -> np.ndarray:
    """float64 value of every code 0..255 (read-only; 0x80 is NaN, 0x6F/0xEF are +-inf)."""
    return _TABLE.values


def hif8_decode(codes, dtype=np.float32) -> np.ndarray:
    """Decode HiFloat8 codes (integers 0..255) to ``dtype`` (float32 by default).

    Counterpart of Ascend C ``Cast`` ``hifloat8_t`` -> ``float`` / ``half`` (``Hif8ToFp32``; exact, every
    HiF8 value is an fp16/fp32 value). Non-saturating: 0x80 -> NaN, 0x6F/0xEF -> +-inf.
    """
    c = np.asarray(codes)
    if c.dtype.kind not in "iu":
        raise ArgumentError(f"codes: expected an integer array of HiFloat8 codes, got dtype {c.dtype}")
    if c.size and (c.min() < 0 or c.max() > 255):
        raise ArgumentError(f"codes: HiFloat8 codes must lie in [0, 255], got range [{c.min()}, {c.max()}]")
    return _TABLE.decode(c).astype(dtype)


def _hybrid(x: np.ndarray, *, saturate: bool, keep_nan: bool) -> np.ndarray:
    """CAST_HYBRID on the bits of fp32 (or fp16) inputs, per the Ascend C Reg ``Cast`` pseudocode."""
    if x.dtype == np.float16:
        b = x.view(np.uint16).astype(np.int64)
        width, rbits = 10, 2
        ef = (b >> 10) & 0x1F
        man = b & 0x3FF
        thr = ((b & 1) << 1) | 1
        special = ef == 31
        # normalise fp16 subnormals (exponent field 0) so that E and the fraction bits are those of the value
        length = np.where(man > 0, np.floor(np.log2(np.maximum(man, 1))).astype(np.int64) + 1, 0)
        sub = (ef == 0) & (man > 0)
        e = np.where(sub, length - 25, ef - 15)
        f = np.where(sub, (man << np.maximum(11 - length, 0)) & 0x3FF, man)
        is_zero = (ef == 0) & (man == 0)
    else:
        x32 = x.astype(np.float32)  # float64/bf16/ints reach the fp32 rule through an RNE fp32 conversion
        b = x32.view(np.uint32).astype(np.int64)
        width, rbits = 23, 14
        ef = (b >> 23) & 0xFF
        f = b & 0x7FFFFF
        thr = b & 0x3FFF
        special = ef == 255
        e = ef - 127
        is_zero = ef == 0  # zero and fp32 subnormals (E < -126) both flush to HiF8 zero
        x = x32
    v = x.astype(np.float64)
    rmask = (1 << rbits) - 1
    e_safe = np.clip(e, HIF8_FORMAT.emin, 15)
    mb = HIF8_FORMAT.mbits_of(e_safe)
    kept = f >> (width - mb)
    ta = (f >> (width - 1 - mb)) & 1
    frac = (f >> (width - mb - rbits)) & rmask
    up = np.where(np.abs(e_safe) <= 3, ta, (frac >= thr).astype(np.int64))
    mag = np.ldexp((np.int64(1) << mb) + kept + up, (e_safe - mb).astype(np.int32)).astype(np.float64)
    tiny_up = ((1 << (rbits - 1)) | (f >> (width - rbits + 1))) >= thr
    mag = np.where(e == -23, np.where(tiny_up, HIF8_MIN_SUBNORMAL, 0.0), mag)
    mag = np.where((e < -23) | is_zero, 0.0, mag)
    overflow = ~special & ((e > 15) | (mag > HIF8_MAX))
    r = np.where(np.signbit(v), -mag, mag)
    r = np.where(special, 0.0, r)
    return finish(v, r, overflow, HIF8_FORMAT, saturate=saturate, keep_nan=keep_nan)


def hif8_quantize_values(
    x, mode=RoundMode.ROUND, *, saturate: bool = False, keep_nan: bool = False
) -> np.ndarray:
    """Round ``x`` onto the HiFloat8 grid and return float64 values (+-inf/NaN per the policy)."""
    mode = RoundMode.of(mode)
    x = np.asarray(x)
    if mode is RoundMode.HYBRID:
        return _hybrid(x, saturate=saturate, keep_nan=keep_nan)
    return quantize_values(to_float64(x), HIF8_FORMAT, mode, saturate=saturate, keep_nan=keep_nan)


def hif8_encode(x, mode=RoundMode.ROUND, *, saturate: bool = False, keep_nan: bool = False) -> np.ndarray:
    """Encode values to HiFloat8 codes (uint8) with rounding ``mode`` (default ``CAST_ROUND``, ties away).

    Counterpart of Ascend C ``Cast`` ``float``/``half`` -> ``hifloat8_t`` with ``RoundMode::CAST_ROUND`` or
    ``CAST_HYBRID`` and ``SatMode::NO_SAT``/``SAT`` (``__float22hif82_rna[_sat]``, ``_rh[_sat]``). ``x`` may
    be any real numpy array; for HYBRID the fp16 rule is used for float16 arrays and the fp32 rule for
    everything else (after an RNE conversion to fp32). See the module docstring for rounding and specials.
    ``keep_nan=True`` keeps NaN as 0x80 in saturating mode.
    """
    return _TABLE.encode(hif8_quantize_values(x, mode, saturate=saturate, keep_nan=keep_nan))
