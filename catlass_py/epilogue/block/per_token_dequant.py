"""BlockEpilogue for per-token dequant (CATLASS ``epilogue/block/block_epilogue_per_token_dequant.hpp``).

Per tile (default 32 x 256, on the vector cores):

=====  ============================================  ======================================
step   operation                                     dtype
=====  ============================================  ======================================
1      C tile, scale slice, per-token slice GM->UB    int32, ElementScale, ElementPerToken
2      ``Cast(C, RINT)``                              int32 -> fp32
3      scales ``Cast(., NONE)`` (skipped for fp32)    bf16/fp16 -> fp32 (exact)
4      ``mul = C * scale[col]``                       fp32 (TileRowBroadcastMul)
5      ``brcb = Brcb(per_token)``                     fp32 (TileBroadcastOneBlk)
6      ``mul = mul * per_token[row]``                 fp32 (TileOneBlkColumnBroadcastMul)
7      ``D = Cast(mul, RINT)``, UB->GM                fp32 -> bf16/fp16
=====  ============================================  ======================================

The two vector cores of an AI core take alternate tiles of every block (sub-block s: tiles s, s+2, ...).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from catlass_py.arch.context import EVENT_ID_COUNT as EVENT_IDS
from catlass_py.arch.memory import GlobalTensor, LocalTensor, Resource
from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.epilogue.dispatch_policy import EpilogueAtlasA2PerTokenDequant
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.layout import RowMajor, VectorLayout
from catlass_py.lifetime import CloseOnExit
from catlass_py.numerics import dtypes as dt
from catlass_py.numerics.rounding import RoundMode
from catlass_py.epilogue.tile_swizzle import EpilogueHorizontalTileSwizzle, EpilogueIdentityTileSwizzle
from catlass_py.tile._region import gm_copy_plan
from catlass_py.tile.copy_gm_ub import CopyGm2Ub, CopyUb2Gm
from catlass_py.tile.tile_copy import EpilogueTileCopy
from catlass_py.tile.vector import (
    BYTE_PER_BLK,
    TileBroadcastOneBlk,
    TileOneBlkColumnBroadcastMul,
    TileRowBroadcastMul,
    plain_conversion,
    duplicate,
    vector_cast,
)



@dataclass(frozen=True)
class PerTokenDequantParams:
    """CATLASS ``BlockEpilogue<EpilogueAtlasA2PerTokenDequant>::Params``: GM pointers already offset to the
    current group, and their layouts."""

    ptr_scale: GlobalTensor | None = None
    layout_scale: Any = None
    ptr_per_token_scale: GlobalTensor | None = None
    layout_per_token_scale: Any = None
    ptr_d: GlobalTensor | None = None
    layout_d: Any = None

_PURE_SWIZZLES = (EpilogueIdentityTileSwizzle, EpilogueHorizontalTileSwizzle)
_MISSING = object()


class BlockEpiloguePerTokenDequant:
    """Assembled CATLASS ``BlockEpilogue<EpilogueAtlasA2PerTokenDequant<UB_STAGES>, CType, ScaleType,
    PerTokenScaleType, DType, TileRowBroadcastMul, TileBroadcastOneBlk, TileOneBlkColumnBroadcastMul,
    TileCopy, EpilogueTileSwizzle>``. Every ``static_assert`` of the C++ class is checked here; calling the
    object with a vector core's resource builds the per-core instance (the C++ constructor).
    """

    Params = PerTokenDequantParams

    def __init__(self, policy: EpilogueAtlasA2PerTokenDequant, c_type: GemmType, scale_type: GemmType,
                 per_token_scale_type: GemmType, d_type: GemmType,
                 tile_row_broadcast_mul: TileRowBroadcastMul, tile_broadcast_one_blk: TileBroadcastOneBlk,
                 tile_one_blk_column_broadcast_mul: TileOneBlkColumnBroadcastMul,
                 tile_copy: EpilogueTileCopy, epilogue_tile_swizzle: type):
        what = "BlockEpilogue<EpilogueAtlasA2PerTokenDequant>"
        if not isinstance(policy, EpilogueAtlasA2PerTokenDequant):
            raise ConfigError(f"{what}: policy must be EpilogueAtlasA2PerTokenDequant, got {policy!r}")
        self.policy = policy
        self.arch = policy.arch
        self.c_type, self.scale_type, self.per_token_scale_type, self.d_type = c_type, scale_type, per_token_scale_type, d_type
        self.float_scales = scale_type.element == dt.FLOAT32 and per_token_scale_type.element == dt.FLOAT32
        e_c, e_s, e_p, e_d = c_type.element, scale_type.element, per_token_scale_type.element, d_type.element
        if e_c != dt.INT32 or e_d not in (dt.FLOAT16, dt.BFLOAT16):
            raise ConfigError(f"{what}: ElementC must be int32 and ElementD half or bfloat16, got C={e_c}, D={e_d}")
        if not self.float_scales and not (e_s == e_d and e_p == e_d):
            raise ConfigError(
                f"{what}: scale and per-token scale must both have ElementD's type ({e_d}) or both be float32, "
                f"got scale={e_s}, per-token={e_p}"
            )
        layouts = (c_type.layout, scale_type.layout, per_token_scale_type.layout, d_type.layout)
        if layouts != (RowMajor, VectorLayout, VectorLayout, RowMajor):
            raise ConfigError(
                f"{what}: layouts must be C RowMajor, scales VectorLayout, D RowMajor; got "
                + ", ".join(lay.__name__ for lay in layouts)
            )
        ts = tile_row_broadcast_mul.tile_shape
        if ts.row != tile_broadcast_one_blk.compute_length or tile_one_blk_column_broadcast_mul.tile_shape != ts:
            raise ConfigError(
                f"{what}: TileShape must be consistent for all tile compute ops: row mul {tuple(ts)}, "
                f"broadcast COMPUTE_LENGTH {tile_broadcast_one_blk.compute_length}, column mul "
                f"{tuple(tile_one_blk_column_broadcast_mul.tile_shape)}"
            )
        for name, member in (("copy_gm_to_ub_c", tile_copy.copy_gm_to_ub_c), ("copy_gm_to_ub_x", tile_copy.copy_gm_to_ub_x),
                             ("copy_gm_to_ub_y", tile_copy.copy_gm_to_ub_y), ("copy_ub_to_gm_d", tile_copy.copy_ub_to_gm_d)):
            if member is None:
                raise ConfigError(f"{what}: the tile copy bundle lacks {name}")
        if epilogue_tile_swizzle is None or not hasattr(epilogue_tile_swizzle, "get_tile_coord"):
            raise ConfigError(f"{what}: epilogue_tile_swizzle must be a tile swizzle class, got {epilogue_tile_swizzle!r}")
        self.tile_shape = ts
        self.tile_row_broadcast_mul = tile_row_broadcast_mul
        self.tile_broadcast_one_blk = tile_broadcast_one_blk
        self.tile_one_blk_column_broadcast_mul = tile_one_blk_column_broadcast_mul
        self.tile_copy = tile_copy
        self.epilogue_tile_swizzle = epilogue_tile_swizzle
        self.ub_plan = self._plan_ub(what)
        self._tiles: dict = {}  # actual block (m, n) -> its tiles (tile_plan)

    def tile_plan(self, actual_mn) -> list:
        """The tiles of an actual ``(m, n)`` block in swizzle order: ``(tile coord, actual tile shape, tile origin
        in the block, UB layout of the tile, VectorLayout of its columns, VectorLayout of its rows)``, made once
        per block shape when the swizzle is one of CATLASS's two (pure functions of the shapes)."""
        key = (actual_mn[0], actual_mn[1])
        hit = self._tiles.get(key)
        if hit is not None:
            return hit
        tile_shape = MatrixCoord(*self.tile_shape)
        swizzle = self.epilogue_tile_swizzle(MatrixCoord(*key), tile_shape)
        plan = []
        for loop in range(swizzle.get_loops()):
            tc = swizzle.get_tile_coord(loop)
            tshape = swizzle.get_actual_tile_shape(tc)
            plan.append((tc, tshape, tc * tile_shape, RowMajor(tshape.row, tshape.column, tile_shape.column),
                         VectorLayout(tshape.column), VectorLayout(tshape.row)))
        if self.epilogue_tile_swizzle in _PURE_SWIZZLES and all(v.__class__ is int for v in key):
            if len(self._tiles) >= 1024:
                self._tiles.clear()
            self._tiles[key] = plan
        return plan

    @property
    def ub_stages(self) -> int:
        return self.policy.ub_stages

    def _plan_ub(self, what: str) -> dict:
        """Byte offsets of every UB buffer, in the C++ constructor's order, with the C++ budget check, plus
        the checks the C++ leaves to the hardware (32-byte alignment, at most 8 ids per event pair)."""
        ts, stages = self.tile_shape, self.ub_stages
        sz = lambda e, n: dt.get_dtype(e).nbytes(n)  # noqa: E731
        per_stage = [("c", sz(dt.INT32, ts.count)), ("scale", sz(self.scale_type.element, ts.column)),
                     ("per_token", sz(self.per_token_scale_type.element, ts.row)), ("d", sz(self.d_type.element, ts.count))]
        if self.float_scales:
            shared = [("c_fp32", 4 * ts.count), ("mul", 4 * ts.count), ("brcb", ts.row * BYTE_PER_BLK)]
        else:
            shared = [("c_fp32", 4 * ts.count), ("scale_fp32", 4 * ts.column), ("mul", 4 * ts.count),
                      ("per_token_fp32", 4 * ts.row), ("brcb", ts.row * BYTE_PER_BLK)]
        plan: dict = {"stages": []}
        off = 0
        for _ in range(stages):
            stage = {}
            for name, size in per_stage:
                stage[name] = off
                off += size
            plan["stages"].append(stage)
        for name, size in shared:
            plan[name] = off
            off += size
        plan["total"] = off
        ub = self.arch.ub_size
        if off > ub:
            raise ConfigError(
                f"{what}: TileShape {tuple(ts)} with {stages} UB stages needs {off} bytes of UB but {self.arch.name} "
                f"has {ub} (UB_STAGES*(COUNT*sizeof(C) + COLUMN*sizeof(Scale) + ROW*sizeof(PerTokenScale) + "
                f"COUNT*sizeof(D)) + fp32 work buffers + ROW*32 <= UB_SIZE)"
            )
        offsets = [(f"stage {i} {k}", v) for i, s in enumerate(plan["stages"]) for k, v in s.items()]
        offsets += [(k, plan[k]) for k, _ in shared]
        bad = [f"{k} at byte {v}" for k, v in offsets if v % 32]
        if bad:
            raise ConfigError(f"{what}: UB buffers must start on 32-byte boundaries; TileShape {tuple(ts)} puts " + ", ".join(bad))
        if 3 * stages > EVENT_IDS:
            raise ConfigError(
                f"{what}: {stages} UB stages need {3 * stages} V_MTE2 event ids but the hardware has {EVENT_IDS}"
            )
        return plan

    def __call__(self, resource: Resource, params: PerTokenDequantParams | None = None) -> "_PerTokenDequantBlock":
        return _PerTokenDequantBlock(self, resource, params or PerTokenDequantParams())

    def __repr__(self) -> str:
        return (f"BlockEpilogue(EpilogueAtlasA2PerTokenDequant(ub_stages={self.ub_stages}), tile={tuple(self.tile_shape)}, "
                f"D={self.d_type.element}, UB {self.ub_plan['total']} B)")


