"""The 4:2 structured-sparsity format of CATLASS example 41 (``sparse_matmul_tla``) on the host.

The cube's sparse matmul (Ascend C ``MmadWithSparse``, Atlas A2) multiplies a dense A by a B that has at most two
non-zeros in every group of four consecutive elements along K. B reaches the device compressed:

* the **dense** matrix keeps two values per group (``k / 2`` values per column of B), stored ColumnMajor (one
  row of ``k / 2`` int8 per column of the logical B, as the example's ``LayoutTagB = ColumnMajor``);
* the **index** says where in its group each kept value sits, two bits per value. The first value of a group
  sits at position ``i0`` in 0..2 (among the first three elements), the second at ``1 + i1`` with ``i1`` in 0..2
  (among the last three); 3 is not a valid index. Four indices pack into a byte, the first in the low bits
  (Ascend C ``LoadDataWithSparse``: "reverse order" when the byte is read most-significant first), so one byte
  covers two groups, eight elements of K. A group with one non-zero at position 3 keeps it as its second value
  (``i0 = 0`` over a zero, ``i1 = 2``); one at 0..2 as its first value, with a zero second value; an all-zero
  group keeps two zeros with indices (0, 0) (the table of Ascend C ``MmadWithSparse``).
* the index matrix (``n x k / 8`` bytes, one row per column of B) is stored in **NZ**: fractals of 16 columns of
  B x 8 bytes, 128 bytes each, the fractals along N contiguous, then the next 8 bytes of K; padded with zeros to
  ``round_up(n, 16) x round_up(k / 8, 8)`` bytes (the example's ``sparse_gen_data.py``: ``index_nd_to_nz``).
  This is the layout the kernel reads (``KernelSparseMatmul``'s ``BIndexLayout``, TLA ``nZ`` of ``int32``-sized
  fractals over bytes): 8 index bytes per 32 bytes of dense B, so the index of the dense byte at offset ``o`` of
  an L1 tile sits at byte ``o / 4`` of the index tile.

:func:`compress_4to2` builds both from a logical sparse B, :func:`index_to_nz` lays the index out for the
device, :func:`decompress_4to2` expands them back (what the cube does). The compression here refuses a group
with more than two non-zeros (the hardware would use the first two); CATLASS's generator draws exactly two
non-zeros per group (:func:`random_sparse_b`).
"""

from __future__ import annotations

import numpy as np

from catlass_py.errors import ArgumentError

#: elements of K per group, values kept per group, index bits per value
GROUP, KEPT, INDEX_BITS = 4, 2, 2
#: index bytes per row of the NZ fractal (K direction) and columns of B per fractal
INDEX_FRACTAL_K, INDEX_FRACTAL_N = 8, 16


