"""numpy references of CATLASS's attention examples, computed the way their ``gen_data.py`` goldens compute them,
plus float64 references for the error budget.

* :func:`flash_attention_infer` -- example 23's ``ref_masked_attention`` (``inner_prec = 0``), per batch: the
  GQA group products ``S = Q K^T`` in float32 (``group_matmul`` casts both operands to float32), ``S * scale``,
  plus ``mask * -10000`` (fp16) or ``mask * -3e38`` (bf16) where the causal mask is on, a float32 softmax
  (max, subtract, ``exp``, sum, divide), P cast to the data type, ``O = P V`` in float32, cast to the data type.
  The causal mask of batch ``b`` is ``triu`` on the last ``q_b`` KV columns (row ``i`` sees KV
  ``j <= i + kv_b - q_b``), as ``gen_data.py`` builds it for ``maskType = 1``.
* :func:`attention_fp64` -- the same attention with every step in float64 and masked scores at ``-inf``, from the
  same fp16/bf16 inputs: the error budget of the kernel against exact arithmetic.

* :func:`mla` -- example 19's ``ref_masked_attention`` (no mask): ``S = [Q, Q_rope] [K, K_rope]^T`` in float32
  times ``1 / sqrt(576)``, a float32 softmax, then ``O_high = P V`` in float32 (``golden.bin``) and
  ``O_low = cast(P) V`` cast to the data type (``cpu_low.bin``), V being the 512 "nope" columns of K.

The FAI functions take the paged cache with its block table, or the contiguous ``[tokens, kv_heads, d]`` cache.
"""

from __future__ import annotations

import numpy as np

from catlass_py.errors import ArgumentError

PAGED_BLOCK_SIZE = 128


