"""Fixpipe conversion on the way out of L0C: quant modes, quant words and their element rules.

Counterparts: Ascend C ``QuantMode_t`` and the ``deqScalar`` / FB quant-vector words of ``Fixpipe``; CATLASS
``CopyL0CToGmQuantMode`` (``gemm/tile/atlasa2/copy_l0c_to_gm.hpp``). Element rules follow the PTO field
model (pto-mx-semantics 3.4): the scale is M1 = the fp32 pattern of bits [31:13] of the word (sign, exponent,
10 mantissa bits); integer outputs are RNE-rounded and saturated; fp16 outputs are clamped to +-65504;
bf16 outputs are RNE-rounded (NaN -> 0, +-inf -> +-FLT_MAX when saturating). ReLU is applied to the
accumulator value before conversion (an assumption: the A2 documentation does not say where it sits).

The Ascend 950 / PTO modes (``QF322*_PRE`` and their vector forms, ``QS322BF16_PRE``, ``SHIFTS322S16``) and
the word fields beyond M1 (shift [35:32], 9-bit offset [45:37], sign bit 46) are used by
:mod:`catlass_py.tile.pto`; there ReLU acts on the scaled value (``relu_stage="post"``, as the PTO CPU
simulator) and saturation follows CTRL[48].
"""

from __future__ import annotations

import enum

import ml_dtypes
import numpy as np

from catlass_py.errors import ConfigError
from catlass_py.numerics import dtypes as dt
from catlass_py.numerics.rounding import cast


class ScaleGranularity(enum.IntEnum):
    """CATLASS ``Gemm::Tile::ScaleGranularity``."""

    UNDEFINED = -1
    NO_QUANT = 0
    PER_TENSOR = 1
    PER_CHANNEL = 2
    PER_GROUP = 3


class QuantMode(enum.Enum):
    """Ascend C ``QuantMode_t`` (symbolic; the numeric values differ between headers)."""

    NoQuant = "NoQuant"
    F322F16 = "F322F16"
    F322BF16 = "F322BF16"
    REQ8 = "REQ8"
    VREQ8 = "VREQ8"
    DEQF16 = "DEQF16"
    VDEQF16 = "VDEQF16"
    QF322B8_PRE = "QF322B8_PRE"
    VQF322B8_PRE = "VQF322B8_PRE"
    # int32 -> int16 by an arithmetic right shift (PTO CPU simulator; A2/A3 vector form VSHIFTS322S16)
    SHIFTS322S16 = "SHIFTS322S16"
    VSHIFTS322S16 = "VSHIFTS322S16"
    # PTO / Ascend 950 pre-quant modes: fp32 (or int32) accumulator times M1, then converted
    QF322F16_PRE = "QF322F16_PRE"
    VQF322F16_PRE = "VQF322F16_PRE"
    QF322BF16_PRE = "QF322BF16_PRE"
    VQF322BF16_PRE = "VQF322BF16_PRE"
    QS322BF16_PRE = "QS322BF16_PRE"
    VQS322BF16_PRE = "VQS322BF16_PRE"
    QF322F32_PRE = "QF322F32_PRE"
    VQF322F32_PRE = "VQF322F32_PRE"
    QF322FP8_PRE = "QF322FP8_PRE"
    VQF322FP8_PRE = "VQF322FP8_PRE"
    QF322HIF8_PRE = "QF322HIF8_PRE"
    VQF322HIF8_PRE = "VQF322HIF8_PRE"

    @property
    def is_vector(self) -> bool:
        """True for the per-channel forms, which read one quant word per output column from the FB."""
        return self in VECTOR_MODES

    @property
    def is_scaled(self) -> bool:
        """True for the modes that read quant words (scalar register or FB vector)."""
        return self in SCALED_MODES


_NO, _PT, _PC = ScaleGranularity.NO_QUANT, ScaleGranularity.PER_TENSOR, ScaleGranularity.PER_CHANNEL

_A2_TABLE = {
    ("float32", "float32", _NO): QuantMode.NoQuant,
    ("float32", "float16", _NO): QuantMode.F322F16,
    ("float32", "float16", _PT): QuantMode.F322F16,
    ("float32", "bfloat16", _NO): QuantMode.F322BF16,
    ("float32", "bfloat16", _PT): QuantMode.F322BF16,
    ("float32", "uint8", _PT): QuantMode.QF322B8_PRE,
    ("float32", "uint8", _PC): QuantMode.VQF322B8_PRE,
    ("float32", "int8", _PT): QuantMode.QF322B8_PRE,
    ("float32", "int8", _PC): QuantMode.VQF322B8_PRE,
    ("int32", "int32", _NO): QuantMode.NoQuant,
    ("int32", "float16", _PT): QuantMode.DEQF16,
    ("int32", "float16", _PC): QuantMode.VDEQF16,
    ("int32", "uint8", _PT): QuantMode.REQ8,
    ("int32", "uint8", _PC): QuantMode.VREQ8,
    ("int32", "int8", _PT): QuantMode.REQ8,
    ("int32", "int8", _PC): QuantMode.VREQ8,
}

