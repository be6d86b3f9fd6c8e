"""The MXFP8 transpose batch matmul of pypto-gym as a PTO cube kernel on simulated Ascend 950 cores.

Counterpart of pypto-gym ``transpose_quant_batch_matmul`` (seed 004; pto-mx-semantics 7), whose kernel calls
``pypto.scaled_mm`` per batch. Here each scaled matmul is written with the PTO tile instructions the way a
hand-written A5 kernel would (the PTO ``tmatmul_mx`` ST kernels)::

    out[m, b, n] = cast( sum_k (x1[m, b, k] * 2**(s1 - 127)) * (x2[b](k, n) * 2**(s2 - 127)) )

The output blocks (batch b, m0 x n0 tile of [M, N]) are dealt round-robin over the AI cores; only the cube
cores work (``aiv`` is None). Per block and K step (k0 elements, a multiple of 64):

=========  =====================================================================================  ==========
pipe       instruction                                                                            waits on
=========  =====================================================================================  ==========
MTE2       TLOAD x1 tile (ND, row stride B*K) -> L1 NZ; x2 tile (ND -> NZ, or DN -> ZN);           MTE1_MTE2
           x1Scale (MX_A_ND) -> L1 ZZ [16,2] boxes; x2Scale (MX_B_ND or MX_B_DN) -> L1 NN [2,16]
MTE1       TMOV Mat -> Left (NZ), Right (ZN), ScaleLeft (ZZ), ScaleRight (NN)                     MTE2_MTE1,
                                                                                                  M_MTE1
M          TMATMUL_MX (first K step) / TMATMUL_MX accumulate                                      MTE1_M,
                                                                                                  FIX_M
FIX        TSTORE L0C -> out (ND, row stride B*N) through the fixpipe cast F322BF16 / F322F16    M_FIX
=========  =====================================================================================  ==========

Buffers are single-buffered; the reverse flags (MTE1_MTE2, M_MTE1, FIX_M) are primed once and drained at
the end, so every wait has its set.

``saturation`` (default True) is the fixpipe's CTRL[48] setting the kernel writes first: saturating casts turn
an accumulator NaN (from an E8M0 0xFF scale) into 0 and overflow into +-max, where the float32 golden keeps
NaN / inf; ``saturation=False`` propagates them (Ascend C polarity: CTRL[48] = 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import HardEvent
from catlass_py.arch.spec import ASCEND_950, get_arch
from catlass_py.errors import ConfigError
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.tile.pto import (
    FRACTAL_MX,
    Tile,
    TileType,
    mx_gm_layout,
    set_ctrl,
    tile_acc,
    tile_left,
    tile_left_scale,
    tile_right,
    tile_right_scale,
    tload,
    tmatmul_mx,
    tmatmul_mx_acc,
    tmov,
    tstore,
)

MX_GROUP = 32
PERM_ND = (0, 1, 2)  # x2 [B, K, N]
PERM_DN = (0, 2, 1)  # x2 [B, N, K]


@dataclass(frozen=True)
class TransposeQuantBatchMatmulParams:
    """Device-side parameters: problem sizes and the GM tensors (x1 [M,B,K], x2 [B,K,N] or [B,N,K], scales as
    uint8 E8M0 bytes viewed as float8_e8m0, out [M,B,N])."""

    m: int
    batch: int
    k: int
    n: int
    x1: GlobalTensor
    x2: GlobalTensor
    x1_scale: GlobalTensor
    x2_scale: GlobalTensor
    out: GlobalTensor


class TransposeQuantBatchMatmulKernel:
    """pypto-gym ``transpose_quant_batch_matmul`` kernel: per batch an MXFP8 scaled matmul on the cube, the
    result cast to fp16/bf16 by the fixpipe (see the module docstring for the pipeline).

    Assembly checks (:class:`ConfigError`): Ascend 950; fp8 e4m3fn / e5m2 inputs; fp16 / bf16 output; perm_x2
    (0,1,2) or (0,2,1); ``tile_shape`` = (m0, n0, k0) with m0, n0 multiples of 16, k0 of 64, and the L1, L0A,
    L0B, L0C and L0A/L0B_MX budgets.
    """

    Params = TransposeQuantBatchMatmulParams
    aiv = None  # the vector cores have no work in this kernel

    def __init__(self, in_dtype="float8_e4m3fn", out_dtype="bfloat16", perm_x2=PERM_ND, tile_shape=(256, 256, 128),
                 arch=ASCEND_950, *, saturation: bool = True):
        what = "TransposeQuantBatchMatmulKernel"
        self.saturation = bool(saturation)
        self.arch = get_arch(arch)
        if self.arch.arch_code < 3510:
            raise ConfigError(f"{what}: the MX matmul exists only on Ascend 950, not on {self.arch.name}")
        self.in_dtype = get_dtype(in_dtype)
        self.out_dtype = get_dtype(out_dtype)
        if self.in_dtype.name not in ("float8_e4m3fn", "float8_e5m2"):
            raise ConfigError(f"{what}: inputs are fp8 e4m3fn or e5m2 (MXFP8), got {self.in_dtype.name}")
        if self.out_dtype.name not in ("float16", "bfloat16"):
            raise ConfigError(f"{what}: the output is float16 or bfloat16, got {self.out_dtype.name}")
        self.perm_x2 = tuple(perm_x2)
        if self.perm_x2 not in (PERM_ND, PERM_DN):
            raise ConfigError(f"{what}: perm_x2 must be (0, 1, 2) or (0, 2, 1), got {perm_x2!r}")
        m0, n0, k0 = (int(v) for v in tile_shape)
        if m0 <= 0 or n0 <= 0 or k0 <= 0 or m0 % 16 or n0 % 16 or k0 % 64:
            raise ConfigError(f"{what}: tile_shape (m0, n0, k0) needs m0 % 16 == 0, n0 % 16 == 0 and k0 % 64 == 0, "
                              f"got {tile_shape!r}")
        if max(m0, n0, k0) > 4095:
            raise ConfigError(f"{what}: m0, n0, k0 must not exceed 4095 (one Mmad), got {tile_shape!r}")
        self.tile_shape = (m0, n0, k0)
        kg = k0 // MX_GROUP
        l1 = {"a": m0 * k0, "b": k0 * n0, "sa": -(-m0 // 16) * 16 * kg, "sb": kg * -(-n0 // 16) * 16}
        self.l1_offsets = {}
        off = 0
        for name, size in l1.items():
            self.l1_offsets[name] = off
            off += -(-size // 512) * 512
        budgets = (("L1", off, self.arch.l1_size), ("L0A", m0 * k0, self.arch.l0a_size),
                   ("L0B", k0 * n0, self.arch.l0b_size), ("L0C", m0 * n0 * 4, self.arch.l0c_size),
                   ("L0A_MX", l1["sa"], self.arch.l0a_size // 16), ("L0B_MX", l1["sb"], self.arch.l0b_size // 16))
        for buf, need, have in budgets:
            if need > have:
                raise ConfigError(f"{what}: tile_shape {self.tile_shape} needs {need} bytes of {buf} but "
                                  f"{self.arch.name} has {have}")

    # -- host side ---------------------------------------------------------------------------------
    def block_count(self, m: int, batch: int, n: int) -> int:
        """Output blocks of a problem: batch x ceil(M/m0) x ceil(N/n0)."""
        m0, n0, _ = self.tile_shape
        return batch * -(-m // m0) * -(-n // n0)

    # -- cube core -----------------------------------------------------------------------------------
    def _tiles(self, ctx):
        m0, n0, k0 = self.tile_shape
        kg = k0 // MX_GROUP
        dt, off = self.in_dtype, self.l1_offsets
        b_fmt = "NZ" if self.perm_x2 == PERM_ND else "ZN"
        return {
            "a1": Tile.of("NZ", TileType.Mat, dt, m0, k0).assign(ctx, off["a"]),
            "b1": Tile.of(b_fmt, TileType.Mat, dt, k0, n0).assign(ctx, off["b"]),
            "sa1": Tile.of("ZZ", TileType.Mat, "float8_e8m0fnu", m0, kg, fractal=FRACTAL_MX).assign(ctx, off["sa"]),
            "sb1": Tile.of("NN", TileType.Mat, "float8_e8m0fnu", kg, n0, fractal=FRACTAL_MX).assign(ctx, off["sb"]),
            "a0": tile_left(dt, m0, k0, arch=self.arch).assign(ctx, 0),
            "b0": tile_right(dt, k0, n0).assign(ctx, 0),
            "sa0": tile_left_scale(m0, kg).assign(ctx, 0),
            "sb0": tile_right_scale(kg, n0).assign(ctx, 0),
            "c": tile_acc("float32", m0, n0).assign(ctx, 0),
        }

    def aic(self, ctx, p: TransposeQuantBatchMatmulParams) -> None:
        """The cube-core program: output blocks dealt round-robin; per block TLOAD -> TMOV -> TMATMUL_MX over K
        -> TSTORE through the fixpipe cast."""
        m0, n0, k0 = self.tile_shape
        M, B, K, N = p.m, p.batch, p.k, p.n
        KG = K // MX_GROUP
        t = self._tiles(ctx)
        m_tiles, n_tiles = -(-M // m0), -(-N // n0)
        total = B * m_tiles * n_tiles
        nd = self.perm_x2 == PERM_ND
        set_ctrl(ctx, 0 if self.saturation else 1 << 48)  # CTRL[48] = 0: saturating fixpipe casts (Ascend C)
        for e in (HardEvent.MTE1_MTE2, HardEvent.M_MTE1, HardEvent.FIX_M):
            ctx.set_flag(e)
        for i in range(ctx.block_idx, total, ctx.block_num):
            b, rest = divmod(i, m_tiles * n_tiles)
            mi, ni = divmod(rest, n_tiles)
            ms, ns = mi * m0, ni * n0
            mv, nv = min(m0, M - ms), min(n0, N - ns)
            ctx.mark("block", index=i, batch=b, m_idx=mi, n_idx=ni, rows=mv, cols=nv)
            for ks in range(0, K, k0):
                kv = min(k0, K - ks)
                gv = kv // MX_GROUP
                for name, (r, c) in (("a1", (mv, kv)), ("b1", (kv, nv)), ("sa1", (mv, gv)), ("sb1", (gv, nv)),
                                     ("a0", (mv, kv)), ("b0", (kv, nv)), ("sa0", (mv, gv)), ("sb0", (gv, nv))):
                    t[name].set_valid(r, c)
                t["c"].set_valid(mv, nv)
                ctx.wait_flag(HardEvent.MTE1_MTE2)
                tload(t["a1"], p.x1[(ms * B + b) * K + ks], RowMajor(mv, kv, B * K))
                if nd:
                    tload(t["b1"], p.x2[(b * K + ks) * N + ns], RowMajor(kv, nv, N))
                    tload(t["sb1"], p.x2_scale[b * KG * N + (ks // 64) * 2 * N + 2 * ns],
                          mx_gm_layout("MX_B_ND", gv, nv, ld=N))
                else:
                    tload(t["b1"], p.x2[(b * N + ns) * K + ks], ColumnMajor(kv, nv, K))
                    tload(t["sb1"], p.x2_scale[(b * N + ns) * KG + ks // MX_GROUP],
                          mx_gm_layout("MX_B_DN", gv, nv, ld=KG))
                tload(t["sa1"], p.x1_scale[(ms * B + b) * KG + ks // MX_GROUP], mx_gm_layout("MX_A_ND", mv, gv, ld=B * KG))
                ctx.set_flag(HardEvent.MTE2_MTE1)
                ctx.wait_flag(HardEvent.MTE2_MTE1)
                ctx.wait_flag(HardEvent.M_MTE1)
                for dst, src in (("a0", "a1"), ("b0", "b1"), ("sa0", "sa1"), ("sb0", "sb1")):
                    tmov(t[dst], t[src])
                ctx.set_flag(HardEvent.MTE1_MTE2)
                ctx.set_flag(HardEvent.MTE1_M)
                ctx.wait_flag(HardEvent.MTE1_M)
                if ks == 0:
                    ctx.wait_flag(HardEvent.FIX_M)
                    tmatmul_mx(t["c"], t["a0"], t["sa0"], t["b0"], t["sb0"])
                else:
                    tmatmul_mx_acc(t["c"], t["c"], t["a0"], t["sa0"], t["b0"], t["sb0"])
                ctx.set_flag(HardEvent.M_MTE1)
            ctx.set_flag(HardEvent.M_FIX)
            ctx.wait_flag(HardEvent.M_FIX)
            tstore(p.out[(ms * B + b) * N + ns], RowMajor(mv, nv, B * N), t["c"])
            ctx.set_flag(HardEvent.FIX_M)
        for e in (HardEvent.MTE1_MTE2, HardEvent.M_MTE1, HardEvent.FIX_M):
            ctx.wait_flag(e)


__all__ = ["PERM_DN", "PERM_ND", "TransposeQuantBatchMatmulKernel", "TransposeQuantBatchMatmulParams"]
