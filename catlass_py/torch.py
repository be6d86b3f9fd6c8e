"""The operators as PyTorch custom ops (``torch.library``, CPU): a model's layer calls the simulated kernel as
``torch.ops.catlass_py.<name>(...)``, under ``torch.compile`` and ``torch.export`` too (each op has a fake
implementation that gives the output's shape and dtype).

Importing this module registers every op (it needs torch: ``pip install 'catlass-py[torch]'``)::

    import torch
    import catlass_py.torch  # noqa: F401  (registers torch.ops.catlass_py.*)

    d = torch.ops.catlass_py.grouped_matmul_slice_m_per_token_dequant(x, w, group_list, scale, per_token_scale)

The names and leading arguments mirror CATLASS's own torch extension, ``torch_catlass``
(``tests/optest/torch_catlass/ops/*.py`` in https://gitcode.com/cann/catlass, registered there as
``torch.ops.catlass.<name>``): ``mat1``, ``mat2``, then the op's other tensors (``groupList``, ``scale``,
``perTokenScale``, ``x``, ``bias``), then ``outDType`` (a ``torch.dtype``; None: the op's default) and, where
the simulated kernel supports both storage orders, ``transA`` / ``transB`` (``mat1`` given as ``(K, M)`` /
``mat2`` as ``(N, K)``, as CATLASS reads them). CATLASS's ``useNzA``/``useNzB``/``formatA``/``formatB`` (NZ
input layouts) are not offered. ``coreNum`` (last) is the number of simulated AI cores. ``grouped_matmul``
follows ``torch_catlass.grouped_matmul`` (example 08 with A and B shared by the groups, the groups slicing K:
output ``(G, M, N)``); ``transpose_quant_batch_matmul`` (pypto-gym, no CATLASS counterpart) takes
``x1, x2, x1Scale, x2Scale``. The attention ops follow CATLASS's ``FlashAttentionInferOp`` / ``MlaOp``
(``tests/optest/src/include/template/flash_attention.h`` / ``mla.h``, called as ``torch_catlass.
flash_attention_infer`` / ``torch_catlass.mla`` by its ``test_23`` / ``test_19``): ``query``, the caches,
``actual_seq_lengths``, ``actual_seq_lengths_kv``, (``atten_mask``,) ``block_table``, (``input_layout``,)
``num_heads``, ``num_key_value_heads``, ``sparse_mode`` - their own snake-case names there - then ``coreNum``.

The ops are forward-only (no autograd formula), like CATLASS's: use them for inference, or under
``torch.no_grad()``. Inputs must be CPU tensors; outputs are new CPU tensors. The same functions are
importable from here for direct calls (:func:`grouped_matmul_slice_m_per_token_dequant`, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

try:
    import torch
    from torch import Tensor
except ModuleNotFoundError as exc:  # what to install, rather than a bare "No module named 'torch'"
    if exc.name != "torch":
        raise
    raise ModuleNotFoundError("catlass_py.torch needs PyTorch: pip install 'catlass-py[torch]'", name="torch") from None

from catlass_py import ops

#: the torch.library namespace: ``torch.ops.catlass_py.<name>``
NAMESPACE = "catlass_py"
#: the default core count of every op (an Atlas A2's 24 AI cores)
DEFAULT_CORES = 24

_INT_OUT = {torch.int8: torch.int32}


def _out(dtype: torch.dtype | None) -> str | None:
    return None if dtype is None else str(dtype).removeprefix("torch.")


def _default_out(mat1: Tensor, out_dtype: torch.dtype | None) -> torch.dtype:
    return out_dtype if out_dtype is not None else _INT_OUT.get(mat1.dtype, mat1.dtype)


def _a(mat1: Tensor, trans: bool) -> tuple[Tensor, str]:
    """CATLASS's transA: ``mat1`` holds A^T row-major, i.e. A column-major."""
    return (mat1.mT, "column") if trans else (mat1, "row")


def _mk(mat1: Tensor, trans_a: bool) -> tuple[int, int]:
    return (mat1.shape[-1], mat1.shape[-2]) if trans_a else (mat1.shape[-2], mat1.shape[-1])