class _PerTokenDequantBlock(CloseOnExit):
    """One vector core's instance of :class:`BlockEpiloguePerTokenDequant` (the constructed C++ object)."""

    def __init__(self, spec: BlockEpiloguePerTokenDequant, resource: Resource, params: PerTokenDequantParams):
        self.spec = spec
        self.params = params
        self.ctx = ctx = resource.ctx
        ub = resource.ub_buf
        plan, ts = spec.ub_plan, spec.tile_shape
        self.ub_c, self.ub_scale, self.ub_per_token, self.ub_d = [], [], [], []
        for st in plan["stages"]:
            self.ub_c.append(ub.get_buffer_by_byte(dt.INT32, st["c"], ts.count))
            self.ub_scale.append(ub.get_buffer_by_byte(spec.scale_type.element, st["scale"], ts.column))
            self.ub_per_token.append(ub.get_buffer_by_byte(spec.per_token_scale_type.element, st["per_token"], ts.row))
            self.ub_d.append(ub.get_buffer_by_byte(spec.d_type.element, st["d"], ts.count))
        self.ub_c_fp32 = ub.get_buffer_by_byte(dt.FLOAT32, plan["c_fp32"], ts.count)
        self.ub_mul = ub.get_buffer_by_byte(dt.FLOAT32, plan["mul"], ts.count)
        blk = BYTE_PER_BLK // 4
        self.ub_brcb = ub.get_buffer_by_byte(dt.FLOAT32, plan["brcb"], ts.row * blk)
        if spec.float_scales:
            self.ub_per_token_mul = self.ub_c_fp32
        else:
            self.ub_scale_fp32 = ub.get_buffer_by_byte(dt.FLOAT32, plan["scale_fp32"], ts.column)
            self.ub_per_token_fp32 = ub.get_buffer_by_byte(dt.FLOAT32, plan["per_token_fp32"], ts.row)
            self.ub_per_token_mul = self.ub_mul
        self.ub_list_id = 0
        self._replays: dict = {}  # tile geometry -> its _TileReplay on this core (None: not one)
        for i in range(spec.ub_stages):
            for k in range(3):
                ctx.set_flag(HardEvent.V_MTE2, 3 * i + k)
            ctx.set_flag(HardEvent.MTE3_V, i)

    # C++ destructor: drain the buffer-free events.
    def close(self) -> None:
        """Wait for every buffer-free event (the C++ destructor)."""
        for i in range(self.spec.ub_stages):
            for k in range(3):
                self.ctx.wait_flag(HardEvent.V_MTE2, 3 * i + k)
            self.ctx.wait_flag(HardEvent.MTE3_V, i)

    def _proven(self) -> set:
        """The tile geometries (the keys of ``_replays``) that ran through the tile ops without error on some vector
        core of the launch, shared by the launch's instances of this epilogue: each core's UB buffers lie at the
        same offsets of a UB of the same size (the assembly's plan), so the ops' checks of a geometry, bar where
        its GM regions lie (which :meth:`_TileReplay.run` checks), pass on every core alike."""
        return self.ctx.launch_shared("per-token dequant tiles", self.spec, set)

    def update_params(self, params: PerTokenDequantParams) -> None:
        """CATLASS ``UpdateParams``: point at the next group's scales and output."""
        self.params = params

    def __call__(self, block_shape, block_coord, actual_block_shape, gm_block_c: GlobalTensor, layout_block_c,
                 callback: Callable[[], None] | None = None) -> None:
        """Dequantise one block of C (already stored by the AIC at ``gm_block_c``) into D."""
        spec, ctx, p = self.spec, self.ctx, self.params
        tile_shape = MatrixCoord(*spec.tile_shape)
        block_shape, block_coord, actual = GemmCoord(*block_shape), GemmCoord(*block_coord), GemmCoord(*actual_block_shape)
        block_offset = block_coord.mn * block_shape.mn
        tiles = spec.tile_plan(actual.mn)
        loops = len(tiles)
        sub, nsub = ctx.sub_block_idx, ctx.sub_block_num
        copy = spec.tile_copy
        count = spec.tile_shape.count
        if p.ptr_d is None:
            raise ArgumentError("BlockEpilogue: params not set (call update_params first)")

        if actual.k == 0:  # nothing multiplied: D is zero
            for loop in range(sub, loops, nsub):
                tshape, in_block = tiles[loop][1:3]
                off = block_offset + in_block
                s = self.ub_list_id
                ctx.wait_flag(HardEvent.MTE3_V, s)
                duplicate(self.ub_d[s], 0, count)
                ctx.set_flag(HardEvent.V_MTE3, s)
                ctx.wait_flag(HardEvent.V_MTE3, s)
                gm_tile_d = p.ptr_d[p.layout_d.offset(*off)]
                copy.copy_ub_to_gm_d(gm_tile_d, self.ub_d[s], p.layout_d.get_tile_layout(*tshape),
                                     RowMajor(tshape.row, tshape.column, tile_shape.column))
                ctx.set_flag(HardEvent.MTE3_V, s)
                ctx.mark("epilogue_tile", tile=loop, row=off.row, col=off.column, rows=tshape.row, cols=tshape.column,
                         d_offset=gm_tile_d.element_offset, zero=True)
                self.ub_list_id = (s + 1) % spec.ub_stages
            return
        if callback is not None:
            callback()
        # The flag ops below use event ids 3s .. 3s+2 and s of a UB stage s (valid ids: the assembly checked
        # 3 * UB_STAGES against the hardware's count), so when nobody observes sync events the core's quick ops
        # do exactly what set_flag / wait_flag do.
        quick = ctx.unobserved_flag_ops() if loops > sub else None
        set_flag, wait_flag = quick if quick is not None else (ctx.set_flag, ctx.wait_flag)
        # A tile whose geometry already ran through the ops below, on this or another vector core of the launch,
        # repeats their data work (_TileReplay) when no sync-site editor is present and either nobody observes
        # instructions or flags (its flags then only move the core's queues), or every observer of them takes
        # templates (the cost model): the first tile of a geometry is then captured as one, with its GM regions,
        # and each repeat replays it with its own flag sequence numbers and GM regions.
        bus = ctx.bus
        seqs: list[int] | None = [] if bus.templates else None
        can_replay = (loops > sub and ctx.numerics and (seqs is not None or not bus.instructions)
                      and ctx.replay_flags((), seqs))  # (no flags: whether the core can repeat them)
        replays = self._replays if can_replay else None
        proven = self._proven() if replays is not None else None
        if replays is not None:  # what a tile's geometry key takes from the block and the group's params
            block_key = (id(proven), layout_block_c.__class__, layout_block_c._geom, p.layout_scale.__class__,
                         p.layout_scale._geom, p.layout_per_token_scale.__class__, p.layout_per_token_scale._geom,
                         p.layout_d.__class__, p.layout_d._geom, gm_block_c.dtype, p.ptr_scale.dtype,
                         p.ptr_per_token_scale.dtype, p.ptr_d.dtype)

        for loop in range(sub, loops, nsub):
            _, tshape, in_block, ub_layout, columns, rows_layout = tiles[loop]
            off = block_offset + in_block
            s = self.ub_list_id
            if replays is not None:
                gm_c = gm_block_c[layout_block_c.offset(*in_block)]
                gm_x = p.ptr_scale[p.layout_scale.offset(off.column)]
                gm_y = p.ptr_per_token_scale[p.layout_per_token_scale.offset(off.row)]
                gm_d = p.ptr_d[p.layout_d.offset(*off)]
                key = (s, tshape.row, tshape.column, block_key)
                replay = replays.get(key, _MISSING)
                if replay is _MISSING:
                    replay = None
                    if key in proven:
                        replay = replays[key] = _TileReplay.build(
                            self, s, tshape.row, tshape.column, ub_layout,
                            gm_c, layout_block_c.get_tile_layout(*tshape),
                            gm_x, p.layout_scale.get_tile_layout(tshape.column),
                            gm_y, p.layout_per_token_scale.get_tile_layout(tshape.row),
                            gm_d, p.layout_d.get_tile_layout(*tshape))
                if replay is not None and replay.run(gm_c, gm_x, gm_y, gm_d):
                    ctx.replay_flags(_tile_flags(s), seqs)
                    if seqs is not None:
                        bus.replay(ctx.core, key, seqs, gm=_regions(gm_c, gm_x, gm_y, gm_d))
                        seqs.clear()
                    ctx.mark("epilogue_tile", tile=loop, row=off.row, col=off.column, rows=tshape.row,
                             cols=tshape.column, d_offset=gm_d.element_offset, zero=False)
                    self.ub_list_id = (s + 1) % spec.ub_stages
                    continue
            # rows past the actual tile are never stored: when nobody checks instructions (no observer of them,
            # or only observers that time them), the vector ops compute the actual rows only (same checks and
            # events; the stale rows are left as they are)
            rows = None if bus.instructions and not bus.templates else tshape.row
            valid = None if rows is None else rows * tile_shape.column
            capture = replays is not None and seqs is not None
            if capture:
                bus.capture_begin(ctx.core)

            wait_flag(HardEvent.V_MTE2, 3 * s)
            copy.copy_gm_to_ub_c(self.ub_c[s], gm_block_c[layout_block_c.offset(*in_block)], ub_layout,
                                 layout_block_c.get_tile_layout(*tshape))
            set_flag(HardEvent.MTE2_V, 3 * s)

            wait_flag(HardEvent.V_MTE2, 3 * s + 1)
            copy.copy_gm_to_ub_x(self.ub_scale[s], p.ptr_scale[p.layout_scale.offset(off.column)],
                                 columns, p.layout_scale.get_tile_layout(tshape.column))
            set_flag(HardEvent.MTE2_V, 3 * s + 1)

            wait_flag(HardEvent.V_MTE2, 3 * s + 2)
            copy.copy_gm_to_ub_y(self.ub_per_token[s], p.ptr_per_token_scale[p.layout_per_token_scale.offset(off.row)],
                                 rows_layout, p.layout_per_token_scale.get_tile_layout(tshape.row))
            set_flag(HardEvent.MTE2_V, 3 * s + 2)

            wait_flag(HardEvent.MTE2_V, 3 * s)
            vector_cast(self.ub_c_fp32, self.ub_c[s], RoundMode.RINT, count, valid)
            set_flag(HardEvent.V_MTE2, 3 * s)

            if spec.float_scales:
                ctx.pipe_barrier(Pipe.V)  # the row multiply reads the Cast's fp32 C
                wait_flag(HardEvent.MTE2_V, 3 * s + 1)
                spec.tile_row_broadcast_mul(self.ub_mul, self.ub_c_fp32, self.ub_scale[s], rows)
                set_flag(HardEvent.V_MTE2, 3 * s + 1)
                wait_flag(HardEvent.MTE2_V, 3 * s + 2)
                spec.tile_broadcast_one_blk(self.ub_brcb, self.ub_per_token[s], rows)
                set_flag(HardEvent.V_MTE2, 3 * s + 2)
            else:
                wait_flag(HardEvent.MTE2_V, 3 * s + 1)
                vector_cast(self.ub_scale_fp32, self.ub_scale[s], RoundMode.NONE, tile_shape.column)
                set_flag(HardEvent.V_MTE2, 3 * s + 1)
                wait_flag(HardEvent.MTE2_V, 3 * s + 2)
                vector_cast(self.ub_per_token_fp32, self.ub_per_token[s], RoundMode.NONE, tile_shape.row, rows)
                set_flag(HardEvent.V_MTE2, 3 * s + 2)
                ctx.pipe_barrier(Pipe.V)
                spec.tile_row_broadcast_mul(self.ub_mul, self.ub_c_fp32, self.ub_scale_fp32, rows)
                spec.tile_broadcast_one_blk(self.ub_brcb, self.ub_per_token_fp32, rows)
            ctx.pipe_barrier(Pipe.V)
            spec.tile_one_blk_column_broadcast_mul(self.ub_per_token_mul, self.ub_mul, self.ub_brcb, rows)
            ctx.pipe_barrier(Pipe.V)

            wait_flag(HardEvent.MTE3_V, s)
            vector_cast(self.ub_d[s], self.ub_per_token_mul, RoundMode.RINT, count, valid)
            set_flag(HardEvent.V_MTE3, s)

            wait_flag(HardEvent.V_MTE3, s)
            gm_tile_d = p.ptr_d[p.layout_d.offset(*off)]
            copy.copy_ub_to_gm_d(gm_tile_d, self.ub_d[s], p.layout_d.get_tile_layout(*tshape), ub_layout)
            set_flag(HardEvent.MTE3_V, s)
            captured = capture and bus.capture_end(ctx.core, key, _regions(gm_c, gm_x, gm_y, gm_d))
            # row/col: the tile's origin in this group's D; d_offset: its element offset in the whole D buffer.
            ctx.mark("epilogue_tile", tile=loop, row=off.row, col=off.column, rows=tshape.row, cols=tshape.column,
                     d_offset=gm_tile_d.element_offset, zero=False)
            if replays is not None and (captured or not capture):
                proven.add(key)
            self.ub_list_id = (s + 1) % spec.ub_stages


