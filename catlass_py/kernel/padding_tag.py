"""CATLASS ``Gemm::Kernel::PaddingTag`` (``gemm/kernel/padding_matmul.hpp``): which padding a GEMM operand gets."""

from __future__ import annotations

import enum


class PaddingTag(enum.Enum):
    """CATLASS ``Gemm::Kernel::PaddingTag``."""

    NO_PADDING = "NO_PADDING"
    PADDING_ND = "PADDING_ND"
    PADDING_BLOCK_ND = "PADDING_BLOCK_ND"
    PADDING_NZ = "PADDING_NZ"


__all__ = ["PaddingTag"]
