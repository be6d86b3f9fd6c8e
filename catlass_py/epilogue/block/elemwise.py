"""Element-wise BlockEpilogues (CATLASS ``epilogue/block/block_epilogue_elemwise_one_source.hpp`` and
``block_epilogue_elemwise_no_source.hpp``).

Both split one output block of C between the two vector cores of an AI core by rows: sub-block s takes
rows ``[s * ceil(m / 2), ...)`` of the block (the whole width), loads them into UB in one go, runs the
element-wise tile op over its full ``COMPUTE_LENGTH`` and stores D. One UB stage; the pipeline events:

=========  ===================================  =====================================
step       operation                            events
=========  ===================================  =====================================
copy in    C (and X) GM -> UB                   wait V_MTE2, then set MTE2_V
compute    tile op (+ cast for no-source)       wait MTE2_V and MTE3_V, set V_MTE2/V_MTE3
copy out   D UB -> GM                           wait V_MTE3, then set MTE3_V
=========  ===================================  =====================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor, Resource
from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.epilogue.dispatch_policy import EpilogueAtlasA2ElemWiseNoSource, EpilogueAtlasA2ElemWiseOneSource
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm.coord import GemmCoord, MatrixCoord, ceil_div
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.layout import RowMajor
from catlass_py.lifetime import CloseOnExit
from catlass_py.numerics import dtypes as dt
from catlass_py.numerics.rounding import RoundMode
from catlass_py.tile.tile_copy import EpilogueTileCopy
from catlass_py.tile.vector import vector_cast

UB_ALIGN = 32


@dataclass(frozen=True)
class ElemWiseOneSourceParams:
    """CATLASS ``BlockEpilogue<EpilogueAtlasA2ElemWiseOneSource>::Params{ptrX, layoutX, ptrD, layoutD}``."""

    ptr_x: GlobalTensor | None = None
    layout_x: Any = None
    ptr_d: GlobalTensor | None = None
    layout_d: Any = None


@dataclass(frozen=True)
class ElemWiseNoSourceParams:
    """CATLASS ``BlockEpilogue<EpilogueAtlasA2ElemWiseNoSource>::Params{ptrC, layoutC, ptrD, layoutD}`` (the C
    pointer is carried but the block reads C from the ``gm_block_c`` it is called with)."""

    ptr_c: GlobalTensor | None = None
    layout_c: Any = None
    ptr_d: GlobalTensor | None = None
    layout_d: Any = None


def _check_types(what: str, **types) -> None:
    for name, t in types.items():
        if not isinstance(t, GemmType):
            raise ConfigError(f"{what}: {name} must be a GemmType, got {t!r}")
        if t.layout is not RowMajor:
            raise ConfigError(f"{what}: {name} must be RowMajor, got {t.layout.__name__}")


def _subblock(ctx, actual: MatrixCoord) -> tuple[MatrixCoord, MatrixCoord]:
    """(offset, actual shape) of this vector core's rows of a block (CATLASS: ``ceil(rows / subBlockNum)`` rows
    per sub-block, the whole width)."""
    sub_rows = ceil_div(actual.row, ctx.sub_block_num)
    offset = MatrixCoord(ctx.sub_block_idx * sub_rows, 0)
    rows = max(0, min(sub_rows, actual.row - offset.row))
    if rows == 0:
        # An empty share (a one-row block on sub-block 1): the C++ pointer arithmetic would point past the
        # matrix, harmlessly since nothing is copied; keep the pointers inside the buffers here.
        offset = MatrixCoord(0, 0)
    return offset, MatrixCoord(rows, actual.column)


class _ElemWiseSpec:
    policy_type: type = object
    name = ""

    def _common(self, policy, tile_elem_wise_epilogue, tile_copy):
        what = f"BlockEpilogue<{self.policy_type.__name__}>"
        if not isinstance(policy, self.policy_type):
            raise ConfigError(f"{what}: policy must be {self.policy_type.__name__}, got {policy!r}")
        self.policy = policy
        self.arch = policy.arch
        op = tile_elem_wise_epilogue
        if not hasattr(op, "compute_length") or not callable(op):
            raise ConfigError(f"{what}: TileElemWiseEpilogue must be an element-wise tile op, got {op!r}")
        if op.arch != self.arch:
            raise ConfigError(f"{what}: tile epilogue's ArchTag {op.arch.name} differs from {self.arch.name}")
        if not isinstance(tile_copy, EpilogueTileCopy):
            raise ConfigError(f"{what}: TileCopy must be an EpilogueTileCopy bundle, got {tile_copy!r}")
        self.tile_elem_wise_epilogue = op
        self.compute_length = op.compute_length
        self.tile_copy = tile_copy
        return what

    def _place(self, what: str, sizes: list[tuple[str, int]]) -> dict:
        """Byte offsets of the UB buffers in C++ order, checked for 32-byte alignment."""
        plan, off = {}, 0
        for name, size in sizes:
            if off % UB_ALIGN:
                raise ConfigError(
                    f"{what}: UB buffer {name} would start at byte {off}, not a multiple of {UB_ALIGN}; choose a "
                    f"COMPUTE_LENGTH ({self.compute_length}) whose buffers are whole 32-byte blocks"
                )
            plan[name] = off
            off += size
        plan["total"] = off
        return plan


class BlockEpilogueElemWiseOneSource(_ElemWiseSpec):
    """Assembled CATLASS ``BlockEpilogue<EpilogueAtlasA2ElemWiseOneSource, CType, XType, DType,
    TileElemWiseEpilogue, TileCopy>``: ``D = op(C, X)`` (example 03: ``TileElemWiseAdd``).

    Static checks: C, X and D have one element type (the compute type) and are RowMajor; the tile op's
    ArchTag and compute type match; ``COMPUTE_LENGTH * OPERANDS_NUM * sizeof(D) <= UB_SIZE``.
    """

    policy_type = EpilogueAtlasA2ElemWiseOneSource
    Params = ElemWiseOneSourceParams

    def __init__(self, policy, c_type: GemmType, x_type: GemmType, d_type: GemmType, tile_elem_wise_epilogue,
                 tile_copy: EpilogueTileCopy):
        what = self._common(policy, tile_elem_wise_epilogue, tile_copy)
        _check_types(what, CType=c_type, XType=x_type, DType=d_type)
        if not (c_type.element == d_type.element and x_type.element == d_type.element):
            raise ConfigError(
                f"{what}: element type of C, X and D must be the same, got C={c_type.element}, X={x_type.element}, "
                f"D={d_type.element}"
            )
        self.c_type, self.x_type, self.d_type = c_type, x_type, d_type
        self.element_compute = d_type.element
        if tile_elem_wise_epilogue.element != self.element_compute:
            raise ConfigError(f"{what}: the tile op computes in {tile_elem_wise_epilogue.element}, the epilogue in "
                              f"{self.element_compute}")
        for name in ("copy_gm_to_ub_c", "copy_gm_to_ub_x", "copy_ub_to_gm_d"):
            if getattr(tile_copy, name) is None:
                raise ConfigError(f"{what}: the tile copy bundle lacks {name}")
        cl = self.compute_length
        need = cl * policy.OPERANDS_NUM * self.element_compute.nbytes(1)
        if need > self.arch.ub_size:
            raise ConfigError(f"{what}: COMPUTE_LENGTH {cl} x {policy.OPERANDS_NUM} operands x "
                              f"{self.element_compute.nbytes(1)} B = {need} B exceeds UB_SIZE {self.arch.ub_size} "
                              f"(UB out of bounds)")
        self.ub_plan = self._place(what, [("c", c_type.element.nbytes(cl)), ("x", x_type.element.nbytes(cl)),
                                          ("d", d_type.element.nbytes(cl))])

    def __call__(self, resource: Resource, params: ElemWiseOneSourceParams | None = None) -> "_ElemWiseOneSourceBlock":
        return _ElemWiseOneSourceBlock(self, resource, params or ElemWiseOneSourceParams())

    def __repr__(self) -> str:
        return (f"BlockEpilogue(EpilogueAtlasA2ElemWiseOneSource, {self.tile_elem_wise_epilogue!r}, "
                f"D={self.d_type.element}, UB {self.ub_plan['total']} B)")


class BlockEpilogueElemWiseNoSource(_ElemWiseSpec):
    """Assembled CATLASS ``BlockEpilogue<EpilogueAtlasA2ElemWiseNoSource, CType, DType, TileElemWiseEpilogue,
    TileCopy>``: ``D = cast(op(C))`` with fp32 C (examples 27/28: GELU, SiLU; cast ``CAST_NONE``).

    Static checks: C is float32, C and D RowMajor, the tile op computes in C's type with the same ArchTag,
    ``COMPUTE_LENGTH * (OPERANDS_NUM * sizeof(C) + sizeof(D)) <= UB_SIZE``.
    """

    policy_type = EpilogueAtlasA2ElemWiseNoSource
    Params = ElemWiseNoSourceParams

    def __init__(self, policy, c_type: GemmType, d_type: GemmType, tile_elem_wise_epilogue,
                 tile_copy: EpilogueTileCopy):
        what = self._common(policy, tile_elem_wise_epilogue, tile_copy)
        _check_types(what, CType=c_type, DType=d_type)
        if c_type.element != dt.FLOAT32:
            raise ConfigError(f"{what}: element type of C must be float, got {c_type.element}")
        self.c_type, self.d_type = c_type, d_type
        self.element_compute = c_type.element
        if tile_elem_wise_epilogue.element != self.element_compute:
            raise ConfigError(f"{what}: the tile op computes in {tile_elem_wise_epilogue.element}, C is "
                              f"{self.element_compute}")
        for name in ("copy_gm_to_ub_c", "copy_ub_to_gm_d"):
            if getattr(tile_copy, name) is None:
                raise ConfigError(f"{what}: the tile copy bundle lacks {name}")
        cl = self.compute_length
        need = cl * (policy.OPERANDS_NUM * c_type.element.nbytes(1) + d_type.element.nbytes(1))
        if need > self.arch.ub_size:
            raise ConfigError(f"{what}: COMPUTE_LENGTH {cl} x ({policy.OPERANDS_NUM} x {c_type.element.nbytes(1)} + "
                              f"{d_type.element.nbytes(1)}) B = {need} B exceeds UB_SIZE {self.arch.ub_size} "
                              f"(UB out of bounds)")
        sizes = [("c", c_type.element.nbytes(cl)), ("d", d_type.element.nbytes(cl))]
        self.separate_compute = d_type.element != self.element_compute
        if self.separate_compute:
            sizes.append(("compute", self.element_compute.nbytes(cl)))
        self.ub_plan = self._place(what, sizes)

    def __call__(self, resource: Resource, params: ElemWiseNoSourceParams | None = None) -> "_ElemWiseNoSourceBlock":
        return _ElemWiseNoSourceBlock(self, resource, params or ElemWiseNoSourceParams())

    def __repr__(self) -> str:
        return (f"BlockEpilogue(EpilogueAtlasA2ElemWiseNoSource, {self.tile_elem_wise_epilogue!r}, "
                f"D={self.d_type.element}, UB {self.ub_plan['total']} B)")


class _ElemWiseBlockBase(CloseOnExit):
    def __init__(self, spec, resource: Resource, params):
        self.spec = spec
        self.params = params
        self.ctx = resource.ctx
        self.ub = resource.ub_buf
        self.ctx.set_flag(HardEvent.V_MTE2, 0)
        self.ctx.set_flag(HardEvent.MTE3_V, 0)

    def _buf(self, element, name):
        return self.ub.get_buffer_by_byte(element, self.spec.ub_plan[name], self.spec.compute_length)

    def close(self) -> None:
        """The C++ destructor: wait for the buffer-free events."""
        self.ctx.wait_flag(HardEvent.V_MTE2, 0)
        self.ctx.wait_flag(HardEvent.MTE3_V, 0)

    def update_params(self, params) -> None:
        """Replace the GM pointers (the C++ has no UpdateParams here; kernels pass params at construction)."""
        self.params = params

    def _mark(self, off: MatrixCoord, shape: MatrixCoord) -> None:
        if shape.row and shape.column:
            self.ctx.mark("epilogue_tile", row=off.row, col=off.column, rows=shape.row, cols=shape.column, zero=False)


class _ElemWiseOneSourceBlock(_ElemWiseBlockBase):
    """One vector core's instance of :class:`BlockEpilogueElemWiseOneSource`."""

    def __init__(self, spec: BlockEpilogueElemWiseOneSource, resource: Resource, params):
        super().__init__(spec, resource, params)
        self.ub_c = self._buf(spec.c_type.element, "c")
        self.ub_x = self._buf(spec.x_type.element, "x")
        self.ub_d = self._buf(spec.d_type.element, "d")

    def __call__(self, block_shape, block_coord, actual_block_shape, gm_block_c: GlobalTensor, layout_block_c) -> None:
        """``D[block] = op(C[block], X[block])`` for this vector core's rows of the block."""
        spec, ctx, p = self.spec, self.ctx, self.params
        if p.ptr_x is None or p.ptr_d is None:
            raise ArgumentError("BlockEpilogueElemWiseOneSource: params (ptr_x, ptr_d) not set")
        block_shape, block_coord = GemmCoord(*block_shape), GemmCoord(*block_coord)
        actual = GemmCoord(*actual_block_shape).mn
        block_offset = block_coord.mn * block_shape.mn
        sub_off, sub_shape = _subblock(ctx, actual)
        gm_sub_c = gm_block_c[layout_block_c.offset(*sub_off)]
        layout_sub_c = layout_block_c.get_tile_layout(*sub_shape)
        off = block_offset + sub_off
        gm_sub_x = p.ptr_x[p.layout_x.offset(*off)]
        layout_sub_x = p.layout_x.get_tile_layout(*sub_shape)
        gm_sub_d = p.ptr_d[p.layout_d.offset(*off)]
        layout_sub_d = p.layout_d.get_tile_layout(*sub_shape)
        layout_ub = RowMajor.make_layout_in_ub(spec.element_compute, *sub_shape)
        copy = spec.tile_copy

        ctx.wait_flag(HardEvent.V_MTE2, 0)
        copy.copy_gm_to_ub_c(self.ub_c, gm_sub_c, layout_ub, layout_sub_c)
        copy.copy_gm_to_ub_x(self.ub_x, gm_sub_x, layout_ub, layout_sub_x)
        ctx.set_flag(HardEvent.MTE2_V, 0)

        ctx.wait_flag(HardEvent.MTE2_V, 0)
        ctx.wait_flag(HardEvent.MTE3_V, 0)
        spec.tile_elem_wise_epilogue(self.ub_d, self.ub_c, self.ub_x)
        ctx.set_flag(HardEvent.V_MTE2, 0)
        ctx.set_flag(HardEvent.V_MTE3, 0)

        ctx.wait_flag(HardEvent.V_MTE3, 0)
        copy.copy_ub_to_gm_d(gm_sub_d, self.ub_d, layout_sub_d, layout_ub)
        ctx.set_flag(HardEvent.MTE3_V, 0)
        self._mark(off, sub_shape)