def _n(mat2: Tensor, trans_b: bool) -> int:
    return mat2.shape[-2] if trans_b else mat2.shape[-1]


_REGISTERED: dict[str, Any] = {}


def _register(fn: Callable[..., Any], fake: Callable[..., Any]) -> Any:
    op = torch.library.custom_op(f"{NAMESPACE}::{fn.__name__}", fn, mutates_args=(), device_types="cpu")
    op.register_fake(fake)
    _REGISTERED[fn.__name__] = op
    return op


# -- plain matmuls: mat1 (M, K) @ mat2 (K, N) -------------------------------------------------------------------


def _plain(name: str, op: Callable[..., Any]) -> Any:
    def impl(mat1: Tensor, mat2: Tensor, outDType: torch.dtype | None = None, transA: bool = False,  # noqa: N803
             transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
        a, la = _a(mat1, transA)
        b, lb = _a(mat2, transB)
        kw: dict[str, Any] = {"out_dtype": _out(outDType)} if outDType is not None else {}
        return op(a, b, layout_a=la, layout_b=lb, core_num=coreNum, **kw)

    def fake(mat1: Tensor, mat2: Tensor, outDType: torch.dtype | None = None, transA: bool = False,  # noqa: N803
             transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
        m, _ = _mk(mat1, transA)
        return mat1.new_empty((m, _n(mat2, transB)), dtype=_default_out(mat1, outDType))

    impl.__name__ = fake.__name__ = name
    return _register(impl, fake)


basic_matmul = _plain("basic_matmul", ops.basic_matmul)
matmul_relu = _plain("matmul_relu", ops.matmul_relu)
matmul_gelu = _plain("matmul_gelu", ops.matmul_gelu)
matmul_silu = _plain("matmul_silu", ops.matmul_silu)
splitk_matmul = _plain("splitk_matmul", ops.splitk_matmul)
single_core_splitk_matmul = _plain("single_core_splitk_matmul", ops.single_core_splitk_matmul)


def _same_out(name: str, mat1: Tensor, out_dtype: torch.dtype | None) -> None:
    if out_dtype is not None and out_dtype != mat1.dtype:
        raise ValueError(f"outDType: {name} returns the input dtype ({mat1.dtype}), got {out_dtype}")


def _input_dtype_matmul(name: str, op: Callable[..., Any]) -> Any:
    """A plain matmul whose result keeps the input dtype: ``outDType`` may only name it."""

    def impl(mat1: Tensor, mat2: Tensor, outDType: torch.dtype | None = None, transA: bool = False,  # noqa: N803
             transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
        _same_out(name, mat1, outDType)
        a, la = _a(mat1, transA)
        b, lb = _a(mat2, transB)
        return op(a, b, layout_a=la, layout_b=lb, core_num=coreNum)

    def fake(mat1: Tensor, mat2: Tensor, outDType: torch.dtype | None = None, transA: bool = False,  # noqa: N803
             transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
        return mat1.new_empty((_mk(mat1, transA)[0], _n(mat2, transB)))

    impl.__name__ = fake.__name__ = name
    return _register(impl, fake)


streamk_matmul = _input_dtype_matmul("streamk_matmul", ops.streamk_matmul)


def _batched(mat1: Tensor, mat2: Tensor, outDType: torch.dtype | None = None, transA: bool = False,  # noqa: N803
             transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
    a, la = _a(mat1, transA)
    b, lb = _a(mat2, transB)
    return ops.batched_matmul(a, b, layout_a=la, layout_b=lb, out_dtype=_out(outDType), core_num=coreNum)


def _batched_fake(mat1: Tensor, mat2: Tensor, outDType: torch.dtype | None = None, transA: bool = False,  # noqa: N803
                  transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
    return mat1.new_empty((mat1.shape[0], _mk(mat1, transA)[0], _n(mat2, transB)), dtype=_default_out(mat1, outDType))


_batched.__name__ = _batched_fake.__name__ = "batched_matmul"
batched_matmul = _register(_batched, _batched_fake)


# -- matmuls with a second source: x (M, N) or bias (N) ---------------------------------------------------------


def _matmul_add(mat1: Tensor, mat2: Tensor, x: Tensor, outDType: torch.dtype | None = None,  # noqa: N803
                transA: bool = False, transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
    if outDType is not None and outDType != x.dtype:
        raise ValueError(f"outDType: matmul_add returns the inputs' dtype ({x.dtype}), got {outDType}")
    a, la = _a(mat1, transA)
    b, lb = _a(mat2, transB)
    return ops.matmul_add(a, b, x, layout_a=la, layout_b=lb, core_num=coreNum)


def _matmul_add_fake(mat1: Tensor, mat2: Tensor, x: Tensor, outDType: torch.dtype | None = None,  # noqa: N803
                     transA: bool = False, transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
    return x.new_empty(x.shape)


_matmul_add.__name__ = _matmul_add_fake.__name__ = "matmul_add"
matmul_add = _register(_matmul_add, _matmul_add_fake)


def _matmul_bias(mat1: Tensor, mat2: Tensor, bias: Tensor, outDType: torch.dtype | None = None,  # noqa: N803
                 transA: bool = False, transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
    a, la = _a(mat1, transA)
    b, lb = _a(mat2, transB)
    return ops.matmul_bias(a, b, bias, layout_a=la, layout_b=lb, out_dtype=_out(outDType), core_num=coreNum)


def _matmul_bias_fake(mat1: Tensor, mat2: Tensor, bias: Tensor, outDType: torch.dtype | None = None,  # noqa: N803
                      transA: bool = False, transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
    return mat1.new_empty((_mk(mat1, transA)[0], _n(mat2, transB)), dtype=_default_out(mat1, outDType))


_matmul_bias.__name__ = _matmul_bias_fake.__name__ = "matmul_bias"
matmul_bias = _register(_matmul_bias, _matmul_bias_fake)


# -- grouped matmuls -------------------------------------------------------------------------------------------


def _gmm_slice_m(mat1: Tensor, mat2: Tensor, groupList: Tensor, outDType: torch.dtype | None = None,  # noqa: N803
                 transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
    b, lb = _a(mat2, transB)
    return ops.grouped_matmul_slice_m(mat1, b, groupList, layout_b=lb, out_dtype=_out(outDType), core_num=coreNum)


def _gmm_slice_m_fake(mat1: Tensor, mat2: Tensor, groupList: Tensor, outDType: torch.dtype | None = None,  # noqa: N803
                      transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
    return mat1.new_empty((mat1.shape[0], _n(mat2, transB)), dtype=_default_out(mat1, outDType))


_gmm_slice_m.__name__ = _gmm_slice_m_fake.__name__ = "grouped_matmul_slice_m"
grouped_matmul_slice_m = _register(_gmm_slice_m, _gmm_slice_m_fake)


def _gmm_slice_k(mat1: Tensor, mat2: Tensor, groupList: Tensor, outDType: torch.dtype | None = None,  # noqa: N803
                 coreNum: int = DEFAULT_CORES) -> Tensor:
    return ops.grouped_matmul_slice_k(mat1, mat2, groupList, out_dtype=_out(outDType), core_num=coreNum)


def _gmm_slice_k_fake(mat1: Tensor, mat2: Tensor, groupList: Tensor, outDType: torch.dtype | None = None,  # noqa: N803
                      coreNum: int = DEFAULT_CORES) -> Tensor:
    return mat1.new_empty((groupList.shape[0], mat1.shape[0], mat2.shape[1]), dtype=_default_out(mat1, outDType))


_gmm_slice_k.__name__ = _gmm_slice_k_fake.__name__ = "grouped_matmul_slice_k"
grouped_matmul_slice_k = _register(_gmm_slice_k, _gmm_slice_k_fake)


def _gmm(mat1: Tensor, mat2: Tensor, groupList: Tensor, outDType: torch.dtype | None = None,  # noqa: N803
         transA: bool = False, transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
    a, la = _a(mat1, transA)
    b, lb = _a(mat2, transB)
    bounds = [0, *(int(v) for v in groupList.tolist())]
    a_list = [a[:, k0:k1] for k0, k1 in zip(bounds, bounds[1:])]
    b_list = [b[k0:k1, :] for k0, k1 in zip(bounds, bounds[1:])]
    out = ops.grouped_matmul(a_list, b_list, layout_a=la, layout_b=lb, out_dtype=_out(outDType), core_num=coreNum)
    return torch.stack(out) if out else mat1.new_empty((0, a.shape[0], b.shape[1]), dtype=_default_out(mat1, outDType))


def _gmm_fake(mat1: Tensor, mat2: Tensor, groupList: Tensor, outDType: torch.dtype | None = None,  # noqa: N803
              transA: bool = False, transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
    return mat1.new_empty((groupList.shape[0], _mk(mat1, transA)[0], _n(mat2, transB)),
                          dtype=_default_out(mat1, outDType))


_gmm.__name__ = _gmm_fake.__name__ = "grouped_matmul"
grouped_matmul = _register(_gmm, _gmm_fake)


# -- quantised (int8) matmuls with dequant scales ----------------------------------------------------------------


def _ptd(mat1: Tensor, mat2: Tensor, groupList: Tensor, scale: Tensor, perTokenScale: Tensor,  # noqa: N803
         coreNum: int = DEFAULT_CORES) -> Tensor:
    return ops.grouped_matmul_slice_m_per_token_dequant(mat1, mat2, groupList, scale, perTokenScale, core_num=coreNum)


def _ptd_fake(mat1: Tensor, mat2: Tensor, groupList: Tensor, scale: Tensor, perTokenScale: Tensor,  # noqa: N803
              coreNum: int = DEFAULT_CORES) -> Tensor:
    return mat1.new_empty((mat1.shape[0], mat2.shape[2]), dtype=scale.dtype)


_ptd.__name__ = _ptd_fake.__name__ = "grouped_matmul_slice_m_per_token_dequant"
grouped_matmul_slice_m_per_token_dequant = _register(_ptd, _ptd_fake)


def _ptd_moe(mat1: Tensor, mat2: Tensor, groupList: Tensor, scale: Tensor, perTokenScale: Tensor,  # noqa: N803
             outDType: torch.dtype | None = None, coreNum: int = DEFAULT_CORES) -> Tensor:
    return ops.grouped_matmul_slice_m_per_token_dequant_moe(mat1, mat2, groupList, scale, perTokenScale,
                                                            out_dtype=_out(outDType), core_num=coreNum)


def _ptd_moe_fake(mat1: Tensor, mat2: Tensor, groupList: Tensor, scale: Tensor, perTokenScale: Tensor,  # noqa: N803
                  outDType: torch.dtype | None = None, coreNum: int = DEFAULT_CORES) -> Tensor:
    out = outDType or (torch.float16 if scale.dtype == torch.float32 else scale.dtype)
    return mat1.new_empty((mat1.shape[0], mat2.shape[2]), dtype=out)


_ptd_moe.__name__ = _ptd_moe_fake.__name__ = "grouped_matmul_slice_m_per_token_dequant_moe"
grouped_matmul_slice_m_per_token_dequant_moe = _register(_ptd_moe, _ptd_moe_fake)


def _ptd_k(mat1: Tensor, mat2: Tensor, groupList: Tensor, scale: Tensor, perTokenScale: Tensor,  # noqa: N803
           coreNum: int = DEFAULT_CORES) -> Tensor:
    return ops.grouped_matmul_slice_k_per_token_dequant(mat1, mat2, groupList, scale, perTokenScale, core_num=coreNum)


def _ptd_k_fake(mat1: Tensor, mat2: Tensor, groupList: Tensor, scale: Tensor, perTokenScale: Tensor,  # noqa: N803
                coreNum: int = DEFAULT_CORES) -> Tensor:
    return mat1.new_empty((groupList.shape[0], mat1.shape[0], mat2.shape[1]), dtype=scale.dtype)


_ptd_k.__name__ = _ptd_k_fake.__name__ = "grouped_matmul_slice_k_per_token_dequant"
grouped_matmul_slice_k_per_token_dequant = _register(_ptd_k, _ptd_k_fake)


def _quant(mat1: Tensor, mat2: Tensor, scale: Tensor, perTokenScale: Tensor, transA: bool = False,  # noqa: N803
           transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
    a, la = _a(mat1, transA)
    b, lb = _a(mat2, transB)
    return ops.quant_matmul(a, b, scale, perTokenScale, layout_a=la, layout_b=lb, core_num=coreNum)


def _quant_fake(mat1: Tensor, mat2: Tensor, scale: Tensor, perTokenScale: Tensor, transA: bool = False,  # noqa: N803
                transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
    return mat1.new_empty((_mk(mat1, transA)[0], _n(mat2, transB)), dtype=scale.dtype)


_quant.__name__ = _quant_fake.__name__ = "quant_matmul"
quant_matmul = _register(_quant, _quant_fake)


def _tqbmm(x1: Tensor, x2: Tensor, x1Scale: Tensor, x2Scale: Tensor, outDType: torch.dtype | None = None,  # noqa: N803
           transB: bool = False, coreNum: int = 32) -> Tensor:
    return ops.transpose_quant_batch_matmul(x1, x2, x1Scale, x2Scale, perm_x2=(0, 2, 1) if transB else (0, 1, 2),
                                            out_dtype=_out(outDType) or "bfloat16", core_num=coreNum)


def _tqbmm_fake(x1: Tensor, x2: Tensor, x1Scale: Tensor, x2Scale: Tensor, outDType: torch.dtype | None = None,  # noqa: N803
                transB: bool = False, coreNum: int = 32) -> Tensor:
    n = x2.shape[1] if transB else x2.shape[2]
    return x1.new_empty((x1.shape[0], x1.shape[1], n), dtype=outDType or torch.bfloat16)


_tqbmm.__name__ = _tqbmm_fake.__name__ = "transpose_quant_batch_matmul"
transpose_quant_batch_matmul = _register(_tqbmm, _tqbmm_fake)


# -- examples 06 and 21: CATLASS's MatmulLike (mat1, mat2, outDType, transA, transB) ----------------------------


optimized_matmul = _input_dtype_matmul("optimized_matmul", ops.optimized_matmul)


def _preload_zn(mat1: Tensor, mat2: Tensor, outDType: torch.dtype | None = None, transB: bool = False,  # noqa: N803
                coreNum: int = DEFAULT_CORES) -> Tensor:
    """Example 21 (``torch_catlass.basic_matmul_preload_zN``): B is stored by the simulator in the zN ("NZ")
    format, or nZ with ``transB`` (mat2 given as (N, K): "B not transposed uses zN, transposed nZ"). The kernel
    reads A row-major only, so there is no ``transA``."""
    _same_out("basic_matmul_preload_zN", mat1, outDType)
    b = mat2.mT if transB else mat2
    return ops.basic_matmul_preload_zn(mat1, b, layout_b="nZ" if transB else "zN", core_num=coreNum)


def _preload_zn_fake(mat1: Tensor, mat2: Tensor, outDType: torch.dtype | None = None,  # noqa: N803
                     transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
    return mat1.new_empty((mat1.shape[0], _n(mat2, transB)))


_preload_zn.__name__ = _preload_zn_fake.__name__ = "basic_matmul_preload_zN"
basic_matmul_preload_zN = _register(_preload_zn, _preload_zn_fake)  # noqa: N816 - CATLASS's name


# -- attention: examples 23 and 19 ------------------------------------------------------------------------------


def _fa(query: Tensor, key: Tensor, value: Tensor, actual_seq_lengths: Tensor, actual_seq_lengths_kv: Tensor,
        atten_mask: Tensor | None = None, block_table: Tensor | None = None, input_layout: str = "TND",
        num_heads: int | None = None, num_key_value_heads: int | None = None, sparse_mode: int = 0,
        coreNum: int = DEFAULT_CORES) -> Tensor:  # noqa: N803
    """Example 23 (``torch_catlass.flash_attention_infer``): ``query`` (T, N, D), ``key`` / ``value`` a paged cache
    (blocks, 128, kvHeads, D) with ``block_table`` or a contiguous (T_kv, kvHeads, D) one; ``sparse_mode`` 0 (no
    mask) or 1 (causal: ``atten_mask`` the 1024 x 1024 0/1 mask, CATLASS's ``triu`` one when None)."""
    if input_layout != "TND":
        raise ValueError(f"input_layout: flash_attention_infer supports only 'TND', got {input_layout!r}")
    if sparse_mode not in (0, 1):
        raise ValueError(f"sparse_mode: expected 0 (no mask) or 1 (causal), got {sparse_mode}")
    mask: Any = None if sparse_mode == 0 else ("causal" if atten_mask is None else atten_mask)
    return ops.flash_attention_infer(query, key, value, actual_seq_lengths=actual_seq_lengths,
                                     actual_seq_lengths_kv=actual_seq_lengths_kv, block_table=block_table, mask=mask,
                                     num_heads=num_heads, num_kv_heads=num_key_value_heads, core_num=coreNum)


def _fa_fake(query: Tensor, key: Tensor, value: Tensor, actual_seq_lengths: Tensor, actual_seq_lengths_kv: Tensor,
             atten_mask: Tensor | None = None, block_table: Tensor | None = None, input_layout: str = "TND",
             num_heads: int | None = None, num_key_value_heads: int | None = None, sparse_mode: int = 0,
             coreNum: int = DEFAULT_CORES) -> Tensor:  # noqa: N803
    return query.new_empty(query.shape)


_fa.__name__ = _fa_fake.__name__ = "flash_attention_infer"
flash_attention_infer = _register(_fa, _fa_fake)


def _mla(query_nope: Tensor, query_rope: Tensor, key_cache: Tensor, key_rope_cache: Tensor,
         actual_seq_lengths: Tensor, actual_seq_lengths_kv: Tensor, block_table: Tensor, num_heads: int,
         num_key_value_heads: int = 1, sparse_mode: int = 0, coreNum: int = DEFAULT_CORES) -> Tensor:  # noqa: N803
    """Example 19 (``torch_catlass.mla``): ``query_nope`` (T, N, 512), ``query_rope`` (T, N, 64), the paged
    caches (blocks, 128, 1, 512) and (blocks, 128, 1, 64) through ``block_table``; one KV head and no mask
    (``sparse_mode`` 0) - the generic kernel's case."""
    if num_key_value_heads != 1:
        raise ValueError(f"num_key_value_heads: the MLA kernel has one (latent) KV head, got {num_key_value_heads}")
    if sparse_mode != 0:
        raise ValueError(f"sparse_mode: the MLA decode kernel takes no mask (0), got {sparse_mode}")
    if query_nope.shape[1] != num_heads:
        raise ValueError(f"num_heads: {num_heads} does not match query_nope's {query_nope.shape[1]} heads")
    return ops.mla(query_nope, query_rope, key_cache, key_rope_cache, block_table,
                   actual_seq_lengths=actual_seq_lengths, actual_seq_lengths_kv=actual_seq_lengths_kv, core_num=coreNum)


def _mla_fake(query_nope: Tensor, query_rope: Tensor, key_cache: Tensor, key_rope_cache: Tensor,
              actual_seq_lengths: Tensor, actual_seq_lengths_kv: Tensor, block_table: Tensor, num_heads: int,
              num_key_value_heads: int = 1, sparse_mode: int = 0, coreNum: int = DEFAULT_CORES) -> Tensor:  # noqa: N803
    return query_nope.new_empty(query_nope.shape)


_mla.__name__ = _mla_fake.__name__ = "mla"
mla = _register(_mla, _mla_fake)


# -- the TLA examples (13, 14, 41, 42, 44, 45, 52): torch_catlass's *_tla ops, the same argument names ----------


basic_matmul_tla = _plain("basic_matmul_tla", ops.basic_matmul_tla)


optimized_matmul_tla = _input_dtype_matmul("optimized_matmul_tla", ops.optimized_matmul_tla)


def _strided(mat1: Tensor, mat2: Tensor, outDType: torch.dtype | None = None, transA: bool = False,  # noqa: N803
             transB: bool = False, coreNum: int = DEFAULT_CORES) -> Tensor:
    a, la = _a(mat1, transA)
    b, lb = _a(mat2, transB)
    return ops.strided_batched_matmul_tla(a, b, layout_a=la, layout_b=lb, out_dtype=_out(outDType), core_num=coreNum)


_strided.__name__ = "strided_batched_matmul_tla"
strided_batched_matmul_tla = _register(_strided, _batched_fake)


def _quant_tla(name: str, op: Callable[..., Any]) -> Any:
    """``D = float(mat1 @ mat2) * scale[col] * perTokenScale[row]`` in ``outDType`` (bf16 by default)."""

    def impl(mat1: Tensor, mat2: Tensor, scale: Tensor, perTokenScale: Tensor,  # noqa: N803
             outDType: torch.dtype | None = None, transA: bool = False, transB: bool = False,
             coreNum: int = DEFAULT_CORES) -> Tensor:
        a, la = _a(mat1, transA)
        b, lb = _a(mat2, transB)
        return op(a, b, scale, perTokenScale, layout_a=la, layout_b=lb, out_dtype=_out(outDType) or "bfloat16",
                  core_num=coreNum)

    def fake(mat1: Tensor, mat2: Tensor, scale: Tensor, perTokenScale: Tensor,  # noqa: N803
             outDType: torch.dtype | None = None, transA: bool = False, transB: bool = False,
             coreNum: int = DEFAULT_CORES) -> Tensor:
        return mat1.new_empty((_mk(mat1, transA)[0], _n(mat2, transB)), dtype=outDType or torch.bfloat16)

    impl.__name__ = fake.__name__ = name
    return _register(impl, fake)


quant_optimized_matmul_tla = _quant_tla("quant_optimized_matmul_tla", ops.quant_optimized_matmul_tla)
quant_matmul_full_loadA_tla = _quant_tla("quant_matmul_full_loadA_tla",  # noqa: N816 - CATLASS's name
                                         ops.quant_matmul_full_load_a_tla)
quant_multi_core_splitk_matmul_tla = _quant_tla("quant_multi_core_splitk_matmul_tla",
                                                ops.quant_multi_core_splitk_matmul_tla)


def _sparse(mat1: Tensor, mat2: Tensor, coreNum: int = DEFAULT_CORES) -> Tensor:  # noqa: N803
    """int8 ``mat1 @ mat2`` with ``mat2`` 4:2 structured-sparse along K (compressed on the host), int32 out."""
    return ops.sparse_matmul_tla(mat1, mat2, core_num=coreNum)


def _sparse_fake(mat1: Tensor, mat2: Tensor, coreNum: int = DEFAULT_CORES) -> Tensor:  # noqa: N803
    return mat1.new_empty((mat1.shape[0], mat2.shape[1]), dtype=torch.int32)


_sparse.__name__ = _sparse_fake.__name__ = "sparse_matmul_tla"
sparse_matmul_tla = _register(_sparse, _sparse_fake)


def registered() -> dict[str, Any]:
    """The registered custom ops by name (``torch.ops.catlass_py.<name>`` for each)."""
    return dict(_REGISTERED)


__all__ = [
    "DEFAULT_CORES",
    "NAMESPACE",
    "basic_matmul",
    "basic_matmul_preload_zN",
    "basic_matmul_tla",
    "batched_matmul",
    "flash_attention_infer",
    "grouped_matmul",
    "grouped_matmul_slice_k",
    "grouped_matmul_slice_k_per_token_dequant",
    "grouped_matmul_slice_m",
    "grouped_matmul_slice_m_per_token_dequant",
    "grouped_matmul_slice_m_per_token_dequant_moe",
    "matmul_add",
    "matmul_bias",
    "matmul_gelu",
    "matmul_relu",
    "matmul_silu",
    "mla",
    "optimized_matmul",
    "optimized_matmul_tla",
    "quant_matmul",
    "quant_matmul_full_loadA_tla",
    "quant_multi_core_splitk_matmul_tla",
    "quant_optimized_matmul_tla",
    "registered",
    "single_core_splitk_matmul",
    "sparse_matmul_tla",
    "splitk_matmul",
    "streamk_matmul",
    "strided_batched_matmul_tla",
    "transpose_quant_batch_matmul",
]
