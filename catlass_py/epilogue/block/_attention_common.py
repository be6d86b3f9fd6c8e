"""Vector-mask helpers the attention epilogues of CATLASS define as members (``SetVecMask`` / ``SetMask`` and
``SetBlockReduceMask`` of ``block_epilogue_online_softmax_no_mask.hpp``, ``block_epilogue_rescale_o_no_split_row.hpp``
and the MLA epilogues), and the UB layout constants they share."""

from __future__ import annotations

from catlass_py.tile.ascendc_vector import reset_vector_mask, set_vector_mask

FLOAT_BLOCK_SIZE = 8
FLOAT_VECTOR_SIZE = 64
HALF_VECTOR_SIZE = 128
BLOCK_SIZE = 16
UB_UINT8_VECTOR_SIZE = 1024
UB_UINT8_BLOCK_SIZE = 16384
VECTOR_SIZE = 128
ALL = (1 << 64) - 1


def set_vec_mask(ctx, length: int) -> None:
    """CATLASS ``SetVecMask(len)``: the first ``len % 64`` lanes of the upper or lower half (full mask for
    ``len`` 0 or 128; ``len >= 64`` keeps the lower 64 lanes on)."""
    temp = length % FLOAT_VECTOR_SIZE
    mask = (1 << temp) - 1
    if length == VECTOR_SIZE or length == 0:
        set_vector_mask(ctx, ALL, ALL)
    elif length >= FLOAT_VECTOR_SIZE:
        set_vector_mask(ctx, mask, ALL)
    else:
        set_vector_mask(ctx, 0, mask)


def set_mask(ctx, length: int) -> None:
    """CATLASS ``SetMask(len)`` of the rescale epilogues: as :func:`set_vec_mask` except that ``len == 0``
    gives the empty lower half."""
    temp = length % FLOAT_VECTOR_SIZE
    mask = (1 << temp) - 1
    if length == VECTOR_SIZE:
        set_vector_mask(ctx, ALL, ALL)
    elif length >= FLOAT_VECTOR_SIZE:
        set_vector_mask(ctx, mask, ALL)
    else:
        set_vector_mask(ctx, 0, mask)


def set_block_reduce_mask(ctx, length: int) -> None:
    """CATLASS ``SetBlockReduceMask(len)``: the first ``len`` (1..8) fp32 lanes of every data block; anything
    else gives the full mask."""
    if length > 8 or length < 1:
        set_vector_mask(ctx, ALL, ALL)
        return
    sub = (1 << length) - 1
    value = sum(sub << (8 * i) for i in range(8))
    set_vector_mask(ctx, value, value)


__all__ = [
    "BLOCK_SIZE",
    "FLOAT_BLOCK_SIZE",
    "FLOAT_VECTOR_SIZE",
    "HALF_VECTOR_SIZE",
    "UB_UINT8_BLOCK_SIZE",
    "UB_UINT8_VECTOR_SIZE",
    "VECTOR_SIZE",
    "reset_vector_mask",
    "set_block_reduce_mask",
    "set_mask",
    "set_vec_mask",
]
