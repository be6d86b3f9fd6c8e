"""Host tiling of CATLASS example 19 (``examples/19_mla/mla_tiling.cpp``, ``mla_tiling.h``): the uint32 tiling
array the MLA kernel reads from GM, for the generic kernel (``numHeads != 128``).

Layout (``TILING_HEAD_SIZE = 400`` head words, then ``TILING_PARA_SIZE = 17`` words per batch, batches sorted by
KV length then query length, longest first):

================================  ===================================================================
head word                         value
================================  ===================================================================
0 batch, 1 numHeads, 2 headDim    512, 3 numBlocks, 4 blockSize (128), 5 maxBlocks per query
6 tor                             ``1 / sqrt(512 + 64)`` as float bits
7 kvHeads, 8 head size, 9 para    400, 17
10 / 11                           query heads per task (``QN_TILE_LIST[ceil(log2(maxQSeqlen))]`` capped by the
                                  group) / number of head splits
12 maskType, 13 rope dim (64)
14 maxKvSeqlen, 16 KV cores       the largest KV length; the number of cores a sequence's KV is split over
17 maxQSeqlen, 18 total tokens
21 processNum                     0 (no KV split) or the total task count with the split
25 ..                             with the split: prefix sums of the tasks per batch (``CUTASK_START_OFFSET``)
================================  ===================================================================

Per batch entry: 0 qSeqlen, 1 kvSeqlen, 2 the batch's index, 3 blockSize, 4/5 Q (= O) element offset, 6/7 Q_rope
offset, 8/9 mask offset, 11/12 lse offset, 13/14 partial-O offset, 15 KV tokens per core, 16 cores for this KV.
The KV is split (flash decoding) only when ``maxKv >= blockDim * 128 * 2``, ``batch <= 0.8 * blockDim`` and every
query has one token: the cores are handed out to the heaviest sequences, at most 8 per sequence and at least
512 tokens each.
"""

from __future__ import annotations

import math

import numpy as np

from catlass_py.errors import ArgumentError

TILING_BATCH = 0
TILING_NUMHEADS = 1
TILING_HEADDIM = 2
TILING_NUMBLOKS = 3
TILING_BLOCKSIZE = 4
TILING_MAXBLOCKS = 5
TILING_TOR = 6
TILING_KVHEADS = 7
TILING_HEADSIZE = 8
TILING_PARASIZE = 9
TILING_HEAD_SPLIT_SIZE = 10
TILING_HEAD_SPLIT_NUM = 11
TILING_MASKTYPE = 12
TILING_HEADDIM_ROPE = 13
TILING_MAX_KVSEQLEN = 14
TILING_KVSPLIT = 15
TILING_KVCORENUM = 16
TILING_MAX_QSEQLEN = 17
TILING_TOTAL_QTOKENS = 18
TILING_PROCESSNUM = 21
TILING_HEAD_SIZE = 400
CUTASK_START_OFFSET = 25
TILING_PARA_SIZE = 17
SPLITKV_RATION = 0.8
KV_SEQLEN_SLICE = 128
QN_TILE_LIST = (128, 64, 32, 16, 8, 1)


def _sorted_indices(q_seqlen, kv_seqlen) -> list[int]:
    """``quickSortIndices``: batch indices by KV length, then query length, both descending (the C++'s Lomuto
    quicksort, reproduced so that ties land in the same order)."""
    idx = list(range(len(kv_seqlen)))

    def partition(lo: int, hi: int) -> int:
        p = idx[hi]
        i = lo - 1
        for j in range(lo, hi):
            c = idx[j]
            if kv_seqlen[c] > kv_seqlen[p] or (kv_seqlen[c] == kv_seqlen[p] and q_seqlen[c] > q_seqlen[p]):
                i += 1
                idx[i], idx[j] = idx[j], idx[i]
        idx[i + 1], idx[hi] = idx[hi], idx[i + 1]
        return i + 1

    stack = [(0, len(idx) - 1)]
    while stack:
        lo, hi = stack.pop()
        if lo < hi:
            pi = partition(lo, hi)
            stack.append((pi + 1, hi))
            stack.append((lo, pi - 1))
    return idx


