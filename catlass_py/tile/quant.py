"""Fixpipe conversion on the way out of L0C: quant modes, quant words and their element rules.

Counterparts: Ascend C ``QuantMode_t`` and the ``deqScalar`` / FB quant-vector words of ``Fixpipe``; CATLASS
``CopyL0CToGmQuantMode`` (``gemm/tile/atlasa2/copy_l0c_to_gm.hpp``). Element rules follow the PTO field
model (pto-mx-semantics 3.4): the scale is M1 = the fp32 pattern of bits [31:13] of the word (sign, exponent,
10 mantissa bits); integer outputs are RNE-rounded and saturated; fp16 outputs are clamped to +-65504;
bf16 outputs are RNE-rounded (NaN -> 0, +-inf -> +-FLT_MAX when saturating). ReLU is applied to the
accumulator value before conversion (an assumption: the A2 documentation does not say where it sits).
"""

from __future__ import annotations

import enum

import ml_dtypes
import numpy as np

from catlass_py.errors import ConfigError
from catlass_py.numerics import dtypes as dt


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

SCALED_MODES = {QuantMode.REQ8, QuantMode.VREQ8, QuantMode.DEQF16, QuantMode.VDEQF16,
                QuantMode.QF322B8_PRE, QuantMode.VQF322B8_PRE}
VECTOR_MODES = {QuantMode.VREQ8, QuantMode.VDEQF16, QuantMode.VQF322B8_PRE}


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


_FP16_MAX = np.float32(65504.0)
_FLT_MAX = np.float32(np.finfo(np.float32).max)


def fixpipe_convert(x: np.ndarray, mode: QuantMode, element_dst, *, scale=None, relu: bool = False) -> np.ndarray:
    """Convert accumulator values ``x`` (int32 or float32, shape (m, n)) with ``mode``.

    ``scale`` is the M1 scale: a float32 scalar (scalar modes) or an (n,) float32 vector, one per output
    column (vector modes).
    """
    dst = dt.get_dtype(element_dst)
    if relu:
        x = np.maximum(x, x.dtype.type(0))
    if mode is QuantMode.NoQuant:
        return x.astype(dst.numpy, copy=True)
    if mode is QuantMode.F322F16:
        return np.clip(x, -_FP16_MAX, _FP16_MAX).astype(np.float16)
    if mode is QuantMode.F322BF16:
        y = np.nan_to_num(x.astype(np.float32), nan=0.0, posinf=_FLT_MAX, neginf=-_FLT_MAX)
        return y.astype(ml_dtypes.bfloat16)
    if scale is None:
        raise ConfigError(f"fixpipe mode {mode.value} needs a scale")
    y = x.astype(np.float32) * np.asarray(scale, np.float32)
    if mode in (QuantMode.DEQF16, QuantMode.VDEQF16):
        return np.clip(y, -_FP16_MAX, _FP16_MAX).astype(np.float16)
    info = np.iinfo(dst.numpy)
    y = np.nan_to_num(y, nan=0.0)
    return np.clip(np.rint(y), info.min, info.max).astype(dst.numpy)