VECTOR_MODES = {QuantMode.VREQ8, QuantMode.VDEQF16, QuantMode.VQF322B8_PRE, QuantMode.VSHIFTS322S16,
                QuantMode.VQF322F16_PRE, QuantMode.VQF322BF16_PRE, QuantMode.VQS322BF16_PRE,
                QuantMode.VQF322F32_PRE, QuantMode.VQF322FP8_PRE, QuantMode.VQF322HIF8_PRE}
SCALED_MODES = VECTOR_MODES | {QuantMode.REQ8, QuantMode.DEQF16, QuantMode.QF322B8_PRE, QuantMode.SHIFTS322S16,
                               QuantMode.QF322F16_PRE, QuantMode.QF322BF16_PRE, QuantMode.QS322BF16_PRE,
                               QuantMode.QF322F32_PRE, QuantMode.QF322FP8_PRE, QuantMode.QF322HIF8_PRE}
_B8_MODES = {QuantMode.REQ8, QuantMode.VREQ8, QuantMode.QF322B8_PRE, QuantMode.VQF322B8_PRE}
_F16_MODES = {QuantMode.DEQF16, QuantMode.VDEQF16, QuantMode.QF322F16_PRE, QuantMode.VQF322F16_PRE}
_BF16_MODES = {QuantMode.QF322BF16_PRE, QuantMode.VQF322BF16_PRE, QuantMode.QS322BF16_PRE, QuantMode.VQS322BF16_PRE}


def quant_mode_atlas_a2(element_src, element_dst, granularity: ScaleGranularity) -> QuantMode:
    """CATLASS ``CopyL0CToGmQuantMode<AtlasA2, Src, Dst, Granularity>::VALUE``; :class:`ConfigError` for a
    combination CATLASS does not specialise."""
    src, dst = dt.get_dtype(element_src).name, dt.get_dtype(element_dst).name
    mode = _A2_TABLE.get((src, dst, ScaleGranularity(granularity)))
    if mode is None:
        supported = ", ".join(f"{s}->{d} {g.name}" for (s, d, g) in _A2_TABLE)
        raise ConfigError(
            f"CopyL0CToGm: no Atlas A2 fixpipe mode for {src} -> {dst} with {ScaleGranularity(granularity).name} "
            f"(supported: {supported})"
        )
    return mode


def scalar_quant_word(scale: float) -> np.uint64:
    """CATLASS's per-tensor ``deqScalar``: the fp32 bits read as int32, widened to uint64 (sign-extends)."""
    bits = np.array([scale], np.float32).view(np.int32)[0]
    return np.uint64(int(bits) & 0xFFFF_FFFF_FFFF_FFFF)


def m1_scale(words) -> np.ndarray:
    """The M1 scale of quant words: fp32 pattern of bits [31:13] (10 mantissa bits kept), as float32."""
    w = np.asarray(words, dtype=np.uint64)
    return ((w & np.uint64(0xFFFF_E000)).astype(np.uint32)).view(np.float32)


def fp32_scale(words) -> np.ndarray:
    """The full fp32 pattern of bits [31:0] of quant words (the PTO CPU simulator's scalar-mode reading)."""
    w = np.asarray(words, dtype=np.uint64)
    return ((w & np.uint64(0xFFFF_FFFF)).astype(np.uint32)).view(np.float32)


def quant_word_shift(words) -> np.ndarray:
    """SHIFTS322S16 right-shift amount: bits [35:32] plus one (PTO CPU simulator)."""
    w = np.asarray(words, dtype=np.uint64)
    return ((w >> np.uint64(32)) & np.uint64(0xF)).astype(np.int64) + 1


def quant_word_offset(words) -> np.ndarray:
    """The 9-bit offset field [45:37] added to B8 results (read unsigned, as the PTO CPU simulator)."""
    w = np.asarray(words, dtype=np.uint64)
    return ((w >> np.uint64(37)) & np.uint64(0x1FF)).astype(np.int64)


def quant_word_signed(words) -> np.ndarray:
    """Bit 46: 1 -> B8 results saturate to int8 [-128, 127], 0 -> to uint8 [0, 255]."""
    w = np.asarray(words, dtype=np.uint64)
    return ((w >> np.uint64(46)) & np.uint64(1)).astype(bool)


