"""The fixpipe quantisation registers of a core: PTO ``SET_QUANT_SCALAR`` / ``SET_QUANT_VECTOR`` and CTRL[48].

Counterparts: PTO ``SET_QUANT_SCALAR<OutType>(float)`` (``include/pto/npu/{a2a3,a5}/SetQuantScalar.hpp``,
``include/pto/cpu/SetQuantScalar.hpp``), ``SET_QUANT_VECTOR(fpTile)`` (``SetQuantVector.hpp``), the CCE
``set_quant_pre`` / ``set_fpc`` register writes and the saturation bit of the Ascend C CTRL register.

Registers live in ``ctx.registers`` (plain unsigned ints): ``QUANT_PRE`` (the 64-bit scalar quant word),
``FPC`` (bits [15:8] = fixpipe-buffer address of the quant vector in 128-byte units) and ``CTRL``.

SET_QUANT_SCALAR word (pto-mx-semantics 3.2): the fp32 bit pattern of the scale widened to 64 bits; when
``OutType`` is one byte wide, bit 46 is cleared and then set iff ``OutType`` is int8. **[CONFLICT]** the NPU
headers widen the pattern read as *int32* (sign-extension: a negative scale sets bits 32..63), the CPU
simulator widens it as *uint32*; ``extension="sign"`` (default, NPU) or ``"zero"`` (CPU simulator).
"""

from __future__ import annotations

import numpy as np

from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.tile.pto.tile import TileType

QUANT_PRE = "QUANT_PRE"
FPC = "FPC"
CTRL = "CTRL"
SIGN_BIT = 46  # signed (int8) vs unsigned (uint8) B8 output
CTRL_SAT_BIT = 48  # Ascend C: CTRL[48] = 0 -> saturating fixpipe/cube float conversions
FPC_UNIT = 128  # FPC[15:8] counts 128-byte units of the fixpipe buffer
_MASK64 = (1 << 64) - 1


def quant_scalar_word(value, out_dtype, *, extension: str = "sign") -> int:
    """The 64-bit word ``SET_QUANT_SCALAR<out_dtype>(value)`` writes (see the module docstring)."""
    if extension not in ("sign", "zero"):
        raise ArgumentError(f"extension: expected 'sign' (NPU headers) or 'zero' (CPU simulator), got {extension!r}")
    out = get_dtype(out_dtype)
    try:
        bits = int(np.array([value], dtype=np.float32).view(np.uint32)[0])
    except (TypeError, ValueError):
        raise ArgumentError(f"value: expected a float scale, got {value!r}") from None
    word = bits
    if extension == "sign" and bits & 0x8000_0000:
        word = (bits - (1 << 32)) & _MASK64  # int32 -> int64 -> uint64
    if out.bits == 8:
        word &= ~(1 << SIGN_BIT) & _MASK64
        if out.name == "int8":
            word |= 1 << SIGN_BIT
    return word


def _check_word(word) -> int:
    if isinstance(word, (bool, np.bool_)) or not isinstance(word, (int, np.integer)) or not 0 <= int(word) <= _MASK64:
        raise ArgumentError(f"word: expected a 64-bit unsigned quant word, got {word!r}")
    return int(word)


def set_quant_pre(ctx, word: int) -> None:
    """CCE ``set_quant_pre``: write the scalar quant word to the core's QUANT_PRE register."""
    ctx.registers[QUANT_PRE] = _check_word(word)


def set_quant_scalar(value, out_dtype, *, extension: str = "sign", ctx=None) -> int:
    """PTO ``SET_QUANT_SCALAR<out_dtype>(value)``: build the quant word and write it to ``ctx``'s QUANT_PRE
    register (when ``ctx`` is given). Returns the word. Must precede the TPUSH / TMOV / TSTORE that uses it."""
    word = quant_scalar_word(value, out_dtype, extension=extension)
    if ctx is not None:
        set_quant_pre(ctx, word)
        if ctx.bus.instructions:
            ctx.emit(Pipe.FIX, "SET_QUANT_SCALAR", local_writes=(ctx.register_access(QUANT_PRE),),
                     info={"word": word, "out_dtype": get_dtype(out_dtype).name})
    return word


def get_quant_scalar(ctx) -> int:
    """PTO ``GET_QUANT_SCALAR``: the QUANT_PRE word (:class:`ConfigError` if nothing was written)."""
    word = ctx.registers.get(QUANT_PRE)
    if word is None:
        raise ConfigError(f"{ctx}: the QUANT_PRE register was never written; call SET_QUANT_SCALAR (or pass a "
                          "pre-quant scalar) before a scalar-quant fixpipe transfer")
    return word


