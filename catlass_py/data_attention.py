"""Host data of CATLASS's attention examples, generated the way their ``gen_data.py`` scripts do.

* :func:`example23_inputs` -- ``examples/23_flash_attention_infer/gen_data.py``: ``np.random.seed(1)``, then Q,
  the K cache and the V cache drawn with ``np.random.uniform(-1, 1, shape)`` in that order (numpy's legacy
  ``RandomState`` stream, identical on every numpy version) and cast to fp16 / bf16; with ``cacheMode = 1``
  (the README's) a paged cache of ``batch * ceil(max_kv / 128)`` blocks of 128 tokens and block table row
  ``i`` = ``[maxBlocks * i + j]``; ``maskType = 1`` gives the ``triu(ones(1024, 1024), 1)`` mask. Varied
  lengths (``isVariedLen = 1``) come from Python's ``random.randint`` exactly as the script draws them, but from
  ``random.Random(1)`` (the script leaves Python's generator unseeded, so its lengths differ on every run).
* :func:`example19_inputs` -- ``examples/19_mla/gen_data.py``: ``np.random.seed(1)``, Q (``[tokens, heads, 576]``)
  and the K cache (``[numBlocks, 128, 1, 576]``) from ``np.random.uniform(-1, 1)`` cast to fp16 / bf16, split into
  the 512 "nope" and the 64 rope columns (V is the nope part of K); block table row ``i`` = ``[maxBlocks * i + j]``.

Inside :func:`catlass_py.data.shape_only_fills` (a timing-only run) Q, K, V and the mask are shape-only arrays
(nothing is drawn); the sequence lengths and block tables, which steer the kernels' control flow, are the real
ones.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
from ml_dtypes import bfloat16

from catlass_py.data import shape_only_active
from catlass_py.errors import ArgumentError
from catlass_py.virtual import virtual_array

PAGED_BLOCK_SIZE = 128
MASK_SIDE = 1024


def _np_dtype(dtype: str):
    if dtype in ("half", "float16", "fp16"):
        return np.float16
    if dtype in ("bf16", "bfloat16"):
        return bfloat16
    raise ArgumentError(f"dtype: expected 'half' or 'bf16', got {dtype!r}")


def _uniform(rs: np.random.RandomState, shape, t) -> np.ndarray:
    """``np.random.uniform(-1, 1, shape).astype(t)``, or a shape-only array inside a timing-only run's input
    generation (the values of Q, K and V steer nothing)."""
    if shape_only_active():
        return virtual_array(shape, t)
    return rs.uniform(-1.0, 1.0, size=shape).astype(t)


def gen_seqlen(max_q_seqlen: int, max_kv_seqlen: int, is_varied_len: int, batch: int, *, seed: int = 1):
    """``gen_seqlen`` of example 23's ``gen_data.py``: equal lengths, or per batch ``q = randint(1, max_q)``,
    ``kv = randint(q, max_kv)`` (Python ``random``, here seeded with ``seed``)."""
    if is_varied_len == 0:
        return [max_q_seqlen] * batch, [max_kv_seqlen] * batch
    rng = random.Random(seed)
    q_list, kv_list = [], []
    for _ in range(batch):
        q = rng.randint(1, max_q_seqlen)
        q_list.append(q)
        kv_list.append(rng.randint(q, max_kv_seqlen))
    return q_list, kv_list


@dataclass
class Example23Inputs:
    """Host inputs of CATLASS example 23 (``23_flash_attention_infer``), as ``gen_data.py`` writes them."""

    q: np.ndarray  # [num_tokens, num_heads, head_dim], fp16 / bf16
    k: np.ndarray  # paged [num_blocks, 128, kv_heads, head_dim] (cacheMode 1) or [num_kv_tokens, kv_heads, head_dim]
    v: np.ndarray
    block_table: np.ndarray  # int32 [batch, max_blocks] (empty when not paged)
    q_seqlen: np.ndarray  # int64 [batch]
    kv_seqlen: np.ndarray  # int64 [batch]
    mask: np.ndarray  # [1024, 1024] triu mask in the data type (empty when maskType == 0)


def example23_inputs(batch: int, q_seqlen: int, kv_seqlen: int, num_heads: int, kv_heads: int, head_size: int,
                     is_varied_len: int, mask_type: int, dtype: str = "half", cache_mode: int = 1) -> Example23Inputs:
    """The data ``gen_data.py batch qSeqlen kvSeqlen numHeads kvHeads headSize isVariedLen maskType dtype
    cacheMode`` writes (module docstring)."""
    for name, value in (("batch", batch), ("q_seqlen", q_seqlen), ("kv_seqlen", kv_seqlen), ("num_heads", num_heads),
                        ("kv_heads", kv_heads), ("head_size", head_size)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ArgumentError(f"{name}: expected a positive integer, got {value!r}")
    if cache_mode not in (0, 1):
        raise ArgumentError(f"cache_mode: expected 0 (contiguous KV) or 1 (paged KV), got {cache_mode!r}")
    t = _np_dtype(dtype)
    q_list, kv_list = gen_seqlen(q_seqlen, kv_seqlen, is_varied_len, batch)
    max_kv = max(kv_list)
    num_tokens = sum(q_list)
    rs = np.random.RandomState(1)
    query = _uniform(rs, (num_tokens, num_heads, head_size), t)
    if cache_mode == 1:
        max_blocks = (max_kv + PAGED_BLOCK_SIZE - 1) // PAGED_BLOCK_SIZE
        num_blocks = batch * max_blocks
        shape = (num_blocks, PAGED_BLOCK_SIZE, kv_heads, head_size)
        key = _uniform(rs, shape, t)
        value = _uniform(rs, shape, t)
        table = (max_blocks * np.arange(batch)[:, None] + np.arange(max_blocks)[None, :]).astype(np.int32)
    else:
        shape = (sum(kv_list), kv_heads, head_size)
        key = _uniform(rs, shape, t)
        value = _uniform(rs, shape, t)
        table = np.zeros((0, 0), np.int32)
    if mask_type != 1:
        mask = np.zeros((0, 0), t)
    elif shape_only_active():
        mask = virtual_array((MASK_SIDE, MASK_SIDE), t)
    else:
        mask = np.triu(np.ones((MASK_SIDE, MASK_SIDE)), 1).astype(t)
    return Example23Inputs(query, key, value, table, np.asarray(q_list, np.int64), np.asarray(kv_list, np.int64), mask)


@dataclass
class Example19Inputs:
    """Host inputs of CATLASS example 19 (``19_mla``), as ``gen_data.py`` writes them."""

    q: np.ndarray  # [num_tokens, num_heads, 512]
    q_rope: np.ndarray  # [num_tokens, num_heads, 64]
    k: np.ndarray  # [num_blocks, 128, 1, 512] (V is the same data)
    k_rope: np.ndarray  # [num_blocks, 128, 1, 64]
    block_table: np.ndarray  # int32 [batch, max_blocks]
    q_seqlen: np.ndarray  # int32 [batch]
    kv_seqlen: np.ndarray  # int32 [batch]


MLA_EMBED = 512
MLA_EMBED_ROPE = 64


def example19_inputs(batch: int, q_seqlen_list, kv_seqlen_list, num_heads: int, num_blocks: int, block_size: int,
                     dtype: str = "half") -> Example19Inputs:
    """The data ``gen_data.py batch "qSeqlenList" "kvSeqlenList" numHeads numBlocks blockSize dtype`` writes."""
    t = _np_dtype(dtype)
    q_list = [int(v) for v in q_seqlen_list]
    kv_list = [int(v) for v in kv_seqlen_list]
    if len(q_list) != batch or len(kv_list) != batch:
        raise ArgumentError(f"q_seqlen_list / kv_seqlen_list: expected {batch} lengths each, got {len(q_list)} and "
                            f"{len(kv_list)}")
    rs = np.random.RandomState(1)
    num_tokens = sum(q_list)
    head_qk = MLA_EMBED + MLA_EMBED_ROPE
    max_blocks = (max(kv_list) + block_size - 1) // block_size
    table = (max_blocks * np.arange(batch)[:, None] + np.arange(max_blocks)[None, :]).astype(np.int32)
    if shape_only_active():  # a timing-only run: shape-only Q, K (nothing drawn), the real table and lengths
        return Example19Inputs(virtual_array((num_tokens, num_heads, MLA_EMBED), t),
                               virtual_array((num_tokens, num_heads, MLA_EMBED_ROPE), t),
                               virtual_array((num_blocks, block_size, 1, MLA_EMBED), t),
                               virtual_array((num_blocks, block_size, 1, MLA_EMBED_ROPE), t),
                               table, np.asarray(q_list, np.int32), np.asarray(kv_list, np.int32))
    query = rs.uniform(-1.0, 1.0, size=(num_tokens, num_heads, head_qk)).astype(t)
    key = rs.uniform(-1.0, 1.0, size=(num_blocks, block_size, 1, head_qk)).astype(t)
    return Example19Inputs(np.ascontiguousarray(query[:, :, :MLA_EMBED]), np.ascontiguousarray(query[:, :, MLA_EMBED:]),
                           np.ascontiguousarray(key[..., :MLA_EMBED]), np.ascontiguousarray(key[..., MLA_EMBED:]),
                           table, np.asarray(q_list, np.int32), np.asarray(kv_list, np.int32))


__all__ = ["Example19Inputs", "Example23Inputs", "example19_inputs", "example23_inputs", "gen_seqlen"]