def _round(v: int, a: int) -> int:
    return -(-v // a) * a


def check_sparse_b(b: np.ndarray, name: str = "b") -> None:
    """Raise :class:`ArgumentError` unless ``b`` (logical ``k x n`` int8) has k a multiple of 8 and at most two
    non-zeros in every group of four consecutive elements along K."""
    b = np.asarray(b)
    if b.ndim != 2:
        raise ArgumentError(f"{name}: expected a 2-D (k, n) matrix, got shape {b.shape}")
    k, n = b.shape
    if k % 8:
        raise ArgumentError(f"{name}: k = {k} must be a multiple of 8 (sparse k must be multiple of 8: two groups "
                            "of four per index byte)")
    counts = (b.reshape(k // GROUP, GROUP, n) != 0).sum(axis=1)
    bad = np.argwhere(counts > KEPT)
    if bad.size:
        g, col = (int(v) for v in bad[0])
        raise ArgumentError(f"{name}: not 4:2 sparse: column {col}, rows {g * GROUP}..{g * GROUP + 3} hold "
                            f"{int(counts[g, col])} non-zeros (at most 2 per group of 4 along k; {len(bad)} such "
                            "group(s))")


def compress_4to2(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Compress a logical 4:2-sparse B (``k x n`` int8) into ``(dense, index)``: ``dense`` is ``n x k/2`` int8
    (the ColumnMajor ``k/2 x n`` matrix's storage), ``index`` ``n x k/8`` uint8 in row order (ND; see the module
    for the encoding). Raises :class:`ArgumentError` for a group with more than two non-zeros."""
    b = np.asarray(b)
    if b.dtype != np.int8:
        raise ArgumentError(f"b: expected int8, got {b.dtype}")
    check_sparse_b(b)
    k, n = b.shape
    g = np.ascontiguousarray(b.T).reshape(n, k // GROUP, GROUP)  # [column, group, position]
    nz = g != 0
    count = nz.sum(axis=-1)
    first = np.argmax(nz, axis=-1)                               # first non-zero (0 when none)
    rest = nz.copy()
    np.put_along_axis(rest, first[..., None], False, axis=-1)
    second = np.argmax(rest, axis=-1)                            # second non-zero (0 when none)
    vfirst = np.take_along_axis(g, first[..., None], axis=-1)[..., 0]
    vsecond = np.take_along_axis(g, second[..., None], axis=-1)[..., 0]
    two, one = count == 2, count == 1
    one_last = one & (first == 3)
    one_front = one & (first < 3)
    i0 = np.where(two | one_front, first, 0)
    i1 = np.where(two, second - 1, np.where(one_last, 2, 0))
    d0 = np.where(two | one_front, vfirst, 0).astype(np.int8)
    d1 = np.where(two, vsecond, np.where(one_last, vfirst, 0)).astype(np.int8)
    dense = np.stack([d0, d1], axis=-1).reshape(n, k // 2)
    codes = np.stack([i0, i1], axis=-1).reshape(n, k // 8, 4).astype(np.uint8)
    index = (codes[..., 0] | (codes[..., 1] << 2) | (codes[..., 2] << 4) | (codes[..., 3] << 6)).astype(np.uint8)
    return dense, index


def index_to_nz(index: np.ndarray) -> np.ndarray:
    """The ND index (``n x k/8`` bytes) in the kernel's NZ order, zero-padded to ``round_up(n, 16) x
    round_up(k/8, 8)`` bytes: ``[k/8 fractal][n fractal][16 columns][8 bytes]``, flat (``index_nd_to_nz`` of the
    example's generator)."""
    index = np.asarray(index, dtype=np.uint8)
    n, kb = index.shape
    rn, rk = _round(n, INDEX_FRACTAL_N), _round(kb, INDEX_FRACTAL_K)
    full = np.zeros((rn, rk), np.uint8)
    full[:n, :kb] = index
    return np.ascontiguousarray(full.reshape(rn // 16, 16, rk // 8, 8).transpose(2, 0, 1, 3)).reshape(-1)


def index_nz_bytes(n: int, k: int) -> int:
    """Bytes of the NZ index of a ``k x n`` B: ``round_up(n, 16) * round_up(k / 8, 8)``."""
    return _round(n, INDEX_FRACTAL_N) * _round(k // 8, INDEX_FRACTAL_K)


def decompress_4to2(dense: np.ndarray, index: np.ndarray) -> np.ndarray:
    """The logical ``k x n`` B that ``dense`` (``n x k/2``) and the ND ``index`` (``n x k/8``) stand for: each kept
    value added at the position its index names (two values naming one position add up, as the cube would use
    that element of A twice). Raises :class:`ArgumentError` for an index of 3."""
    dense = np.asarray(dense)
    index = np.asarray(index, dtype=np.uint8)
    n, half = dense.shape
    codes = (index[..., None] >> np.array([0, 2, 4, 6], np.uint8)) & 3      # [n, k/8, 4]
    codes = codes.reshape(n, half)
    if (codes == 3).any():
        raise ArgumentError("index: 3 is not a valid 4:2 index (0..2)")
    e = np.arange(half)
    pos = (e // 2) * GROUP + (e % 2) + codes                                 # [n, k/2]
    out = np.zeros((n, 2 * half), np.int16)
    rows = np.arange(n)[:, None]
    out[rows, pos[:, 0::2]] = dense[:, 0::2]
    out[rows, pos[:, 1::2]] += dense[:, 1::2]
    return out.T


def random_sparse_b(rng: np.random.Generator, k: int, n: int) -> np.ndarray:
    """A logical ``k x n`` int8 B as the example's ``generate_sparse_matrix_b`` draws it: in every group of four
    along K two distinct positions hold a value in 1..9, the other two are zero."""
    keys = rng.random((n, k // GROUP, GROUP))
    chosen = np.argsort(keys, axis=-1)[..., :KEPT]
    g = np.zeros((n, k // GROUP, GROUP), np.int8)
    np.put_along_axis(g, chosen, rng.integers(1, 10, size=chosen.shape, dtype=np.int8), axis=-1)
    return np.ascontiguousarray(g.reshape(n, k).T)


__all__ = ["check_sparse_b", "compress_4to2", "decompress_4to2", "index_nz_bytes", "index_to_nz", "random_sparse_b"]
