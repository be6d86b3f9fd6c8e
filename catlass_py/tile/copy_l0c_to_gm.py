"""L0C -> GM store through the fixpipe (CATLASS ``gemm/tile/atlasa2/copy_l0c_to_gm.hpp``; FIX pipe).

One ``Fixpipe`` instruction event on ``PIPE_FIX`` per store: it reads the (m x n) region of L0C and the n quant
words of the FB (per-channel modes), writes the destination region in GM and carries the ``unitFlag`` it was
called with. The per-tensor scale of the scaled modes (DEQF16, REQ8, QF322B8_PRE) is ``deqScalar``, which
Ascend C's ``Fixpipe`` writes into the ``QUANT_PRE`` register (``SetQuantPreImpl``) right before issuing the
instruction, on the scalar unit; the instruction takes it at issue, so it is not declared as a PIPE_FIX read of
the register (consecutive stores rewrite it with no synchronisation in CATLASS).
"""

from __future__ import annotations


from catlass_py.arch.memory import GlobalTensor, LocalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.arch.spec import get_arch
from catlass_py.errors import ConfigError
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.layout import RowMajor, zN
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.tile._region import (
    gm_check,
    gm_local_copy,
    gm_region_access,
    gm_write,
    local_check,
    local_read,
    region_access,
    span_access,
)
from catlass_py.tile.quant import (
    VECTOR_MODES,
    QuantMode,
    ScaleGranularity,
    fixpipe_convert,
    m1_scale,
    quant_mode_atlas_a2,
    scalar_quant_word,
)


class CopyL0CToGm:
    """CATLASS ``Gemm::Tile::CopyL0CToGm<ArchTag, ElementAccumulator, GmType, ScaleGranularity, ReluEnable>``.

    Reads the (m x n) block from L0C (zN, 16x16 fractals), converts it with the quant mode that CATLASS's
    table picks for (accumulator, destination, granularity), applies ReLU if enabled, and writes exactly
    m x n elements of a row-major destination (a zN destination receives whole fractals, as ``CFG_NZ`` does). PER_TENSOR takes its scale at construction
    (``scale``, the C++ ``Params{scalar}``); PER_CHANNEL takes an FB tensor of uint64 quant words per call.
    """

    def __init__(self, arch, element_accumulator, gm_type: GemmType,
                 scale_granularity: ScaleGranularity = ScaleGranularity.NO_QUANT, relu_enable: bool = False,
                 *, scale: float = 1.0):
        self.arch = get_arch(arch)
        self.element_src = get_dtype(element_accumulator)
        self.gm_type = gm_type
        if gm_type.layout not in (RowMajor, zN):
            raise ConfigError(f"CopyL0CToGm: destination layout must be RowMajor or zN, got {gm_type.layout.__name__}")
        if gm_type.layout is zN and ScaleGranularity(scale_granularity) != ScaleGranularity.NO_QUANT:
            raise ConfigError("CopyL0CToGm: the zN (NZ-format) destination supports NO_QUANT only")
        self.granularity = ScaleGranularity(scale_granularity)
        self.quant_mode = quant_mode_atlas_a2(self.element_src, gm_type.element, self.granularity)
        self.relu = bool(relu_enable)
        self.scale_word = scalar_quant_word(scale)
        self.layout_src = zN
        self.layout_dst = gm_type.layout

    def __call__(self, dst: GlobalTensor, src: LocalTensor, layout_dst, layout_src, unit_flag: int = 0,
                 *, scale: LocalTensor | None = None) -> None:
        """Store region [0:m, 0:n] (``layout_dst``'s rows x cols) of L0C to ``dst``.

        ``scale``: FB tensor of n uint64 quant words (PER_CHANNEL only), one per output column.
        """
        m, n = layout_dst.rows, layout_dst.cols
        if isinstance(layout_dst, zN):
            # NZ output (CFG_NZ) moves whole fractals: mSize/nSize are the destination's padded extents.
            m, n = layout_dst.padded_shape
            layout_dst = layout_dst.get_tile_layout(m, n)
            layout_src = layout_src.get_tile_layout(m, n)
        if self.quant_mode in VECTOR_MODES and scale is None:
            raise ConfigError("CopyL0CToGm: PER_CHANNEL quantisation needs the FB scale tensor")
        if src.computes and self._plain_copy(src, dst) and gm_local_copy(src, layout_src, dst, layout_dst, m, n,
                                                                          to_gm=True):
            pass  # NoQuant between equal dtypes without ReLU moves the accumulator as it is (fixpipe_convert copies)
        elif src.computes:
            acc = local_read(src, layout_src, m, n, "CopyL0CToGm")
            if self.quant_mode in VECTOR_MODES:
                factor = m1_scale(scale.view(n))[None, :]
            else:
                factor = m1_scale(self.scale_word)
            out = fixpipe_convert(acc, self.quant_mode, self.gm_type.element, scale=factor, relu=self.relu)
            gm_write(dst, layout_dst, out, "CopyL0CToGm")
        else:  # timing-only: the same checks, no bytes
            local_check(src, layout_src, m, n, "CopyL0CToGm")
            if self.quant_mode in VECTOR_MODES:
                scale.check(n)
            gm_check(dst, layout_dst, m, n, "CopyL0CToGm", write=True)
        ctx = src.ctx
        if ctx is not None and ctx.bus.instructions:
            reads = ()
            if unit_flag or ctx.bus.local_accesses:  # the pipe model orders a unit-flag Fixpipe by its L0C reads
                reads = region_access(src, layout_src, m, n)
                if self.quant_mode in VECTOR_MODES:
                    reads += (span_access(scale, n),)
            ctx.emit(Pipe.FIX, "Fixpipe", nbytes=self.gm_type.element.nbytes(m * n),
                     gm_writes=gm_region_access(dst, layout_dst, m, n), local_reads=reads, unit_flag=unit_flag,
                     info={"m": m, "n": n, "quant": self.quant_mode.value, "relu": self.relu})

    _scale_word_checked = False

    def _plain_copy(self, src: LocalTensor, dst: GlobalTensor) -> bool:
        """Whether the store converts nothing: NoQuant, no ReLU and the same numpy dtype in L0C and GM (then
        ``fixpipe_convert`` returns a copy of the accumulator and the store is a plain region copy)."""
        if self.quant_mode is not QuantMode.NoQuant or self.relu:
            return False
        npd = src.dtype.numpy
        if src.dtype.packed or dst.dtype.packed or npd != dst.dtype.numpy or npd != self.gm_type.element.numpy:
            return False
        if not self._scale_word_checked:  # the converting path derives the M1 scale on every store
            m1_scale(self.scale_word)
            self._scale_word_checked = True
        return True