def _regions(*tensors: GlobalTensor) -> tuple[tuple[int, int], ...]:
    """The GM regions of a tile's template (:meth:`ObserverBus.capture_end`): each tensor's buffer and byte offset."""
    return tuple((t.buffer.id, t.byte_offset) for t in tensors)


@functools.lru_cache(maxsize=None)
def _tile_flags(s: int) -> tuple:
    """The intra-core flags of one tile of UB stage ``s`` as ``(is_set, event, event_id)``, in the order
    :meth:`_PerTokenDequantBlock.__call__` issues them around its ops (the same for both scale specialisations): the
    three GM -> UB loads, the three vector steps that free their buffers, the cast into ``ub_d`` and the store
    (:meth:`CoreContext.replay_flags`)."""
    v_mte2, mte2_v = HardEvent.V_MTE2, HardEvent.MTE2_V
    a = 3 * s
    ops = []
    for i in (a, a + 1, a + 2):
        ops += [(False, v_mte2, i), (True, mte2_v, i)]
    for i in (a, a + 1, a + 2):
        ops += [(False, mte2_v, i), (True, v_mte2, i)]
    ops += [(False, HardEvent.MTE3_V, s), (True, HardEvent.V_MTE3, s), (False, HardEvent.V_MTE3, s),
            (True, HardEvent.MTE3_V, s)]
    return tuple(ops)