_FP16_MAX = np.float32(65504.0)
_FLT_MAX = np.float32(np.finfo(np.float32).max)


def fixpipe_convert(x: np.ndarray, mode: QuantMode, element_dst, *, scale=None, relu: bool = False,
                    offset=None, signed=None, shift=None, relu_stage: str = "pre", saturate: bool = True) -> np.ndarray:
    """Convert accumulator values ``x`` (int32 or float32, shape (m, n)) with ``mode``.

    ``scale`` is the M1 scale: a float32 scalar (scalar modes) or an (n,) float32 vector, one per output
    column (vector modes). The PTO keywords: ``offset``/``signed`` (word fields [45:37] and 46, scalar or per
    column) switch the B8 modes to the field model ``clamp(clamp(rint(y), -256, 255) + offset, int8 or uint8
    range)``; ``shift`` is the SHIFTS322S16 amount; ``relu_stage="post"`` applies ReLU to ``x * M1`` instead
    of ``x``; ``saturate=False`` (CTRL[48] says non-saturating) lets float results overflow to inf and keeps
    NaN.
    """
    dst = dt.get_dtype(element_dst)
    if relu and relu_stage == "pre":
        x = np.maximum(x, x.dtype.type(0))
    post = relu and relu_stage == "post"
    if mode is QuantMode.NoQuant:
        y = np.maximum(x, x.dtype.type(0)) if post else x
        return y.astype(dst.numpy, copy=True)
    if mode in (QuantMode.SHIFTS322S16, QuantMode.VSHIFTS322S16):
        if shift is None:
            raise ConfigError(f"fixpipe mode {mode.value} needs a shift")
        y = np.right_shift(x.astype(np.int64), np.asarray(shift, np.int64))
        if post:
            y = np.maximum(y, 0)
        return np.clip(y, -(1 << 15), (1 << 15) - 1).astype(np.int16)
    if mode in (QuantMode.F322F16, QuantMode.F322BF16):
        y = x.astype(np.float32)
    else:
        if scale is None:
            raise ConfigError(f"fixpipe mode {mode.value} needs a scale")
        with np.errstate(over="ignore", invalid="ignore"):
            y = x.astype(np.float32) * np.asarray(scale, np.float32)
    if post:
        y = np.maximum(y, np.float32(0))  # NaN stays NaN (np.maximum propagates it)
    with np.errstate(over="ignore", invalid="ignore"):
        if mode is QuantMode.F322F16 or mode in _F16_MODES:
            if not saturate:
                return y.astype(np.float16)
            out = np.clip(y, -_FP16_MAX, _FP16_MAX).astype(np.float16)
            return out if mode in (QuantMode.F322F16, QuantMode.DEQF16, QuantMode.VDEQF16) else np.where(
                np.isnan(y), np.float16(0), out)
        if mode is QuantMode.F322BF16 or mode in _BF16_MODES:
            if not saturate:
                return y.astype(ml_dtypes.bfloat16)
            y = np.nan_to_num(y, nan=0.0, posinf=_FLT_MAX, neginf=-_FLT_MAX)
            return y.astype(ml_dtypes.bfloat16)
        if mode in (QuantMode.QF322F32_PRE, QuantMode.VQF322F32_PRE):
            if not saturate:
                return y
            return np.nan_to_num(y, nan=0.0, posinf=_FLT_MAX, neginf=-_FLT_MAX).astype(np.float32)
        if mode in (QuantMode.QF322FP8_PRE, QuantMode.VQF322FP8_PRE, QuantMode.QF322HIF8_PRE, QuantMode.VQF322HIF8_PRE):
            return cast(y, dst, saturate=saturate)  # fp8: RNE; hifloat8: CAST_ROUND (ties away)
    if mode not in _B8_MODES:  # pragma: no cover - every member is handled above
        raise ConfigError(f"fixpipe mode {mode.value} is not implemented")
    y = np.nan_to_num(y, nan=0.0)
    if offset is None and signed is None:
        info = np.iinfo(dst.numpy)
        return np.clip(np.rint(y), info.min, info.max).astype(dst.numpy)
    t = np.clip(np.rint(y), -256, 255).astype(np.int64)
    if offset is not None:
        t = t + np.asarray(offset, np.int64)
    sgn = np.asarray(True if signed is None else signed, bool)
    t = np.where(sgn, np.clip(t, -128, 127), np.clip(t, 0, 255))
    return t.astype(dst.numpy)  # the 8 result bits as the destination type (numpy keeps the low bits)
