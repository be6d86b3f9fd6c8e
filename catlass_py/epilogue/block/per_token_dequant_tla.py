"""BlockEpilogue for per-token dequant on TLA tensors (CATLASS ``epilogue/block/block_epilogue_per_token_dequant_tla.hpp``,
the specialisation with float scales; examples 52, 42, 44).

Per tile of the block (``TileShape``, default 32 x 256; the two vector cores of an AI core take alternate tiles):
the C tile (int32), the scale slice and the per-token slice are copied GM -> UB (``CopyGm2UbTla`` of ``GetTile``
views), then ``Cast(C, RINT)`` to fp32, ``mul = C * scale[col]`` (``TileRowBroadcastMul``), ``Brcb`` of the
per-token scales (``TileBroadcastOneBlk``), ``mul * per_token[row]`` (``TileOneBlkColumnBroadcastMul``), the cast
to D (``CAST_NONE`` for half, ``CAST_RINT`` for bfloat16; a float D takes the product directly) and UB -> GM.
A block with k == 0 is skipped (D keeps its contents). The tile compute operations are the 1.x vector tiles
(:mod:`catlass_py.tile.vector`) on ``tensor.data()[layout(coord)]``, as CATLASS's ``*Tla`` tiles do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from catlass_py.arch.context import EVENT_ID_COUNT as EVENT_IDS
from catlass_py.arch.memory import Resource
from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.errors import ConfigError
from catlass_py.epilogue.dispatch_policy import EpilogueAtlasA2PerTokenDequantTla
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.lifetime import CloseOnExit
from catlass_py.numerics import dtypes as dt
from catlass_py.numerics.rounding import RoundMode
from catlass_py.tile.copy_tla import TileCopyDequantTla, make_tensor
from catlass_py.tile.vector import (
    BYTE_PER_BLK,
    TileBroadcastOneBlk,
    TileOneBlkColumnBroadcastMul,
    TileRowBroadcastMul,
    vector_cast,
)
from catlass_py.tla import Layout, get_tile


@dataclass(frozen=True)
class PerTokenDequantTlaParams:
    """``BlockEpilogue<EpilogueAtlasA2PerTokenDequantTla>::Params``: pointers and TLA layouts of the scale (1 x n),
    the per-token scale (1 x m) and D."""

    ptr_scale: Any = None
    layout_scale: Any = None
    ptr_per_token_scale: Any = None
    layout_per_token_scale: Any = None
    ptr_d: Any = None
    layout_d: Any = None


class BlockEpiloguePerTokenDequantTla:
    """Assembled CATLASS ``BlockEpilogue<EpilogueAtlasA2PerTokenDequantTla<UB_STAGES>, ElementC, float, float,
    ElementD, TileRowBroadcastMul, TileBroadcastOneBlk, TileOneBlkColumnBroadcastMul, TileCopy,
    EpilogueTileSwizzle>``. Checks (CATLASS's ``static_assert``): C int32 and D half, bfloat16 or float; float
    scales; one TileShape for the three tile ops; ``UB_STAGES * (COUNT * sizeof(C) + COLUMN * sizeof(Scale) + ROW *
    sizeof(PerTokenScale) + COUNT * sizeof(D)) + 2 * COUNT * sizeof(float) + ROW * 32 <= UB_SIZE``; and at most 8
    event ids per event pair (``3 * UB_STAGES`` V_MTE2 ids)."""

    Params = PerTokenDequantTlaParams

    def __init__(self, policy: EpilogueAtlasA2PerTokenDequantTla, element_c, element_scale, element_per_token_scale,
                 element_d, tile_row_broadcast_mul: TileRowBroadcastMul, tile_broadcast_one_blk: TileBroadcastOneBlk,
                 tile_one_blk_column_broadcast_mul: TileOneBlkColumnBroadcastMul, tile_copy: TileCopyDequantTla,
                 epilogue_tile_swizzle: type):
        what = "BlockEpilogue<EpilogueAtlasA2PerTokenDequantTla>"
        if not isinstance(policy, EpilogueAtlasA2PerTokenDequantTla):
            raise ConfigError(f"{what}: policy must be EpilogueAtlasA2PerTokenDequantTla, got {policy!r}")
        self.policy, self.arch = policy, policy.arch
        ec, es, ep, ed = (dt.get_dtype(e) for e in (element_c, element_scale, element_per_token_scale, element_d))
        if ec != dt.INT32 or ed not in (dt.FLOAT16, dt.BFLOAT16, dt.FLOAT32):
            raise ConfigError(f"{what}: The element type template parameters of BlockEpilogue are wrong (C must be "
                              f"int32, D half, bfloat16 or float; got C={ec}, D={ed})")
        if es != dt.FLOAT32 or ep != dt.FLOAT32:
            raise ConfigError(f"{what}: only the float-scale specialisation is modelled (scale={es}, per-token={ep})")
        if not isinstance(tile_copy, TileCopyDequantTla) or (tile_copy.element_c, tile_copy.element_d) != (ec, ed):
            raise ConfigError(f"{what}: TileCopy must be a TileCopyDequantTla for C={ec}, D={ed}, got {tile_copy!r}")
        ts = tile_row_broadcast_mul.tile_shape
        if ts.row != tile_broadcast_one_blk.compute_length or tile_one_blk_column_broadcast_mul.tile_shape != ts:
            raise ConfigError(f"{what}: TileShape must be consistent for all tile compute ops (TileShape::ROW == "
                              f"TileBroadcastOneBlk::COMPUTE_LENGTH): {tuple(ts)}, {tile_broadcast_one_blk.compute_length}, "
                              f"{tuple(tile_one_blk_column_broadcast_mul.tile_shape)}")
        if epilogue_tile_swizzle is None or not hasattr(epilogue_tile_swizzle, "get_tile_coord"):
            raise ConfigError(f"{what}: EpilogueTileSwizzle must be a tile swizzle class, got {epilogue_tile_swizzle!r}")
        self.element_c, self.element_scale, self.element_per_token_scale, self.element_d = ec, es, ep, ed
        self.tile_shape = ts
        self.tile_row_broadcast_mul = tile_row_broadcast_mul
        self.tile_broadcast_one_blk = tile_broadcast_one_blk
        self.tile_one_blk_column_broadcast_mul = tile_one_blk_column_broadcast_mul
        self.tile_copy = tile_copy
        self.epilogue_tile_swizzle = epilogue_tile_swizzle
        stages = policy.ub_stages
        self.stage_bytes = (ec.nbytes(ts.count) + es.nbytes(ts.column) + ep.nbytes(ts.row) + ed.nbytes(ts.count))
        need = stages * self.stage_bytes + 2 * 4 * ts.count + ts.row * BYTE_PER_BLK
        if need > self.arch.ub_size:
            raise ConfigError(f"{what}: TileShape is too large to fit in UB: {need} bytes > {self.arch.ub_size} "
                              f"(UB_STAGES * (COUNT * sizeof(ElementC) + COLUMN * sizeof(ElementScale) + ROW * "
                              f"sizeof(ElementPerTokenScale) + COUNT * sizeof(ElementD)) + (COUNT + COUNT) * "
                              f"sizeof(float) + ROW * BYTE_PER_BLK <= UB_SIZE)")
        if 3 * stages > EVENT_IDS:
            raise ConfigError(f"{what}: {stages} UB stages need {3 * stages} V_MTE2 event ids but the hardware has "
                              f"{EVENT_IDS}")
        self.ub_bytes = need

    @property
    def ub_stages(self) -> int:
        return self.policy.ub_stages

    def __call__(self, resource: Resource, params: PerTokenDequantTlaParams | None = None) -> "_PerTokenDequantTla":
        return _PerTokenDequantTla(self, resource, params or PerTokenDequantTlaParams())

    def __repr__(self) -> str:
        return (f"BlockEpilogue(EpilogueAtlasA2PerTokenDequantTla(ub_stages={self.ub_stages}), "
                f"tile={tuple(self.tile_shape)}, D={self.element_d})")


def _at(t):
    """``tensor.data()[tensor.layout()(tensor.coord())]``: the builtin tensor at the tensor's origin."""
    return t.builtin[t.offset + t.layout._eval(t.coord)]


class _PerTokenDequantTla(CloseOnExit):
    """One vector core's :class:`BlockEpiloguePerTokenDequantTla` (constructor, ``operator()``, destructor)."""

    def __init__(self, spec: BlockEpiloguePerTokenDequantTla, resource: Resource, params):
        self.spec, self.params = spec, params
        self.ctx = ctx = resource.ctx
        ub, ts = resource.ub_buf, spec.tile_shape
        off = 0
        self.ub_c, self.ub_scale, self.ub_per_token, self.ub_d = [], [], [], []
        for _ in range(spec.ub_stages):
            self.ub_c.append(ub.get_buffer_by_byte(spec.element_c, off, ts.count))
            off += spec.element_c.nbytes(ts.count)
            self.ub_scale.append(ub.get_buffer_by_byte(spec.element_scale, off, ts.column))
            off += spec.element_scale.nbytes(ts.column)
            self.ub_per_token.append(ub.get_buffer_by_byte(spec.element_per_token_scale, off, ts.row))
            off += spec.element_per_token_scale.nbytes(ts.row)
            self.ub_d.append(ub.get_buffer_by_byte(spec.element_d, off, ts.count))
            off += spec.element_d.nbytes(ts.count)
        self.ub_c_fp32 = ub.get_buffer_by_byte(dt.FLOAT32, off, ts.count)
        off += 4 * ts.count
        self.ub_mul = ub.get_buffer_by_byte(dt.FLOAT32, off, ts.count)
        off += 4 * ts.count
        self.ub_brcb = ub.get_buffer_by_byte(dt.FLOAT32, off, ts.row * BYTE_PER_BLK // 4)
        self.ub_per_token_mul = self.ub_c_fp32
        self.ub_list_id = 0
        for i in range(spec.ub_stages):
            for k in range(3):
                ctx.set_flag(HardEvent.V_MTE2, 3 * i + k)
            ctx.set_flag(HardEvent.MTE3_V, i)

    def close(self) -> None:
        for i in range(self.spec.ub_stages):
            for k in range(3):
                self.ctx.wait_flag(HardEvent.V_MTE2, 3 * i + k)
            self.ctx.wait_flag(HardEvent.MTE3_V, i)

    def update_params(self, params) -> None:
        """``UpdateParams``."""
        self.params = params

    def __call__(self, tensor_c, tensor_scale, tensor_per_token_scale, tensor_d, actual_block_shape,
                 callback: Callable[[], None] | None = None) -> None:
        """Dequantise the block ``tensor_c`` (int32, GM) into ``tensor_d`` with the block's scale slices."""
        spec, ctx = self.spec, self.ctx
        actual = GemmCoord(*actual_block_shape)
        if actual.k == 0:
            return
        if callback is not None:
            callback()
        ts = spec.tile_shape
        tile_shape = MatrixCoord(ts.row, ts.column)
        swizzle = spec.epilogue_tile_swizzle(actual.mn, tile_shape)
        copy, count = spec.tile_copy, ts.count
        d_mode = RoundMode.NONE if spec.element_d == dt.FLOAT16 else RoundMode.RINT
        for loop in range(ctx.sub_block_idx, swizzle.get_loops(), ctx.sub_block_num):
            tc = swizzle.get_tile_coord(loop)
            tshape = swizzle.get_actual_tile_shape(tc)
            r0, c0 = tc.row * ts.row, tc.column * ts.column
            rows, cols = tshape.row, tshape.column
            s = self.ub_list_id
            layout_ub = Layout((rows, cols), (ts.column, 1))
            # rows past the actual tile are never stored: when nobody checks instructions (no observer of them,
            # or only observers that time them), the vector ops compute the actual rows only (same checks and
            # events; the stale rows are left as they are)
            hint = None if ctx.bus.instructions and not ctx.bus.templates else rows
            valid = None if hint is None else hint * ts.column

            ctx.wait_flag(HardEvent.V_MTE2, 3 * s)
            ub_c = make_tensor(self.ub_c[s], layout_ub)
            copy.copy_gm_to_ub_c(ub_c, get_tile(tensor_c, (r0, c0), (rows, cols)))
            ctx.set_flag(HardEvent.MTE2_V, 3 * s)

            ctx.wait_flag(HardEvent.V_MTE2, 3 * s + 1)
            ub_scale = make_tensor(self.ub_scale[s], Layout((1, cols), (ts.column, 1)))
            copy.copy_gm_to_ub_x(ub_scale, get_tile(tensor_scale, (0, c0), (1, cols)))
            ctx.set_flag(HardEvent.MTE2_V, 3 * s + 1)

            ctx.wait_flag(HardEvent.V_MTE2, 3 * s + 2)
            ub_pts = make_tensor(self.ub_per_token[s], Layout((1, rows), (ts.row, 1)))
            copy.copy_gm_to_ub_y(ub_pts, get_tile(tensor_per_token_scale, (0, r0), (1, rows)))
            ctx.set_flag(HardEvent.MTE2_V, 3 * s + 2)

            ctx.wait_flag(HardEvent.MTE2_V, 3 * s)
            vector_cast(self.ub_c_fp32, self.ub_c[s], RoundMode.RINT, count, valid)
            ctx.set_flag(HardEvent.V_MTE2, 3 * s)

            ctx.pipe_barrier(Pipe.V)
            ctx.wait_flag(HardEvent.MTE2_V, 3 * s + 1)
            spec.tile_row_broadcast_mul(self.ub_mul, self.ub_c_fp32, _at(ub_scale), hint)
            ctx.set_flag(HardEvent.V_MTE2, 3 * s + 1)

            ctx.pipe_barrier(Pipe.V)
            ctx.wait_flag(HardEvent.MTE2_V, 3 * s + 2)
            spec.tile_broadcast_one_blk(self.ub_brcb, _at(ub_pts), hint)
            ctx.set_flag(HardEvent.V_MTE2, 3 * s + 2)

            ub_d = make_tensor(self.ub_d[s], layout_ub)
            if spec.element_d == dt.FLOAT32:
                ctx.pipe_barrier(Pipe.V)
                ctx.wait_flag(HardEvent.MTE3_V, s)
                spec.tile_one_blk_column_broadcast_mul(self.ub_d[s], self.ub_mul, self.ub_brcb, hint)
                ctx.set_flag(HardEvent.V_MTE3, s)
            else:
                ctx.pipe_barrier(Pipe.V)
                spec.tile_one_blk_column_broadcast_mul(self.ub_per_token_mul, self.ub_mul, self.ub_brcb, hint)
                ctx.pipe_barrier(Pipe.V)
                ctx.wait_flag(HardEvent.MTE3_V, s)
                vector_cast(self.ub_d[s], self.ub_per_token_mul, d_mode, count, valid)
                ctx.set_flag(HardEvent.V_MTE3, s)

            ctx.wait_flag(HardEvent.V_MTE3, s)
            copy.copy_ub_to_gm_d(get_tile(tensor_d, (r0, c0), (rows, cols)), ub_d)
            ctx.set_flag(HardEvent.MTE3_V, s)
            ctx.mark("epilogue_tile", tile=loop, row=tensor_d.coord[0] + r0, col=tensor_d.coord[1] + c0, rows=rows,
                     cols=cols)
            self.ub_list_id = (s + 1) % spec.ub_stages


__all__ = ["BlockEpiloguePerTokenDequantTla", "PerTokenDequantTlaParams"]
