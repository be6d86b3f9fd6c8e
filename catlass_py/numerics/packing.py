"""Two 4-bit codes per byte: the storage of Ascend 950 ``fp4x2_e2m1_t`` / ``fp4x2_e1m2_t`` (and ``int4b_t``).

Counterpart of PTO ``float4_e2m1x2_t`` / ``float4_e1m2x2_t`` (``include/pto/cpu/MXTypes.hpp``) and of the
``fp4_pack`` helpers of the PTO goldens: element ``2i`` sits in the **low** nibble of byte ``i``, element
``2i + 1`` in the high nibble (pto-mx-semantics 4.5). Packing runs along the last axis, which must have an
even length; any leading shape is kept.
"""

from __future__ import annotations

import numpy as np

from catlass_py.errors import ArgumentError


def _codes(codes) -> np.ndarray:
    c = np.asarray(codes)
    if c.dtype.kind not in "iu":
        if c.dtype.itemsize != 1:
            raise ArgumentError(f"codes: expected integer codes or a 1-byte fp4 array, got dtype {c.dtype}")
        c = c.view(np.uint8)  # ml_dtypes float4_e2m1fn / int4 hold one code per byte
    if c.size and (int(c.min()) < 0 or int(c.max()) > 15):
        raise ArgumentError(f"codes: 4-bit codes must lie in [0, 15], got [{int(c.min())}, {int(c.max())}]")
    return c.astype(np.uint8, copy=False)


def pack_fp4(codes) -> np.ndarray:
    """Pack 4-bit codes (uint8 values 0..15, or an ml_dtypes ``float4_e2m1fn`` array) two per byte.

    Returns uint8 of shape ``codes.shape[:-1] + (n // 2,)``: ``byte = codes[2i] | codes[2i + 1] << 4``.
    """
    c = _codes(codes)
    if c.ndim == 0 or c.shape[-1] % 2:
        raise ArgumentError(f"codes: the last axis must have an even length to pack two per byte, got shape {c.shape}")
    return (c[..., 0::2] | (c[..., 1::2] << 4)).astype(np.uint8)


def unpack_fp4(packed, count: int | None = None) -> np.ndarray:
    """Inverse of :func:`pack_fp4`: uint8 codes of shape ``packed.shape[:-1] + (2 * n,)`` (low nibble first).

    ``count`` keeps only the first ``count`` codes of the last axis (an odd element count leaves the high
    nibble of the last byte unused).
    """
    b = np.asarray(packed)
    if b.dtype != np.uint8:
        raise ArgumentError(f"packed: expected uint8 bytes, got dtype {b.dtype}")
    if b.ndim == 0:
        raise ArgumentError("packed: expected an array of bytes, got a scalar")
    out = np.empty(b.shape[:-1] + (2 * b.shape[-1],), np.uint8)
    out[..., 0::2] = b & 0x0F
    out[..., 1::2] = b >> 4
    if count is not None:
        if not 0 <= count <= out.shape[-1]:
            raise ArgumentError(f"count: expected 0..{out.shape[-1]}, got {count}")
        out = out[..., :count]
    return out


__all__ = ["pack_fp4", "unpack_fp4"]
