"""The bias path of the cube core: GM -> L1 (MTE2) and L1 -> BT, the bias table (MTE1).

Counterparts: CATLASS ``Gemm::Tile::CopyGmToL1<ArchTag, GemmType<E, VectorLayout, GM>, GemmType<E, VectorLayout,
A1>>`` (``gemm/tile/atlasa2/copy_gm_to_l1.hpp``), ``Gemm::Tile::CopyL1ToBT<ArchTag, GemmType<E, VectorLayout, A1>,
GemmType<Acc, VectorLayout, C2>>`` (``copy_l1_to_bt.hpp``) and ``helper::L1BiasTypeSelector``. A bias is one row
of ``n`` values that :class:`~catlass_py.tile.mmad.TileMmad` broadcasts down the rows to initialise L0C.

Instruction events: the GM -> L1 copy on ``PIPE_MTE2`` reads the GM elements it fetches and writes the whole
32-byte blocks it fills in L1; the L1 -> BT copy on ``PIPE_MTE1`` (Ascend C ``DataCopy`` A1 -> C2; CATLASS's
``MmadAtlasA2PingpongBias`` block orders it with ``M_MTE1`` / ``MTE2_MTE1`` events) reads its whole 64-byte
units of L1 and writes them, widened, to BT.
"""

from __future__ import annotations

import numpy as np

from catlass_py.arch.memory import GlobalTensor, LocalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.arch.spec import get_arch
from catlass_py.errors import ConfigError
from catlass_py.gemm.coord import ceil_div
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.layout import VectorLayout
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.tile._region import span_access

BYTE_PER_C2 = 64  # CATLASS BYTE_PER_C2: the unit of an L1 -> BT DataCopy

# Bias element -> accumulator it may initialise. CATLASS rejects bf16 bias (static_assert in the bias block).
_BIAS_FOR_ACC = {"float32": ("float16", "float32"), "int32": ("int32",)}


def l1_bias_types(bias_type: GemmType, element_accumulator) -> tuple[GemmType, GemmType, GemmType]:
    """CATLASS ``helper::L1BiasTypeSelector<GemmType<E, VectorLayout>, Acc>``: the bias's (GM, L1, BT) types."""
    if bias_type.layout is not VectorLayout:
        raise ConfigError(f"bias: the bias operand must use VectorLayout, got {bias_type.layout.__name__}")
    acc = get_dtype(element_accumulator)
    allowed = _BIAS_FOR_ACC.get(acc.name, ())
    if bias_type.element.name not in allowed:
        raise ConfigError(
            f"bias: a {bias_type.element} bias cannot initialise a {acc} accumulator (supported: "
            f"{', '.join(allowed) or 'none'}; CATLASS does not support bf16 bias)"
        )
    return (GemmType(bias_type.element, VectorLayout, "GM"), GemmType(bias_type.element, VectorLayout, "L1"),
            GemmType(acc, VectorLayout, "BT"))


class CopyGmToL1Bias:
    """CATLASS ``CopyGmToL1`` VectorLayout -> VectorLayout (bias/scale vectors into L1), one ``DataCopy``.

    It moves ``floor(layout_dst.size / C0)`` whole 32-byte blocks, i.e. the *destination* length (the static
    L1 bias tile), whatever the source layout says: a block at the n tail reads past the actual columns, and
    elements past the end of the GM allocation arrive as the poison pattern 0xFF (harmless: those columns of
    C are never stored).
    """

    op_name = "CopyGmToL1Bias"

    def __init__(self, arch, gm_type: GemmType, l1_type: GemmType | None = None):
        self.arch = get_arch(arch)
        if gm_type.layout is not VectorLayout:
            raise ConfigError(f"{self.op_name}: the GM bias must use VectorLayout, got {gm_type.layout.__name__}")
        self.gm_type = gm_type
        self.l1_type = l1_type if l1_type is not None else GemmType(gm_type.element, VectorLayout, "L1")
        if self.l1_type.element != gm_type.element:
            raise ConfigError(f"{self.op_name}: GM and L1 elements differ ({gm_type.element} vs {self.l1_type.element})")
        self.layout_src = VectorLayout
        self.layout_dst = VectorLayout
        self.c0 = gm_type.element.c0

    def __call__(self, dst: LocalTensor, src: GlobalTensor, layout_dst: VectorLayout, layout_src: VectorLayout) -> None:
        if not isinstance(layout_dst, VectorLayout) or not isinstance(layout_src, VectorLayout):
            raise ConfigError(f"{self.op_name}: both layouts must be VectorLayout, got {layout_dst!r}, {layout_src!r}")
        count = layout_dst.shape[0] // self.c0 * self.c0
        if count == 0:
            return
        take = min(count, src.size)  # GM elements from the pointer to the end of the allocation
        if dst.computes:
            data = dst.view(count)
            data[:take] = src.view()[:take]
            if take < count:
                data[take:].view(np.uint8)[:] = 0xFF
        else:  # timing-only: the same checks, no bytes
            dst.check(count)
        ctx = dst.ctx
        if ctx is not None and ctx.bus.instructions:
            ctx.emit(Pipe.MTE2, self.op_name, nbytes=self.gm_type.element.nbytes(count),
                     gm_reads=(src.access(0, take),), local_writes=(span_access(dst, count),),
                     info={"count": count})


class CopyL1ToBT:
    """CATLASS ``Gemm::Tile::CopyL1ToBT`` (A1 -> C2): one ``DataCopy`` of ``ceil(n / (64 B / sizeof(E)))`` 64-byte
    units from L1 into the bias table, widening the elements to the accumulator type on the way (fp16 -> fp32
    is exact). ``n`` is ``layout_dst``'s size; whole units move, so up to one unit past ``n`` is copied too."""

    op_name = "CopyL1ToBT"

    def __init__(self, arch, l1_type: GemmType, bt_type: GemmType):
        self.arch = get_arch(arch)
        for name, t in (("L1", l1_type), ("BT", bt_type)):
            if t.layout is not VectorLayout:
                raise ConfigError(f"{self.op_name}: the {name} bias must use VectorLayout, got {t.layout.__name__}")
        self.l1_type, self.bt_type = l1_type, bt_type
        self.layout_src = VectorLayout
        self.layout_dst = VectorLayout
        self.per_unit = BYTE_PER_C2 * 8 // l1_type.element.bits

    def __call__(self, dst: LocalTensor, src: LocalTensor, layout_dst: VectorLayout, layout_src: VectorLayout) -> None:
        if dst.position != "BT":
            raise ConfigError(f"{self.op_name}: destination must be the BT buffer, got {dst.position}")
        count = ceil_div(layout_dst.shape[0], self.per_unit) * self.per_unit
        if count == 0:
            return
        if dst.computes:
            dst.view(count)[:] = src.view(count).astype(self.bt_type.element.numpy)
        else:  # timing-only: the same checks, no bytes
            src.check(count)
            dst.check(count)
        ctx = dst.ctx
        if ctx is not None and ctx.bus.instructions:
            ctx.emit(Pipe.MTE1, self.op_name, nbytes=self.l1_type.element.nbytes(count),
                     local_reads=(span_access(src, count),), local_writes=(span_access(dst, count),),
                     info={"count": count})


__all__ = ["BYTE_PER_C2", "CopyGmToL1Bias", "CopyL1ToBT", "l1_bias_types"]