def _gather_kv(cache: np.ndarray, block_table, batch_idx: int, kv_len: int, kv_start: int) -> np.ndarray:
    """[kv_len, kv_heads, d] of batch ``batch_idx`` from a paged cache (through its block table row) or a
    contiguous one (rows ``kv_start ..``)."""
    if cache.ndim == 4:
        bs = cache.shape[1]
        blocks = np.asarray(block_table[batch_idx][: (kv_len + bs - 1) // bs], dtype=np.int64)
        return cache[blocks].reshape(-1, cache.shape[2], cache.shape[3])[:kv_len]
    return cache[kv_start:kv_start + kv_len]


def _causal(q_len: int, kv_len: int) -> np.ndarray:
    """1 where query ``i`` may not see KV ``j`` (``j > i + kv_len - q_len``)."""
    i = np.arange(q_len)[:, None]
    j = np.arange(kv_len)[None, :]
    return (j > i + (kv_len - q_len)).astype(np.float32)


def _batches(q, k, v, q_seqlen, kv_seqlen, block_table):
    q_seqlen = np.asarray(q_seqlen, dtype=np.int64)
    kv_seqlen = np.asarray(kv_seqlen, dtype=np.int64)
    if q_seqlen.shape != kv_seqlen.shape:
        raise ArgumentError("kv_seqlen: expected one length per batch, as many as q_seqlen")
    cu_q = cu_kv = 0
    for b in range(q_seqlen.size):
        ql, kl = int(q_seqlen[b]), int(kv_seqlen[b])
        yield b, cu_q, ql, kl, q[cu_q:cu_q + ql], _gather_kv(k, block_table, b, kl, cu_kv), \
            _gather_kv(v, block_table, b, kl, cu_kv)
        cu_q += ql
        cu_kv += kl


def flash_attention_infer(q: np.ndarray, k: np.ndarray, v: np.ndarray, q_seqlen, kv_seqlen, block_table=None, *,
                          causal: bool = False, scale: float | None = None) -> np.ndarray:
    """Example 23's golden (module docstring): O ``[tokens, heads, d]`` in Q's data type."""
    dtype = q.dtype
    heads, d = q.shape[1], q.shape[2]
    kv_heads = k.shape[-2]
    group = heads // kv_heads
    scale = 1.0 / (d ** 0.5) if scale is None else scale
    factor = np.float32(-3e38) if dtype != np.float16 else np.float32(-10000)
    out = np.zeros(q.shape, dtype=dtype)
    for _b, start, ql, kl, qb, kb, vb in _batches(q, k, v, q_seqlen, kv_seqlen, block_table):
        qh = np.transpose(qb, (1, 0, 2)).astype(np.float32).reshape(kv_heads, group, ql, d)
        kh = np.transpose(kb, (1, 2, 0)).astype(np.float32)[:, None]        # [kv_heads, 1, d, kl]
        vh = np.transpose(vb, (1, 0, 2))                                    # [kv_heads, kl, d]
        sim = np.matmul(qh, kh) * np.float32(scale)                         # [kv_heads, group, ql, kl]
        if causal:
            sim = sim + _causal(ql, kl) * factor
        row_max = np.max(sim, axis=-1, keepdims=True)
        e = np.exp(sim - row_max)
        p = (e / np.sum(e, axis=-1, keepdims=True)).astype(dtype)
        o = np.matmul(p.astype(np.float32), vh.astype(np.float32)[:, None])  # [kv_heads, group, ql, d]
        out[start:start + ql] = np.transpose(o.reshape(heads, ql, d), (1, 0, 2)).astype(dtype)
    return out


def attention_fp64(q: np.ndarray, k: np.ndarray, v: np.ndarray, q_seqlen, kv_seqlen, block_table=None, *,
                   causal: bool = False, scale: float | None = None) -> np.ndarray:
    """Softmax attention in float64 from the same inputs (masked scores at -inf): float64 ``[tokens, heads, d]``."""
    heads, d = q.shape[1], q.shape[2]
    kv_heads = k.shape[-2]
    group = heads // kv_heads
    scale = 1.0 / (d ** 0.5) if scale is None else scale
    out = np.zeros(q.shape, dtype=np.float64)
    for _b, start, ql, kl, qb, kb, vb in _batches(q, k, v, q_seqlen, kv_seqlen, block_table):
        qh = np.transpose(qb, (1, 0, 2)).astype(np.float64).reshape(kv_heads, group, ql, d)
        kh = np.transpose(kb, (1, 2, 0)).astype(np.float64)[:, None]
        vh = np.transpose(vb, (1, 0, 2)).astype(np.float64)[:, None]
        sim = np.matmul(qh, kh) * float(scale)
        if causal:
            sim = np.where(_causal(ql, kl) > 0, -np.inf, sim)
        sim = sim - np.max(sim, axis=-1, keepdims=True)
        e = np.exp(sim)
        o = np.matmul(e / np.sum(e, axis=-1, keepdims=True), vh)
        out[start:start + ql] = np.transpose(o.reshape(heads, ql, d), (1, 0, 2))
    return out


def mla(q, q_rope, k, k_rope, block_table, q_seqlen, kv_seqlen, *, fp64: bool = False):
    """Example 19's golden: ``(o_high float32, o_low in Q's dtype)`` ``[tokens, heads, 512]``; with ``fp64`` the
    same attention in float64 (returned twice)."""
    dtype = q.dtype
    heads, d = q.shape[1], q.shape[2]
    qc = np.concatenate([q, q_rope], axis=-1)
    kc = np.concatenate([k, k_rope], axis=-1)
    scale = 1.0 / ((qc.shape[-1]) ** 0.5)
    work = np.float64 if fp64 else np.float32
    high = np.zeros(q.shape, dtype=work)
    low = np.zeros(q.shape, dtype=dtype)
    for _b, start, ql, kl, qb, kb, vb in _batches(qc, kc, kc[..., :d], q_seqlen, kv_seqlen, block_table):
        qh = np.transpose(qb, (1, 0, 2)).astype(work)              # [heads, ql, 576]
        kh = np.transpose(kb, (1, 2, 0)).astype(work)              # [1, 576, kl]
        vh = np.transpose(vb, (1, 0, 2)).astype(work)              # [1, kl, 512]
        sim = np.matmul(qh, kh) * (float(scale) if fp64 else np.float32(scale))
        e = np.exp(sim - np.max(sim, axis=-1, keepdims=True))
        p = e / np.sum(e, axis=-1, keepdims=True)
        high[start:start + ql] = np.transpose(np.matmul(p, vh), (1, 0, 2))
        if not fp64:
            o = np.matmul(p.astype(dtype).astype(np.float32), vh)
            low[start:start + ql] = np.transpose(o, (1, 0, 2)).astype(dtype)
    return (high, high) if fp64 else (high, low)


def peak_bytes(name: str, *, tokens: int, heads: int, head_dim: int, max_q: int, max_kv: int, kv_heads: int = 1,
               cache_tokens: int = 0, elem_bytes: int = 2) -> int:
    """Bytes an attention example's golden step allocates at most (an estimate from the code above; numpy's own
    scratch not counted), for ``tokens`` query tokens of ``heads`` heads of ``head_dim``, batches of at most
    ``max_q`` queries over ``max_kv`` KV tokens of ``kv_heads`` heads; ``cache_tokens`` the KV cache's tokens
    (MLA concatenates the whole cache with its rope part). ``name``:

    * ``"flash_attention_infer"`` - example 23's step: :func:`flash_attention_infer`, :func:`attention_fp64` and
      the float64 error arrays, with one batch's scores, softmax and gathered K / V alive;
    * ``"mla"`` - example 19's step: :func:`mla` in float32 and in float64 (the concatenated Q and cache of one
      call alive at a time), the float64 error arrays, one batch's scores and gathered K / V.

    Used by the examples to check their memory budget before generating anything."""
    tokens, heads, head_dim, max_q, max_kv, kv_heads, cache_tokens, elem_bytes = (
        int(v) for v in (tokens, heads, head_dim, max_q, max_kv, kv_heads, cache_tokens, elem_bytes))
    out = tokens * heads * head_dim
    scores = heads * max_q * max_kv * 8 * 3  # S, exp(S), P in the widest (float64) pass
    if name == "flash_attention_infer":
        kv = max_kv * kv_heads * head_dim * 2 * (elem_bytes + 8)  # gathered K and V, and their float64 copies
        return out * (elem_bytes + 4 * 8) + scores + kv
    if name == "mla":
        width = head_dim + 64  # the 512 "nope" and 64 rope columns
        concat = (tokens * heads + cache_tokens) * width * elem_bytes
        kv = max_kv * width * 2 * 8
        return concat + out * (4 + elem_bytes + 2 * 8 + 3 * 8) + scores + kv
    raise ArgumentError(f"name: expected 'flash_attention_infer' or 'mla', got {name!r}")


__all__ = ["attention_fp64", "flash_attention_infer", "mla", "peak_bytes"]