class _ElemWiseNoSourceBlock(_ElemWiseBlockBase):
    """One vector core's instance of :class:`BlockEpilogueElemWiseNoSource`."""

    def __init__(self, spec: BlockEpilogueElemWiseNoSource, resource: Resource, params):
        super().__init__(spec, resource, params)
        self.ub_c = self._buf(spec.c_type.element, "c")
        self.ub_d = self._buf(spec.d_type.element, "d")
        # When the compute type is D's type the C++ computes straight into ubD (no cast).
        self.ub_compute = self._buf(spec.element_compute, "compute") if spec.separate_compute else self.ub_d

    def __call__(self, block_shape, block_coord, actual_block_shape, gm_block_c: GlobalTensor, layout_block_c) -> None:
        """``D[block] = cast(op(C[block]))`` for this vector core's rows of the block."""
        spec, ctx, p = self.spec, self.ctx, self.params
        if p.ptr_d is None:
            raise ArgumentError("BlockEpilogueElemWiseNoSource: params (ptr_d) not set")
        block_shape, block_coord = GemmCoord(*block_shape), GemmCoord(*block_coord)
        actual = GemmCoord(*actual_block_shape).mn
        block_offset = block_coord.mn * block_shape.mn
        sub_off, sub_shape = _subblock(ctx, actual)
        gm_sub_c = gm_block_c[layout_block_c.offset(*sub_off)]
        layout_sub_c = layout_block_c.get_tile_layout(*sub_shape)
        off = block_offset + sub_off
        gm_sub_d = p.ptr_d[p.layout_d.offset(*off)]
        layout_sub_d = p.layout_d.get_tile_layout(*sub_shape)
        # UB rows have the pitch of the static block width (the C++ ``ubTileStride``).
        layout_ub = RowMajor(sub_shape.row, sub_shape.column, block_shape.n)
        copy = spec.tile_copy

        ctx.wait_flag(HardEvent.V_MTE2, 0)
        copy.copy_gm_to_ub_c(self.ub_c, gm_sub_c, layout_ub, layout_sub_c)
        ctx.set_flag(HardEvent.MTE2_V, 0)

        ctx.wait_flag(HardEvent.MTE2_V, 0)
        ctx.wait_flag(HardEvent.MTE3_V, 0)
        spec.tile_elem_wise_epilogue(self.ub_compute, self.ub_c)
        if spec.separate_compute:
            # CATLASS leaves this PIPE_V barrier to the compiler's automatic synchronisation (see
            # catlass_py.tile.vector_elementwise.TileElemWiseGelu); the Cast reads what the tile op wrote.
            ctx.pipe_barrier(Pipe.V)
            vector_cast(self.ub_d, self.ub_compute, RoundMode.NONE, spec.compute_length)
        ctx.set_flag(HardEvent.V_MTE2, 0)
        ctx.set_flag(HardEvent.V_MTE3, 0)

        ctx.wait_flag(HardEvent.V_MTE3, 0)
        copy.copy_ub_to_gm_d(gm_sub_d, self.ub_d, layout_sub_d, layout_ub)
        ctx.set_flag(HardEvent.MTE3_V, 0)
        self._mark(off, sub_shape)


__all__ = [
    "BlockEpilogueElemWiseNoSource",
    "BlockEpilogueElemWiseOneSource",
    "ElemWiseNoSourceParams",
    "ElemWiseOneSourceParams",
]
