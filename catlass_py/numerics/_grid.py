"""Exact rounding of float64 values onto the value grid of a binary floating-point format.

Private helper of :mod:`catlass_py.numerics.rounding`, :mod:`~catlass_py.numerics.e1m2` and
:mod:`~catlass_py.numerics.hif8`. Every format the simulated machine knows (fp32 ... fp4, e8m0, and the
tapered HiFloat8) is described by a :class:`FloatFormat`: for a value of binade ``E`` (``2**E <= |x| <
2**(E+1)``) the grid spacing is ``2**(max(E, emin) - mbits(max(E, emin)))``. All arithmetic below is exact
in float64 (scaling by powers of two, ``floor``, adding one spacing), so the two neighbours of ``x`` on the
grid are found exactly and the rounding mode only chooses between them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from catlass_py.errors import ArgumentError


class RoundMode(enum.Enum):
    """Rounding mode of a conversion: Ascend C ``AscendC::RoundMode`` (values equal the C++ enumerators).

    ========  ===============  ============================================================
    member    Ascend C          meaning
    ========  ===============  ============================================================
    NONE      ``CAST_NONE``     no rounding when exact; behaves as ``CAST_RINT`` when lossy
    RINT      ``CAST_RINT``     nearest, ties to even (IEEE roundTiesToEven)
    FLOOR     ``CAST_FLOOR``    toward -inf
    CEIL      ``CAST_CEIL``     toward +inf
    ROUND     ``CAST_ROUND``    nearest, ties away from zero (``_rna`` intrinsics)
    TRUNC     ``CAST_TRUNC``    toward zero
    ODD       ``CAST_ODD``      von Neumann: truncate, then force the last kept bit to 1 if inexact
    HYBRID    ``CAST_HYBRID``   HiFloat8 only: ties-away for small exponents, input-bit-driven
                                stochastic rounding elsewhere (see :mod:`catlass_py.numerics.hif8`)
    ========  ===============  ============================================================
    """

    NONE = 0
    RINT = 1
    FLOOR = 2
    CEIL = 3
    ROUND = 4
    TRUNC = 5
    ODD = 6
    HYBRID = 7

    @classmethod
    def of(cls, mode) -> "RoundMode":
        """Accept a member, its name (``"rint"``, ``"CAST_RINT"``, any case) or its integer value."""
        if isinstance(mode, cls):
            return mode
        if isinstance(mode, str):
            key = mode.upper()
            if key.startswith("CAST_"):
                key = key[5:]
            if key in cls.__members__:
                return cls[key]
        elif isinstance(mode, (int, np.integer)) and not isinstance(mode, bool):
            try:
                return cls(int(mode))
            except ValueError:
                pass
        raise ArgumentError(f"mode: expected a RoundMode, its name or value, got {mode!r}")


@dataclass(frozen=True)
class FloatFormat:
    """Value grid of one binary floating-point format (IEEE-like, e8m0, or tapered HiFloat8).

    ``emin`` is the exponent of the smallest normal binade (below it the spacing stays that of the
    ``emin`` binade: subnormals, or for HiF8 the gap between 0 and 2**-22). ``mbits`` is the number of
    explicit mantissa bits, or ``mbits_table`` gives it per exponent starting at ``emin`` (exponents past
    the table's end use its last entry). ``max_finite`` is the largest finite magnitude; everything that
    rounds above it overflows. ``has_zero`` is False only for e8m0, ``signed`` False only for e8m0,
    ``signed_zero`` False for formats with one zero code (HiF8).
    """

    name: str
    emin: int
    mbits: int
    max_finite: float
    has_inf: bool
    has_nan: bool
    has_zero: bool = True
    signed: bool = True
    signed_zero: bool = True
    mbits_table: tuple[int, ...] | None = None

    @property
    def min_normal(self) -> float:
        """Smallest normal magnitude, ``2**emin``."""
        return float(np.ldexp(1.0, self.emin))

    @property
    def min_subnormal(self) -> float:
        """Smallest non-zero magnitude (the grid spacing of the ``emin`` binade; e8m0: ``2**-127``)."""
        return float(np.ldexp(1.0, self.emin - self._mbits_scalar(self.emin)))

    def _mbits_scalar(self, e: int) -> int:
        if self.mbits_table is None:
            return self.mbits
        i = min(max(e - self.emin, 0), len(self.mbits_table) - 1)
        return self.mbits_table[i]

    def mbits_of(self, e: np.ndarray) -> np.ndarray:
        """Mantissa bits of the binade(s) ``e`` (``e >= emin``)."""
        if self.mbits_table is None:
            return np.full(np.shape(e), self.mbits, dtype=np.int64)
        table = np.asarray(self.mbits_table, dtype=np.int64)
        return table[np.clip(np.asarray(e, dtype=np.int64) - self.emin, 0, len(table) - 1)]


def _hif8_mbits_table() -> tuple[int, ...]:
    out = []
    for e in range(-22, 17):
        a = abs(e)
        if e <= -16:
            out.append(0)  # denormal binades 2**-22 .. 2**-16: no mantissa
        elif a <= 3:
            out.append(3)
        elif a <= 7:
            out.append(2)
        else:
            out.append(1)
    return tuple(out)


FP32_FORMAT = FloatFormat("float32", -126, 23, float(np.finfo(np.float32).max), True, True)
FP16_FORMAT = FloatFormat("float16", -14, 10, 65504.0, True, True)
BF16_FORMAT = FloatFormat("bfloat16", -126, 7, float(np.ldexp(2.0 - 2.0**-7, 127)), True, True)
E4M3FN_FORMAT = FloatFormat("float8_e4m3fn", -6, 3, 448.0, False, True)
E5M2_FORMAT = FloatFormat("float8_e5m2", -14, 2, 57344.0, True, True)
E8M0_FORMAT = FloatFormat(
    "float8_e8m0fnu", -127, 0, float(np.ldexp(1.0, 127)), False, True, has_zero=False, signed=False, signed_zero=False
)
E2M1_FORMAT = FloatFormat("float4_e2m1fn", 0, 1, 6.0, False, False)
E1M2_FORMAT = FloatFormat("float4_e1m2", 0, 2, 1.75, False, False)
HIF8_FORMAT = FloatFormat(
    "hifloat8", -22, 1, 32768.0, True, True, signed_zero=False, mbits_table=_hif8_mbits_table()
)


def round_to_grid(v: np.ndarray, fmt: FloatFormat, mode: RoundMode) -> tuple[np.ndarray, np.ndarray]:
    """Round finite float64 values ``v`` onto ``fmt``'s grid with an unbounded exponent range above.

    Returns ``(r, overflow)``: ``r`` the rounded values (signed, exact grid points, possibly above
    ``max_finite``), ``overflow`` the mask where ``|r| > max_finite``. Where overflow happens in a mode that
    rounds toward zero for that sign (TRUNC, ODD, FLOOR of positives, CEIL of negatives) ``r`` is already
    replaced by the signed max finite value and ``overflow`` is False there (IEEE 754 7.4). Zeros keep
    their sign. HYBRID is not handled here (HiF8-specific). NaN/inf inputs must be masked by the caller.
    """
    if mode is RoundMode.NONE:
        mode = RoundMode.RINT
    neg = np.signbit(v)
    a = np.abs(v)
    with np.errstate(over="ignore", invalid="ignore"):
        _, exp = np.frexp(a)
        e = exp.astype(np.int64) - 1
        ee = np.maximum(e, fmt.emin)
        ulp = np.ldexp(1.0, (ee - fmt.mbits_of(ee)).astype(np.int32))
        q = np.floor(a / ulp)
        lo = q * ulp
        hi = lo + ulp
        exact = lo == a
        below = (a - lo) < (hi - a)
        tie = (a - lo) == (hi - a)
        lo_even = np.fmod(q, 2.0) == 0.0
    if mode is RoundMode.RINT:
        take_hi = ~below & ~(tie & lo_even)
    elif mode is RoundMode.ROUND:
        take_hi = ~below
    elif mode is RoundMode.TRUNC:
        take_hi = np.zeros_like(exact)
    elif mode is RoundMode.FLOOR:
        take_hi = neg.copy()
    elif mode is RoundMode.CEIL:
        take_hi = ~neg
    elif mode is RoundMode.ODD:
        take_hi = lo_even
    else:  # pragma: no cover - guarded by callers
        raise ValueError(f"round_to_grid: unsupported mode {mode}")
    take_hi &= ~exact
    r = np.where(take_hi, hi, lo)
    overflow = r > fmt.max_finite
    if mode in (RoundMode.TRUNC, RoundMode.ODD, RoundMode.FLOOR, RoundMode.CEIL):
        toward_zero = np.ones_like(overflow)
        if mode is RoundMode.FLOOR:
            toward_zero = ~neg
        elif mode is RoundMode.CEIL:
            toward_zero = neg
        clamp = overflow & toward_zero
        r = np.where(clamp, fmt.max_finite, r)
        overflow &= ~clamp
    r = np.where(neg, -r, r)
    return r, overflow


def finish(
    v: np.ndarray,
    r: np.ndarray,
    overflow: np.ndarray,
    fmt: FloatFormat,
    *,
    saturate: bool,
    keep_nan: bool,
) -> np.ndarray:
    """Apply the special-value and overflow policy of Ascend C ``Cast`` to rounded values ``r``.

    ``v`` holds the original float64 inputs (for NaN/inf detection). Policy (Ascend C Reg ``Cast`` table 4,
    ``SatMode``): non-saturating: overflow and inf -> signed inf, or NaN for formats without inf (e4m3fn,
    e8m0, as ml_dtypes/OCP), or the signed max for formats with neither (fp4); NaN -> NaN, or +0 for fp4.
    Saturating: overflow and inf -> signed max; NaN -> 0 (``keep_nan=True``: NaN stays NaN where the format
    has one, Ascend CTRL[50]=1). e8m0 has no zero and no sign: zero/negative/NaN inputs give NaN and
    positive values below 2**-127 give 2**-127. Formats with one zero (HiF8) return +0 for -0.
    """
    out = r.copy()
    nan_in = np.isnan(v)
    inf_in = np.isinf(v)
    big = overflow | inf_in
    sign = np.where(np.signbit(v), -1.0, 1.0)
    if saturate or not (fmt.has_inf or fmt.has_nan):
        out = np.where(big, sign * fmt.max_finite, out)
    elif fmt.has_inf:
        out = np.where(big, sign * np.inf, out)
    else:
        out = np.where(big, np.nan, out)
    if fmt.has_nan and (not saturate or keep_nan):
        out = np.where(nan_in, np.nan, out)
    else:
        out = np.where(nan_in, 0.0, out)
    if not fmt.signed_zero:
        out = np.where(out == 0.0, 0.0, out)
    if not fmt.has_zero:
        out = np.where(out == 0.0, fmt.min_subnormal, out)
        invalid = nan_in | (v <= 0.0) | (np.signbit(v) & ~nan_in)
        out = np.where(invalid, np.nan, out)
    return out


def quantize_values(
    v: np.ndarray, fmt: FloatFormat, mode: RoundMode, *, saturate: bool, keep_nan: bool = False
) -> np.ndarray:
    """float64 ``v`` -> float64 values exactly representable in ``fmt`` (or +-inf/NaN), by ``mode``."""
    finite = np.isfinite(v)
    safe = np.where(finite, v, 0.0)
    r, overflow = round_to_grid(safe, fmt, mode)
    overflow &= finite
    return finish(v, r, overflow, fmt, saturate=saturate, keep_nan=keep_nan)


class CodeTable:
    """Code <-> value map of a sign-magnitude format that numpy lacks (fp4 e1m2, HiFloat8).

    ``values[c]`` is the float64 value of code ``c`` (NaN for NaN codes). ``sign_bit`` is the code bit
    holding the sign; the codes without it must be the non-negative values (plus, possibly, +inf and a
    NaN). Encoding only accepts values that are exactly on the grid (the output of :func:`finish`).
    """

    def __init__(self, values: np.ndarray, sign_bit: int, nan_code: int | None, inf_code: int | None):
        self.values = np.asarray(values, dtype=np.float64)
        self.values.setflags(write=False)
        self.sign_bit = sign_bit
        self.nan_code = nan_code
        self.inf_code = inf_code
        pos = [c for c in range(sign_bit) if np.isfinite(self.values[c])]
        order = np.argsort(self.values[pos], kind="stable")
        self._mags = self.values[pos][order]
        self._codes = np.asarray(pos, dtype=np.uint8)[order]
        if np.any(np.diff(self._mags) <= 0):  # pragma: no cover - table construction error
            raise AssertionError("CodeTable: non-negative codes are not strictly ordered by value")

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """Codes (any integer array, validated by the caller) -> float64 values."""
        return self.values[np.asarray(codes, dtype=np.intp)]

    def encode(self, r: np.ndarray) -> np.ndarray:
        """Exact grid values (float64; +-inf/NaN allowed if the format has them) -> uint8 codes."""
        r = np.asarray(r, dtype=np.float64)
        mag = np.abs(r)
        finite = np.isfinite(r)
        idx = np.searchsorted(self._mags, np.where(finite, mag, 0.0))
        idx = np.minimum(idx, len(self._mags) - 1)
        codes = self._codes[idx].astype(np.uint8)
        if np.any(finite & (self._mags[idx] != mag)):  # pragma: no cover - internal invariant
            raise AssertionError("CodeTable.encode: value not on the grid")
        codes = np.where(np.signbit(r), codes | np.uint8(self.sign_bit), codes).astype(np.uint8)
        if self.inf_code is not None:
            codes = np.where(np.isposinf(r), np.uint8(self.inf_code), codes)
            codes = np.where(np.isneginf(r), np.uint8(self.inf_code | self.sign_bit), codes)
        if self.nan_code is not None:
            codes = np.where(np.isnan(r), np.uint8(self.nan_code), codes)
        return codes.astype(np.uint8)


_POW2_U64 = np.array([1 << i for i in range(64)], dtype=np.uint64)


def to_float64(x: np.ndarray) -> np.ndarray:
    """Any numeric numpy array -> float64 without a second rounding.

    Floats up to 64 bits and integers below 2**53 convert exactly. 64-bit integers of larger magnitude
    are rounded *to odd* at 53 bits (truncate, set the last bit if anything was dropped): a later
    rounding to at most 51 bits (fp32 and narrower) is then still correctly rounded in every mode.
    """
    x = np.asarray(x)
    if not (x.dtype.kind in "iu" and x.dtype.itemsize == 8):
        with np.errstate(invalid="ignore"):  # signalling NaN payloads quieten silently
            return x.astype(np.float64)  # bool, <=32-bit ints, all floats (incl. ml_dtypes): exact
    neg = x < 0 if x.dtype.kind == "i" else np.zeros(x.shape, dtype=bool)
    u = x.astype(np.uint64)
    mag = np.where(neg, (~u) + np.uint64(1), u)
    bitlen = np.searchsorted(_POW2_U64, mag, side="right")  # number of significant bits
    shift = np.maximum(bitlen - 53, 0).astype(np.uint64)
    t = mag >> shift
    dropped = (mag & ((np.uint64(1) << shift) - np.uint64(1))) != 0
    t = t | dropped.astype(np.uint64)
    out = np.ldexp(t.astype(np.float64), shift.astype(np.int32))
    return np.where(neg, -out, out)
