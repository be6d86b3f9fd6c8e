"""The fixpipe path of PTO: which quant mode an Acc transfer uses and how it converts each element.

Counterparts: PTO ``GetCastPreQuantMode`` / ``GetScalarPreQuantMode`` / ``GetVectorPreQuantMode``
(``include/pto/npu/a5/common.hpp``, ``include/pto/npu/a2a3/common.hpp``, ``include/pto/cpu/common.hpp``),
``FixpipeParams``/``LayoutMode_t`` (``include/pto/common/fixpipe.hpp``) and the CPU simulator's
``quantize_element``. The element rules are those of :func:`catlass_py.tile.quant.fixpipe_convert` with the
PTO word fields (pto-mx-semantics 3.4):

* scale M1 = bits [31:13] of the word (default for scalar and vector modes, A5 goldens); **[CONFLICT]** the PTO
  CPU simulator reads the full fp32 pattern in scalar mode: ``scalar_scale="fp32"``;
* B8 modes: ``clamp(clamp(rint(x * M1), -256, 255) + offset[45:37], int8 or uint8 range by bit 46)``;
* SHIFTS322S16: arithmetic right shift by field [35:32] + 1, clamp to int16;
* ReLU (``ReluPreMode::NormalRelu``) on the scaled value; float saturation from CTRL[48]
  (:func:`~catlass_py.tile.pto.quant_reg.saturating`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from catlass_py.errors import ConfigError
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.tile.pto.quant_reg import (
    CTRL,
    FPC,
    QUANT_PRE,
    checked_quant_vector_address,
    get_quant_scalar,
    quant_vector_address,
    quant_vector_words,
    saturating,
)
from catlass_py.tile.quant import (
    QuantMode,
    fixpipe_convert,
    fp32_scale,
    m1_scale,
    quant_word_offset,
    quant_word_shift,
    quant_word_signed,
)

Q = QuantMode


class ReluPreMode(enum.IntEnum):
    """PTO ``ReluPreMode``."""

    NoRelu = 0
    NormalRelu = 1


class LayoutMode(enum.IntEnum):
    """PTO ``LayoutMode_t`` of ``FixpipeParams``: how the NZ accumulator is laid out on the way out."""

    NZ2NZ = 0
    NZ2ND = 1
    NZ2DN = 2


# (src, dst) -> mode, per arch family and kind (pto-mx-semantics 3.1)
_A5_CAST = {("float32", "float16"): Q.F322F16, ("float32", "bfloat16"): Q.F322BF16,
            ("float32", "float32"): Q.NoQuant, ("int32", "int32"): Q.NoQuant}
_A5_SCALAR = {
    ("float32", "int8"): Q.QF322B8_PRE, ("float32", "uint8"): Q.QF322B8_PRE,
    ("float32", "hifloat8"): Q.QF322HIF8_PRE, ("float32", "float16"): Q.QF322F16_PRE,
    ("float32", "bfloat16"): Q.QF322BF16_PRE, ("float32", "float8_e4m3fn"): Q.QF322FP8_PRE,
    ("float32", "float32"): Q.QF322F32_PRE,
    ("int32", "int8"): Q.REQ8, ("int32", "uint8"): Q.REQ8, ("int32", "float16"): Q.DEQF16,
    ("int32", "bfloat16"): Q.QS322BF16_PRE,
}
_A5_VECTOR = {
    ("float32", "int8"): Q.VQF322B8_PRE, ("float32", "uint8"): Q.VQF322B8_PRE,
    ("float32", "hifloat8"): Q.VQF322HIF8_PRE, ("float32", "float16"): Q.VQF322F16_PRE,
    ("float32", "bfloat16"): Q.VQF322BF16_PRE, ("float32", "float8_e4m3fn"): Q.VQF322FP8_PRE,
    ("float32", "float32"): Q.VQF322F32_PRE,
    ("int32", "int8"): Q.VREQ8, ("int32", "uint8"): Q.VREQ8, ("int32", "float16"): Q.VDEQF16,
    ("int32", "bfloat16"): Q.VQS322BF16_PRE,
}
# Atlas A2/A3 TMOV Acc->Mat (CheckTMovAccToMat): cast float->{half, bf16}; quant float->int8,
# int32->{int8, uint8, half, int16}
_A2_CAST = {("float32", "float16"): Q.F322F16, ("float32", "bfloat16"): Q.F322BF16}
_A2_SCALAR = {("float32", "int8"): Q.QF322B8_PRE, ("int32", "int8"): Q.REQ8, ("int32", "uint8"): Q.REQ8,
              ("int32", "float16"): Q.DEQF16, ("int32", "int16"): Q.SHIFTS322S16}
_A2_VECTOR = {("float32", "int8"): Q.VQF322B8_PRE, ("int32", "int8"): Q.VREQ8, ("int32", "uint8"): Q.VREQ8,
              ("int32", "float16"): Q.VDEQF16, ("int32", "int16"): Q.VSHIFTS322S16}
_TABLES = {
    (True, "cast"): _A5_CAST, (True, "scalar"): _A5_SCALAR, (True, "vector"): _A5_VECTOR,
    (False, "cast"): _A2_CAST, (False, "scalar"): _A2_SCALAR, (False, "vector"): _A2_VECTOR,
}


def pre_quant_mode(src_dtype, dst_dtype, kind: str, arch, *, target: str = "gm", options=None) -> QuantMode:
    """PTO ``Get{Cast,Scalar,Vector}PreQuantMode<Src, Dst>`` for ``kind`` in "cast" / "scalar" / "vector".

    ``target`` is "gm" for an Acc -> GM TSTORE (``GetScalarPreQuantModeGm`` of ``include/pto/npu/a5/TStore.hpp``)
    or "onchip" for Acc -> UB / L1 moves (TMOV, TEXTRACT, TINSERT; ``GetScalarPreQuantMode`` of
    ``include/pto/npu/a5/common.hpp``). The two Ascend 950 scalar tables differ in two entries:

    * fp32 -> fp8 e4m3: TStore.hpp gives QF322FP8_PRE; common.hpp returns the *vector* mode VQF322FP8_PRE from
      the scalar form. ``tstore_acc2gm`` case 52 (scalar quant of an fp32 accumulator to e4m3 in GM, a passing
      ST case) runs QF322FP8_PRE with the scalar word; no ST case runs the on-chip form.
    * fp32 -> fp32: TStore.hpp gives QF322F32_PRE; common.hpp has no entry (NoQuant: the scalar would be loaded
      and not applied). No ST case runs the on-chip form either.

    The scalar table of TStore.hpp is used for both targets by default; ``options.onchip_scalar_table ==
    "common"`` follows common.hpp literally for the on-chip moves (VQF322FP8_PRE then reads the FPC quant vector,
    not QUANT_PRE).

    Raises :class:`ConfigError` for a (src, dst) pair the arch's Acc checks reject.
    """
    is950 = arch.arch_code >= 3510
    table = _TABLES[(is950, kind)]
    src, dst = get_dtype(src_dtype).name, get_dtype(dst_dtype).name
    if target not in ("gm", "onchip"):
        raise ConfigError(f"pre_quant_mode: target must be 'gm' or 'onchip', got {target!r}")
    mode = table.get((src, dst))
    if mode is None:
        allowed = ", ".join(f"{s}->{d}" for s, d in table)
        form = {"cast": "plain/relu (cast) form", "scalar": "scalar-quant form", "vector": "vector-quant form"}[kind]
        raise ConfigError(f"TMOV Acc: {src} -> {dst} is not supported by the {form} on {arch.name} (allowed: {allowed})")
    if is950 and kind == "scalar" and target == "onchip" and options is not None \
            and options.onchip_scalar_table == "common":
        return {Q.QF322F32_PRE: Q.NoQuant, Q.QF322FP8_PRE: Q.VQF322FP8_PRE}.get(mode, mode)
    return mode


@dataclass(frozen=True)
class FixpipeOptions:
    """Switches for the [CONFLICT]s of the fixpipe model (defaults follow the A5 goldens / Ascend C).

    ``scalar_scale``: "m1" (19-bit M1, default) or "fp32" (CPU simulator, scalar modes only).
    ``ctrl48_polarity``: "ascendc" (CTRL[48] = 0 saturates, default) or "cpu_sim" (1 saturates).
    ``onchip_scalar_table``: "gm" (default: TStore.hpp's scalar modes for every Acc move, as tstore_acc2gm case 52
    runs them) or "common" (common.hpp's table for the on-chip moves; see :func:`pre_quant_mode`).
    """

    scalar_scale: str = "m1"
    ctrl48_polarity: str = "ascendc"
    onchip_scalar_table: str = "gm"

    def __post_init__(self):
        if self.scalar_scale not in ("m1", "fp32"):
            raise ConfigError(f"FixpipeOptions: scalar_scale must be 'm1' or 'fp32', got {self.scalar_scale!r}")
        if self.ctrl48_polarity not in ("ascendc", "cpu_sim"):
            raise ConfigError(f"FixpipeOptions: ctrl48_polarity must be 'ascendc' or 'cpu_sim', got {self.ctrl48_polarity!r}")
        if self.onchip_scalar_table not in ("gm", "common"):
            raise ConfigError(f"FixpipeOptions: onchip_scalar_table must be 'gm' or 'common', got {self.onchip_scalar_table!r}")


DEFAULT_OPTIONS = FixpipeOptions()


def fixpipe_apply(ctx, acc: np.ndarray, mode: QuantMode, dst_dtype, *, relu: ReluPreMode = ReluPreMode.NoRelu,
                  col0: int = 0, options: FixpipeOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """Convert the (m, n) accumulator values ``acc`` with ``mode`` as the fixpipe of core ``ctx`` does: scalar
    modes read QUANT_PRE, vector modes read one FB word per column (``col0`` = first column's index in the
    quant vector), float saturation follows CTRL[48]."""
    dst = get_dtype(dst_dtype)
    kwargs = {}
    if mode.is_scaled:
        if mode.is_vector:
            words = quant_vector_words(ctx, col0 + acc.shape[1])[col0:][None, :]
            scale = m1_scale(words)
        else:
            words = np.uint64(get_quant_scalar(ctx))
            scale = fp32_scale(words) if options.scalar_scale == "fp32" else m1_scale(words)
        kwargs["scale"] = scale
        if mode in (Q.REQ8, Q.VREQ8, Q.QF322B8_PRE, Q.VQF322B8_PRE):
            kwargs["offset"] = quant_word_offset(words)
            kwargs["signed"] = quant_word_signed(words)
        if mode in (Q.SHIFTS322S16, Q.VSHIFTS322S16):
            kwargs["shift"] = quant_word_shift(words)
    sat = saturating(ctx, options.ctrl48_polarity)
    return fixpipe_convert(acc, mode, dst, relu=ReluPreMode(relu) is ReluPreMode.NormalRelu, relu_stage="post",
                           saturate=sat, **kwargs)


def fixpipe_reads(ctx, mode: QuantMode, n: int, col0: int = 0) -> tuple:
    """Access records of what a fixpipe transfer of ``n`` columns reads besides the accumulator: CTRL (saturation),
    QUANT_PRE for scalar modes, FPC and the ``n`` quant words it points at (from column ``col0``) for vector
    modes."""
    reads = [ctx.register_access(CTRL)]
    if mode.is_scaled:
        if mode.is_vector:
            reads.append(ctx.register_access(FPC))
            fb = ctx.resource.fb_buf.tensor("uint8", 0)
            start = quant_vector_address(ctx) + 8 * col0
            reads.append(fb.access(start, min(8 * n, max(fb.count - start, 0))))
        else:
            reads.append(ctx.register_access(QUANT_PRE))
    return tuple(reads)


def fixpipe_check(ctx, n: int, mode: QuantMode, *, col0: int = 0, options: FixpipeOptions = DEFAULT_OPTIONS) -> None:
    """The register checks :func:`fixpipe_apply` makes for an ``n``-column transfer, without converting anything
    (timing-only runs): QUANT_PRE written for scalar modes, FPC written and the quant words inside the fixpipe
    buffer for vector modes."""
    if mode.is_scaled:
        if mode.is_vector:
            checked_quant_vector_address(ctx, col0 + n)
        else:
            get_quant_scalar(ctx)
    saturating(ctx, options.ctrl48_polarity)


__all__ = ["DEFAULT_OPTIONS", "FixpipeOptions", "LayoutMode", "ReluPreMode", "fixpipe_apply", "fixpipe_check",
           "fixpipe_reads",
           "pre_quant_mode"]
