"""CATLASS ``PaddingBuilder`` (``gemm/kernel/padding_matmul.hpp``): the padding object a :class:`PaddingTag` selects.

The padding objects themselves live in their own modules: ``PaddingMatrixBlockND`` (``PADDING_BLOCK_ND``,
examples 06/26) in :mod:`catlass_py.kernel.padding_block_nd`; ``PaddingMatrixNZ`` (``PADDING_NZ``) and
``RemovePaddingNDAndCast`` (example 34) in :mod:`catlass_py.kernel.padding_nz`; the tag in
:mod:`catlass_py.kernel.padding_tag`.
"""

from __future__ import annotations

from catlass_py.errors import ConfigError
from catlass_py.kernel.padding_block_nd import PaddingMatrixBlockND
from catlass_py.kernel.padding_nz import PaddingMatrixNZ
from catlass_py.kernel.padding_tag import PaddingTag


class PaddingBuilder:
    """CATLASS ``PaddingBuilder<PaddingTag, ArchTag, Element, LayoutIn, COMPUTE_LENGTH>``: the padding object a
    tag selects (``padding``; None for ``NO_PADDING``) and the operand layout after padding
    (``layout_after_padding``: the input layout, ``PaddingRowMajor``/``PaddingColumnMajor`` for
    ``PADDING_BLOCK_ND``, ``zN``/``nZ`` for ``PADDING_NZ``). ``compute_length`` 0 picks CATLASS's default
    (96 KiB of UB for block-ND, 48 KiB for NZ). ``PADDING_ND`` is not implemented (:class:`ConfigError`)."""

    def __init__(self, tag: PaddingTag, arch, element, layout_in: type, compute_length: int = 0):
        tag = PaddingTag(tag)
        self.tag = tag
        if tag is PaddingTag.NO_PADDING:
            self.padding = None
            self.layout_after_padding = layout_in
        elif tag is PaddingTag.PADDING_BLOCK_ND:
            self.padding = PaddingMatrixBlockND(arch, element, layout_in, compute_length or None)
            self.layout_after_padding = self.padding.layout_out
        elif tag is PaddingTag.PADDING_NZ:
            self.padding = PaddingMatrixNZ(arch, element, layout_in, compute_length or None)
            self.layout_after_padding = self.padding.layout_out
        else:
            raise ConfigError(f"PaddingBuilder: {tag.value} is not implemented in catlass_py")


__all__ = ["PaddingBuilder"]
