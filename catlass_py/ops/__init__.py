"""Assembled operators, each a plain numpy-in / numpy-out function."""

from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant import grouped_matmul_slice_m_per_token_dequant

__all__ = ["grouped_matmul_slice_m_per_token_dequant"]
