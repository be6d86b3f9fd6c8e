"""Assembled operators, each a plain numpy-in / numpy-out function."""

from typing import TYPE_CHECKING

from catlass_py.lazy import lazy_exports

if TYPE_CHECKING:
    from catlass_py.ops.basic_matmul import basic_matmul as basic_matmul
    from catlass_py.ops.basic_matmul_preload_zn import basic_matmul_preload_zn as basic_matmul_preload_zn
    from catlass_py.ops.basic_matmul_tla import basic_matmul_tla as basic_matmul_tla
    from catlass_py.ops.batched_matmul import batched_matmul as batched_matmul
    from catlass_py.ops.flash_attention_infer import flash_attention_infer as flash_attention_infer
    from catlass_py.ops.grouped_matmul import grouped_matmul as grouped_matmul
    from catlass_py.ops.grouped_matmul_slice_k import grouped_matmul_slice_k as grouped_matmul_slice_k
    from catlass_py.ops.grouped_matmul_slice_k_per_token_dequant import (
        grouped_matmul_slice_k_per_token_dequant as grouped_matmul_slice_k_per_token_dequant,
    )
    from catlass_py.ops.grouped_matmul_slice_m import grouped_matmul_slice_m as grouped_matmul_slice_m
    from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant import (
        grouped_matmul_slice_m_per_token_dequant as grouped_matmul_slice_m_per_token_dequant,
    )
    from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant_moe import (
        grouped_matmul_slice_m_per_token_dequant_moe as grouped_matmul_slice_m_per_token_dequant_moe,
    )
    from catlass_py.ops.matmul_activation import matmul_gelu as matmul_gelu, matmul_silu as matmul_silu
    from catlass_py.ops.matmul_add import matmul_add as matmul_add
    from catlass_py.ops.matmul_bias import matmul_bias as matmul_bias
    from catlass_py.ops.matmul_relu import matmul_relu as matmul_relu
    from catlass_py.ops.mla import mla as mla
    from catlass_py.ops.optimized_matmul import optimized_matmul as optimized_matmul
    from catlass_py.ops.optimized_matmul_tla import optimized_matmul_tla as optimized_matmul_tla
    from catlass_py.ops.quant_matmul import quant_matmul as quant_matmul
    from catlass_py.ops.quant_matmul_full_load_a_tla import (
        quant_matmul_full_load_a_tla as quant_matmul_full_load_a_tla,
    )
    from catlass_py.ops.quant_multi_core_splitk_matmul_tla import (
        quant_multi_core_splitk_matmul_tla as quant_multi_core_splitk_matmul_tla,
    )
    from catlass_py.ops.quant_optimized_matmul_tla import quant_optimized_matmul_tla as quant_optimized_matmul_tla
    from catlass_py.ops.single_core_splitk_matmul import single_core_splitk_matmul as single_core_splitk_matmul
    from catlass_py.ops.sparse_matmul_tla import sparse_matmul_tla as sparse_matmul_tla
    from catlass_py.ops.splitk_matmul import splitk_matmul as splitk_matmul
    from catlass_py.ops.streamk_matmul import streamk_matmul as streamk_matmul
    from catlass_py.ops.strided_batched_matmul_tla import strided_batched_matmul_tla as strided_batched_matmul_tla
    from catlass_py.ops.transpose_quant_batch_matmul import (
        transpose_quant_batch_matmul as transpose_quant_batch_matmul,
    )

if not TYPE_CHECKING:  # each name imports its module on first use
    __getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