class _TileReplay:
    """The data work of one tile geometry of a :class:`_PerTokenDequantBlock` as numpy views made once, for a core
    on which nobody observes instructions or flags (the ops then publish nothing and the flags only move the
    core's queues, :func:`_tile_flags`), or every observer of them takes templates (the cost model: the geometry's
    first tile is its template, and a repeat replays it with the repeat's flag sequence numbers and GM regions,
    :meth:`~catlass_py.arch.events.ObserverBus.replay`).

    The geometry (UB stage, actual rows and columns, the GM layouts' classes and strides, the GM dtypes: the key
    in ``__call__``) first runs through the tile ops, which make every check; what those checks depend on beside
    the key is where the four GM regions lie, which :meth:`run` checks for every tile before it touches a byte.
    Per tile it then writes the same bytes the ops write, with the same numpy operations:

    =====================  ====================================================================================
    step                   bytes written
    =====================  ====================================================================================
    C, scale, per-token    ``ub_c[s]`` rows x cols at the tile pitch, ``ub_scale[s][:cols]``,
    GM -> UB               ``ub_per_token[s][:rows]`` (``CopyGm2Ub``)
    Cast C (RINT)          ``ub_c_fp32[:rows * COLUMN]``
    scales to fp32         bf16/fp16 scales only: ``ub_scale_fp32[:COLUMN]``, ``ub_per_token_fp32[:rows]``
    row mul, Brcb,         ``ub_mul``, ``ub_brcb``, the per-token product: the first ``rows`` rows
    column mul
    Cast D (RINT)          ``ub_d[s][:rows * COLUMN]``
    UB -> GM               D rows x cols (``CopyUb2Gm``)
    =====================  ====================================================================================

    :meth:`build` returns None when a region is not one strided view or an op is not the standard one (a
    subclass, or a conversion that is not numpy's own); :meth:`run` returns False, having written nothing, when a
    GM region passes the end of its buffer or D is read-only: the caller then runs the ops, which raise the error.
    """

    __slots__ = ("brcb", "c", "cast_d", "casts", "col_mul", "d", "row_mul", "x", "y")

    @classmethod
    def build(cls, block: _PerTokenDequantBlock, s: int, rows: int, cols: int, ub_layout, gm_c, layout_c, gm_x,
              layout_x, gm_y, layout_y, gm_d, layout_d) -> _TileReplay | None:
        spec = block.spec
        copy = spec.tile_copy
        if not (rows and cols and type(copy.copy_gm_to_ub_c) is CopyGm2Ub and type(copy.copy_gm_to_ub_x) is CopyGm2Ub
                and type(copy.copy_gm_to_ub_y) is CopyGm2Ub and type(copy.copy_ub_to_gm_d) is CopyUb2Gm
                and type(spec.tile_row_broadcast_mul) is TileRowBroadcastMul
                and type(spec.tile_broadcast_one_blk) is TileBroadcastOneBlk
                and type(spec.tile_one_blk_column_broadcast_mul) is TileOneBlkColumnBroadcastMul
                and layout_x.__class__ is VectorLayout and layout_y.__class__ is VectorLayout):
            return None
        ub_c, ub_x, ub_y, ub_d = block.ub_c[s], block.ub_scale[s], block.ub_per_token[s], block.ub_d[s]
        c = gm_copy_plan(ub_c, ub_layout, gm_c, layout_c, rows, cols)
        d = gm_copy_plan(ub_d, ub_layout, gm_d, layout_d, rows, cols)
        x = _vector_plan(ub_x, gm_x, layout_x, cols)
        y = _vector_plan(ub_y, gm_y, layout_y, rows)
        f32, rint, none = dt.FLOAT32, RoundMode.RINT, RoundMode.NONE
        conversions = [(ub_c.dtype, f32, rint), (f32, ub_d.dtype, rint)]
        if not spec.float_scales:
            conversions += [(ub_x.dtype, f32, none), (ub_y.dtype, f32, none)]
        if (c is None or d is None or x is None or y is None
                or not all(plain_conversion(a.numpy, b, mode) for a, b, mode in conversions)):
            return None
        self = cls()
        self.c, self.d, self.x, self.y = c, d, x, y
        tr, tc = spec.tile_shape
        count, valid = tr * tc, rows * tc
        self.casts = [(block.ub_c_fp32.view(count)[:valid], ub_c.view(count)[:valid])]
        if spec.float_scales:
            scale, per_token = ub_x, ub_y
        else:
            scale, per_token = block.ub_scale_fp32, block.ub_per_token_fp32
            self.casts += [(scale.view(tc), ub_x.view(tc)), (per_token.view(tr)[:rows], ub_y.view(tr)[:rows])]
        mul, brcb, out = block.ub_mul, block.ub_brcb, block.ub_per_token_mul
        blk = spec.tile_broadcast_one_blk.blk
        if spec.tile_broadcast_one_blk.compute_length != tr or spec.tile_one_blk_column_broadcast_mul.blk != blk:
            return None
        self.row_mul = (block.ub_c_fp32.view(count)[:valid].reshape(rows, tc), scale.view(tc),
                        mul.view(count)[:valid].reshape(rows, tc))
        self.brcb = (brcb.view(tr * blk)[:rows * blk].reshape(rows, blk), per_token.view(tr)[:rows, None])
        self.col_mul = (mul.view(count)[:valid].reshape(rows, tc // blk, blk),
                        brcb.view(tr * blk)[:rows * blk].reshape(rows, 1, blk),
                        out.view(count)[:valid].reshape(rows, tc // blk, blk))
        self.cast_d = (ub_d.view(count)[:valid], out.view(count)[:valid])
        return self

    def run(self, gm_c, gm_x, gm_y, gm_d) -> bool:
        c, x, y, d = self.c, self.x, self.y, self.d
        if (c[4] >= gm_c.size or x[4] >= gm_x.size or y[4] >= gm_y.size or d[4] >= gm_d.size
                or gm_d.buffer.read_only):
            return False
        for plan, gm in ((c, gm_c), (x, gm_x), (y, gm_y)):
            np.copyto(plan[0], np.ndarray(plan[1], plan[3], buffer=gm.buffer.raw, offset=gm.byte_offset,
                                          strides=plan[2]))
        for dst, src in self.casts:
            np.copyto(dst, src, casting="unsafe")
        with np.errstate(all="ignore"):  # as the tile ops: the vector unit raises nothing
            np.multiply(*self.row_mul[:2], out=self.row_mul[2])
            self.brcb[0][:] = self.brcb[1]
            np.multiply(*self.col_mul[:2], out=self.col_mul[2])
        with np.errstate(over="ignore", invalid="ignore"):  # as vector_cast to fp16 / bf16
            np.copyto(*self.cast_d, casting="unsafe")
        np.copyto(np.ndarray(d[1], d[3], buffer=gm_d.buffer.raw, offset=gm_d.byte_offset, strides=d[2]), d[0])
        return True


def _vector_plan(ub: LocalTensor, gm: GlobalTensor, layout: VectorLayout, n: int):
    """``(UB view, GM view shape, GM view byte strides, GM view dtype, largest GM element offset)`` of the
    ``CopyGm2Ub`` of ``n`` elements through the VectorLayout ``layout`` into ``ub``'s first ``n``, or None."""
    if ub.dtype.packed or gm.dtype.packed or ub.dtype.numpy != gm.dtype.numpy or n > ub.count:
        return None
    npd = gm.dtype.numpy
    stride = layout.stride[0]
    return ub.view(n), (n,), (stride * npd.itemsize,), npd, (n - 1) * stride