def set_quant_vector(fp) -> int:
    """PTO ``SET_QUANT_VECTOR(fpTile)``: point the fixpipe at a ``TileType::Scaling`` tile of uint64 quant words
    (one per output column). Writes ``FPC = (fb_address >> 7) << 8`` on the tile's core and returns it."""
    word = point_fpc(fp)
    ctx = fp.ctx
    if ctx.bus.instructions:
        ctx.emit(Pipe.FIX, "SET_QUANT_VECTOR", local_writes=(ctx.register_access(FPC),), info={"fpc": word})
    return word


def point_fpc(fp, byte_offset: int = 0) -> int:
    """The FPC write of ``SET_QUANT_VECTOR`` and of the vector-quant Acc moves (PTO ``SetFPC``):
    ``FPC = ((fb_address + byte_offset) >> 7) << 8``; ``byte_offset`` is TEXTRACT_FP's 8 bytes per skipped
    column, the address truncated to the register's 128-byte units. No event (the caller's instruction
    declares the register write)."""
    if getattr(fp, "loc", None) is not TileType.Scaling:
        raise ConfigError(f"SET_QUANT_VECTOR: the fp tile must be TileType::Scaling, got {fp!r}")
    if fp.dtype.name not in ("uint64", "int64"):
        raise ConfigError(f"SET_QUANT_VECTOR: quant words are uint64/int64, got {fp.dtype.name}")
    t = fp._bound()
    if t.byte_offset % FPC_UNIT:
        raise ConfigError(f"SET_QUANT_VECTOR: the Scaling tile must start on a {FPC_UNIT}-byte boundary of the "
                          f"fixpipe buffer (FPC counts 128-byte units), got byte {t.byte_offset}")
    word = ((t.byte_offset + int(byte_offset)) // FPC_UNIT) << 8
    t.ctx.registers[FPC] = word
    return word


def quant_vector_address(ctx) -> int:
    """Fixpipe-buffer byte address the FPC register points at (0 when never written)."""
    return ((ctx.registers.get(FPC, 0) >> 8) & 0xFF) * FPC_UNIT


def checked_quant_vector_address(ctx, n: int) -> int:
    """The fixpipe-buffer byte address of the ``n`` uint64 quant words the FPC register points at (checked:
    :class:`ConfigError` if FPC was never written or the words overrun the buffer)."""
    fpc = ctx.registers.get(FPC)
    if fpc is None:
        raise ConfigError(f"{ctx}: the FPC register was never written; call SET_QUANT_VECTOR (or pass an fp tile) "
                          "before a vector-quant fixpipe transfer")
    addr = ((fpc >> 8) & 0xFF) * FPC_UNIT
    fb = ctx.resource.fb_buf
    if addr + 8 * n > fb.size:
        raise ConfigError(f"{ctx}: {n} quant words at fixpipe-buffer byte {addr} overrun the {fb.size}-byte buffer")
    return addr


def quant_vector_words(ctx, n: int) -> np.ndarray:
    """The ``n`` uint64 quant words the FPC register points at in the core's fixpipe buffer."""
    addr = checked_quant_vector_address(ctx, n)
    return ctx.resource.fb_buf.raw[addr: addr + 8 * n].view(np.uint64).copy()


def set_ctrl(ctx, value: int) -> None:
    """Write the core's CTRL register (only bit 48, the fixpipe saturation control, is modelled)."""
    ctx.registers[CTRL] = _check_word(value)


def saturating(ctx, polarity: str = "ascendc") -> bool:
    """Whether float conversions saturate, from CTRL[48]. **[CONFLICT]** Ascend C documents CTRL[48] = 0 as
    saturating (``polarity="ascendc"``, default); the PTO CPU simulator treats 1 as saturating
    (``polarity="cpu_sim"``). An unwritten CTRL reads 0."""
    if polarity not in ("ascendc", "cpu_sim"):
        raise ArgumentError(f"polarity: expected 'ascendc' or 'cpu_sim', got {polarity!r}")
    bit = (ctx.registers.get(CTRL, 0) >> CTRL_SAT_BIT) & 1
    return bit == 0 if polarity == "ascendc" else bit == 1


__all__ = [
    "CTRL",
    "FPC",
    "QUANT_PRE",
    "checked_quant_vector_address",
    "get_quant_scalar",
    "quant_scalar_word",
    "quant_vector_words",
    "saturating",
    "set_ctrl",
    "set_quant_pre",
    "point_fpc",
    "quant_vector_address",
    "set_quant_scalar",
    "set_quant_vector",
]