def q_n_block_tile(num_heads: int, kv_heads: int, q_seqlen: int) -> int:
    """``GetQNBlockTile`` (generic kernel)."""
    i = int(math.ceil(math.log2(q_seqlen))) if q_seqlen > 0 else 0
    i = min(i, 5)
    return min(QN_TILE_LIST[i], num_heads // kv_heads)


def get_mla_tiling(batch: int, num_heads: int, embedding_size: int, embedding_size_rope: int, num_blocks: int,
                   block_size: int, kv_heads: int, q_seqlen, kv_seqlen, block_dim: int) -> np.ndarray:
    """``GetMLATilingParam`` for ``numHeads != 128``: the uint32 tiling array (module docstring)."""
    if block_size != 128:
        raise ArgumentError(f"block_size: blockSize != 128 is not supported, got {block_size}")
    if num_heads == 128:
        raise ArgumentError("num_heads: 128 heads take the TP1 / AMLA specialisations, which are not implemented")
    q = [int(v) for v in q_seqlen]
    kv = [int(v) for v in kv_seqlen]
    num_tokens = sum(q)
    max_kv = max(kv)
    t = np.zeros(TILING_HEAD_SIZE + batch * TILING_PARA_SIZE, dtype=np.uint32)
    q_off, rope_off, mask_off = [], [], []
    cq = cr = cm = 0
    for i in range(batch):
        q_off.append(cq)
        rope_off.append(cr)
        mask_off.append(cm)
        cq += num_heads * embedding_size * q[i]
        cr += num_heads * embedding_size_rope * q[i]
        cm += max_kv * q[i]
    order = _sorted_indices(q, kv) if num_tokens > 0 else list(range(batch))
    max_q = max((0 if kv[i] == 0 else q[i]) for i in range(batch))
    if sum(kv) > num_blocks * block_size:
        raise ArgumentError("kv_seqlen: the K and V tokens do not fit in the paged cache (numBlocks * blockSize)")
    tor = np.float32(1.0 / math.sqrt(1.0 * (embedding_size + embedding_size_rope)))
    # GetMLATilingCommon
    max_kv_c = max_q_c = 0
    for s, b in enumerate(order):
        qs = 0 if kv[b] == 0 else q[b]
        max_q_c = max(max_q_c, qs)
        max_kv_c = max(max_kv_c, kv[b])
        off = TILING_HEAD_SIZE + TILING_PARA_SIZE * s
        t[off], t[off + 1], t[off + 2], t[off + 3] = qs, kv[b], b, block_size
        for word, value in ((4, q_off[b]), (6, rope_off[b]), (8, mask_off[b])):
            t[off + word], t[off + word + 1] = value >> 32, value & 0xFFFFFFFF
    t[TILING_MAX_KVSEQLEN] = max_kv_c
    t[TILING_MAX_QSEQLEN] = max_q_c
    # GetTilingHead
    t[TILING_BATCH] = batch
    t[TILING_HEADSIZE] = TILING_HEAD_SIZE
    t[TILING_PARASIZE] = TILING_PARA_SIZE
    t[TILING_NUMHEADS] = num_heads
    t[TILING_HEADDIM] = embedding_size
    t[TILING_NUMBLOKS] = num_blocks
    t[TILING_BLOCKSIZE] = block_size
    t[TILING_MAXBLOCKS] = (max_kv + block_size - 1) // block_size
    t[TILING_TOR] = tor.view(np.uint32)
    t[TILING_KVHEADS] = kv_heads
    tile = q_n_block_tile(num_heads, kv_heads, max_q)
    t[TILING_HEAD_SPLIT_SIZE] = tile
    t[TILING_HEAD_SPLIT_NUM] = (num_heads + tile - 1) // tile
    t[TILING_MASKTYPE] = 0
    t[TILING_HEADDIM_ROPE] = embedding_size_rope
    t[TILING_TOTAL_QTOKENS] = num_tokens
    # GetKVSplitParam
    split = (int(t[TILING_MAX_KVSEQLEN]) >= block_dim * KV_SEQLEN_SLICE * 2
             and batch <= block_dim * SPLITKV_RATION and int(t[TILING_MAX_QSEQLEN]) == 1)
    if not split:
        t[TILING_KVCORENUM] = 1
        t[TILING_PROCESSNUM] = 0
        for s, b in enumerate(order):
            off = TILING_HEAD_SIZE + TILING_PARA_SIZE * s
            t[off + 15] = kv[b]
            t[off + 16] = 1
        return t
    min_tokens = block_size * 4
    max_split = 8
    aligned = [-(-kv[b] // block_size) * block_size for b in order]
    splits = [1] * batch
    total = batch
    while total < block_dim:
        best, best_load = -1, 0
        for i in range(batch):
            cur, nxt = aligned[i] // splits[i], aligned[i] // (splits[i] + 1)
            if splits[i] < max_split and nxt >= min_tokens and cur > best_load:
                best, best_load = i, cur
        if best == -1:
            break
        splits[best] += 1
        total += 1
    max_split_num = max(splits + [1])
    cu = 0
    t[CUTASK_START_OFFSET] = 0
    for s, b in enumerate(order):
        off = TILING_HEAD_SIZE + TILING_PARA_SIZE * s
        if kv[b] == 0:
            per_core, cores = block_size, 1
        else:
            blocks = aligned[s] // block_size
            per_core = -(-blocks // splits[s]) * block_size
            cores = -(-kv[b] // per_core)
        t[off + 15] = per_core
        t[off + 16] = cores
        cu += cores
        t[CUTASK_START_OFFSET + s + 1] = cu
    t[TILING_PROCESSNUM] = cu
    t[TILING_KVCORENUM] = max_split_num
    l_off = o_off = 0
    for s, b in enumerate(order):
        qs = 0 if kv[b] == 0 else q[b]
        off = TILING_HEAD_SIZE + TILING_PARA_SIZE * s
        t[off + 11], t[off + 12] = l_off >> 32, l_off & 0xFFFFFFFF
        t[off + 13], t[off + 14] = o_off >> 32, o_off & 0xFFFFFFFF
        l_off += num_heads * qs * max_split_num
        o_off += num_heads * qs * embedding_size
    return t


__all__ = ["CUTASK_START_OFFSET", "TILING_HEAD_SIZE", "TILING_PARA_SIZE", "get_mla_tiling", "q_n_block_tile"]
