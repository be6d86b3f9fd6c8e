"""CATLASS example 19's generic ``MLAKernel`` (``examples/19_mla/mla_kernel.cpp``): multi-head latent attention
decode over a paged KV cache (one KV head of 512 + 64 dimensions, V = the first 512 of K), for ``numHeads != 128``.

Work split. A *process* is (batch entry of the tiling, head split, KV split part). Without a KV split the
processes are dealt to the cores in a zig-zag (even rounds forward, odd rounds backward: ``realProcess``) and the
KV-part index flips direction every task (``kerFlag``); with the split (flash decoding) process ``p`` belongs to the
batch whose prefix-sum range ``CUTASK_START_OFFSET`` holds it. A task walks its KV part in paged blocks of 128.

Pipeline per AI core (S, P double-buffered by ``pingpongIdx``):

=================  ============================================  ==============================================
who                step for KV block ``n``                       flags (mode 2: both vector cores)
=================  ============================================  ==============================================
AIC                S_n = [Q, Q_rope] [K_n, K_rope_n]^T (QK)       set ``qkReady`` (1) on PIPE_FIX
AIV                P_n = softmax(S_n)                            wait ``qkReady``; set ``softmaxReady`` (2) on
                                                                 PIPE_MTE3
AIC                O_tmp = P_{n-1} V_{n-1} (PV, one block behind) waits ``softmaxReady`` in the PV block; set
                                                                 ``pvReady`` (3) on PIPE_FIX
AIV                rescale the running O with O_tmp              wait ``pvReady``
=================  ============================================  ==============================================

The last block of a task issues the next task's first QK / softmax before its own PV. With the KV split each
part ends with its partial O and lse in GM; after a barrier of all vector cores (``CrossCoreBarrier<0,
PIPE_MTE3>``) the flash-decoding epilogue combines them.

Two deviations from the C++, each closing a race the detector reports. First, the QK block loads a task's Q into its one L1 Q buffer (``nIdx == 0``) with no wait,
and the C++ kernel issues that load for the next task while the previous task's last QK may still be copying
its Q from L1 to L0A (a write after read between PIPE_MTE1 and PIPE_MTE2 that no flag orders; the race detector
reports it on any core that runs two tasks). Here the kernel sets ``MTE1_MTE2`` event ``Q_L1_FREE_EVENT`` (an
id the C++ sets at the start and waits at the end without using it) after each task's last QK and waits for it
before each task's first QK. Second, each vector core keeps its rows of the running output in its own half of
the AI core's GM update workspace (``coreIdx * TMP_SIZE + subBlockIdx * TMP_SIZE / 2``; at most 64 rows of 512
floats): the C++ places them by their row in the task, so when consecutive tasks split their heads differently
one vector core's first rescale of a task can overwrite update rows the other still reads for the previous task.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from catlass_py.arch.flags import CrossCoreFlag
from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.epilogue.block.mla_fd_rescale_o import BlockEpilogueMLAFDRescaleO
from catlass_py.epilogue.block.mla_rescale_o import BlockEpilogueMLARescaleO
from catlass_py.epilogue.block.mla_softmax import BlockEpilogueMLASoftmax
from catlass_py.errors import ConfigError
from catlass_py.gemm.block.attention_calls import MLA_PV_CALL, MLA_QK_CALL
from catlass_py.gemm.block.block_mmad import check_block_mmad
from catlass_py.gemm.block.capabilities import BlockMmadRequirement
from catlass_py.gemm.coord import GemmCoord, MatrixCoord, round_up
from catlass_py.kernel.mla_tiling import (
    CUTASK_START_OFFSET,
    TILING_BATCH,
    TILING_BLOCKSIZE,
    TILING_HEAD_SPLIT_NUM,
    TILING_HEAD_SPLIT_SIZE,
    TILING_HEADDIM,
    TILING_HEADDIM_ROPE,
    TILING_HEADSIZE,
    TILING_KVCORENUM,
    TILING_KVHEADS,
    TILING_MAXBLOCKS,
    TILING_NUMHEADS,
    TILING_PARASIZE,
    TILING_PROCESSNUM,
    TILING_TOR,
)
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.tile.ascendc_copy import gm_get_value
from catlass_py.tile.ascendc_vector import reset_vector_mask

QK_READY_ID = 1
SOFTMAX_READY_ID = 2
PV_READY_ID = 3
BLOCK_SIZE = 16
#: The MTE1_MTE2 event id that orders a task's Q load after the previous task's last read of Q (module docstring).
Q_L1_FREE_EVENT = 4
TMP_SIZE = 65536
TMP_SIZE_DECODER = 32768


@dataclass(frozen=True)
class MLAParams:
    """``MLAKernel::Params``: the GM tensors (the tiling array included)."""

    q: GlobalTensor
    q_rope: GlobalTensor
    k: GlobalTensor
    k_rope: GlobalTensor
    block_tables: GlobalTensor
    o: GlobalTensor
    s: GlobalTensor
    p: GlobalTensor
    o_tmp: GlobalTensor
    o_update: GlobalTensor
    o_core_tmp: GlobalTensor
    l: GlobalTensor
    tiling: GlobalTensor


@dataclass
class _Task:
    entry: int
    q_seqlen: int
    kv_seqlen: int
    kv_split_per_core: int
    kv_split_core_num: int
    head_split_idx: int
    n_idx_part: int
    heads: int
    start_head: int
    cur_kv_seqlen: int


class MLAKernel:
    """CATLASS ``MLAKernel<BlockMmadQK, BlockMmadPV, EpilogueMLASoftmax, EpilogueMLARescaleO,
    EpilogueMLAFDRescaleO>`` (module docstring)."""

    Params = MLAParams

    def __init__(self, block_mmad_qk, block_mmad_pv, epilogue_mla_softmax, epilogue_mla_rescale_o,
                 epilogue_mla_fd_rescale_o):
        what = "MLAKernel"
        for name, block, call in (("BlockMmadQK", block_mmad_qk, MLA_QK_CALL), ("BlockMmadPV", block_mmad_pv, MLA_PV_CALL)):
            check_block_mmad(f"{what}: {name}", block, BlockMmadRequirement(
                call, asynchronous=False, reason="the kernel signals the vector cores right after the call"))
        for name, obj, cls in (("EpilogueMLASoftmax", epilogue_mla_softmax, BlockEpilogueMLASoftmax),
                               ("EpilogueMLARescaleO", epilogue_mla_rescale_o, BlockEpilogueMLARescaleO),
                               ("EpilogueMLAFDRescaleO", epilogue_mla_fd_rescale_o, BlockEpilogueMLAFDRescaleO)):
            if not isinstance(obj, cls):
                raise ConfigError(f"{what}: {name} must be an assembled {cls.__name__}, got {obj!r}")
        elements = {block_mmad_qk.element_a, block_mmad_pv.element_a, epilogue_mla_softmax.element_output,
                    epilogue_mla_rescale_o.element_output, epilogue_mla_fd_rescale_o.output_type.element}
        if len(elements) != 1:
            raise ConfigError(f"{what}: Q, K, P and O must share one element type, got {sorted(map(str, elements))}")
        self.block_mmad_qk, self.block_mmad_pv = block_mmad_qk, block_mmad_pv
        self.epilogue_mla_softmax = epilogue_mla_softmax
        self.epilogue_mla_rescale_o = epilogue_mla_rescale_o
        self.epilogue_mla_fd_rescale_o = epilogue_mla_fd_rescale_o
        self.arch = block_mmad_qk.arch
        self.element = block_mmad_qk.element_a
        self.qk_ready = CrossCoreFlag(QK_READY_ID)
        self.softmax_ready = CrossCoreFlag(SOFTMAX_READY_ID)
        self.pv_ready = CrossCoreFlag(PV_READY_ID)

    # -- the process walk ------------------------------------------------------------------------------------
    @staticmethod
    def _tv(ctx, g, i: int) -> int:
        return int(gm_get_value(ctx, g, i))

    def _task(self, ctx, g, state: dict, process: int, core_num: int, head) -> _Task | None:
        """Map ``process`` to its task (the C++ body before ``if (kvSeqlen == 0) continue``), updating the
        zig-zag state (``isForward``, ``kerFlag``, ``taskIdx``) in ``state``; None for a process to skip."""
        batch, split_num, max_kv_split, process_num, tiling_process, head_size, para_size, split_size, q_heads = head
        if tiling_process != 0:
            while state["task_idx"] < batch and process >= self._tv(ctx, g, CUTASK_START_OFFSET + state["task_idx"] + 1):
                state["task_idx"] += 1
            cur_batch = state["task_idx"]
        else:
            big = process - (process % core_num) + (core_num - 1)
            big = min(big, process_num - 1)
            real = process if state["forward"] else big - process % core_num
            state["forward"] = not state["forward"]
            cur_batch = real // (split_num * max_kv_split)
        off = head_size + para_size * cur_batch
        q_seqlen = self._tv(ctx, g, off)
        kv_seqlen = self._tv(ctx, g, off + 1)
        per_core = self._tv(ctx, g, off + 15)
        core_cnt = self._tv(ctx, g, off + 16)
        if kv_seqlen == 0:
            return None
        if tiling_process != 0:
            head_idx = 0
            n_part = process - self._tv(ctx, g, CUTASK_START_OFFSET + cur_batch)
        else:
            head_idx = (process % (split_num * max_kv_split)) // max_kv_split
            n_part = process % max_kv_split
            if state["ker"]:
                state["ker"] = False
            else:
                state["ker"] = True
                n_part = max_kv_split - n_part - 1
        heads = q_heads - head_idx * split_size if head_idx == split_num - 1 else split_size
        if n_part >= core_cnt:
            return None
        cur_kv = kv_seqlen - n_part * per_core if n_part == core_cnt - 1 else per_core
        return _Task(cur_batch, q_seqlen, kv_seqlen, per_core, core_cnt, head_idx, n_part, heads, head_idx * split_size,
                     cur_kv)

    def _head(self, ctx, g) -> tuple:
        batch = self._tv(ctx, g, TILING_BATCH)
        split_num = self._tv(ctx, g, TILING_HEAD_SPLIT_NUM)
        max_kv_split = self._tv(ctx, g, TILING_KVCORENUM)
        tiling_process = self._tv(ctx, g, TILING_PROCESSNUM)
        process_num = tiling_process if tiling_process != 0 else batch * split_num * max_kv_split
        return (batch, split_num, max_kv_split, process_num, tiling_process, self._tv(ctx, g, TILING_HEADSIZE),
                self._tv(ctx, g, TILING_PARASIZE), self._tv(ctx, g, TILING_HEAD_SPLIT_SIZE),
                self._tv(ctx, g, TILING_NUMHEADS))

    def _next_task(self, ctx, g, state: dict, process: int, core_num: int, head):
        """The first valid process after ``process`` on this core (the C++ look-ahead loop, on a copy of the
        zig-zag state)."""
        look = dict(state)
        for nxt in range(process + core_num, head[3], core_num):
            task = self._task(ctx, g, look, nxt, core_num, head)
            if task is not None:
                return task
        return None

    # -- AIC --------------------------------------------------------------------------------------------------
    def aic(self, ctx, params: MLAParams) -> None:
        """The ``__DAV_CUBE__`` half of ``operator()``."""
        ctx.set_flag(HardEvent.M_MTE1, 0)
        ctx.set_flag(HardEvent.M_MTE1, 1)
        ctx.set_flag(HardEvent.M_MTE1, 2)
        ctx.set_flag(HardEvent.M_MTE1, 3)
        ctx.set_flag(HardEvent.M_MTE1, 4)
        ctx.set_flag(HardEvent.M_MTE1, 5)
        ctx.set_flag(HardEvent.M_MTE1, 6)
        ctx.set_flag(HardEvent.M_MTE1, 7)
        ctx.set_flag(HardEvent.FIX_M, 0)
        ctx.set_flag(HardEvent.FIX_M, 1)
        ctx.set_flag(HardEvent.MTE1_MTE2, 0)
        ctx.set_flag(HardEvent.MTE1_MTE2, 1)
        ctx.set_flag(HardEvent.MTE1_MTE2, 2)
        ctx.set_flag(HardEvent.MTE1_MTE2, 3)
        ctx.set_flag(HardEvent.MTE1_MTE2, 4)
        ctx.set_flag(HardEvent.MTE1_MTE2, 5)
        ctx.set_flag(HardEvent.MTE1_MTE2, 6)
        ctx.set_flag(HardEvent.MTE1_MTE2, 7)
        ctx.set_flag(HardEvent.FIX_MTE1, 0)
        ctx.set_flag(HardEvent.FIX_MTE1, 1)
        ctx.set_flag(HardEvent.FIX_MTE1, 2)
        ctx.set_flag(HardEvent.FIX_MTE1, 3)
        ctx.set_flag(HardEvent.FIX_MTE1, 4)
        ctx.set_flag(HardEvent.FIX_MTE1, 5)
        ctx.set_flag(HardEvent.MTE2_FIX, 0)
        g = params.tiling
        qk = self.block_mmad_qk(ctx.resource)
        pv = self.block_mmad_pv(ctx.resource)
        head = self._head(ctx, g)
        q_heads = head[8]
        embed = self._tv(ctx, g, TILING_HEADDIM)
        block_size = self._tv(ctx, g, TILING_BLOCKSIZE)
        embed_rope = self._tv(ctx, g, TILING_HEADDIM_ROPE)
        max_blocks = self._tv(ctx, g, TILING_MAXBLOCKS)
        kv_heads = self._tv(ctx, g, TILING_KVHEADS)
        embed_round = round_up(embed, BLOCK_SIZE)
        stride_kv = kv_heads * embed
        stride_kv_rope = kv_heads * embed_rope
        core_idx, core_num = ctx.block_idx, ctx.block_num
        state = {"forward": True, "ker": True, "task_idx": 0}
        pingpong = 0
        first_task = True

        def issue_qk(task: _Task, n_idx: int, k_seq_tile: int, pp_idx: int) -> None:
            if n_idx == 0:  # the deviation of the module docstring: Q's L1 buffer is free once the last QK read it
                ctx.wait_flag(HardEvent.MTE1_MTE2, Q_L1_FREE_EVENT)
            off = head[5] + head[6] * task.entry
            real_batch = self._tv(ctx, g, off + 2)
            q_addr = (self._tv(ctx, g, off + 4) << 32) | self._tv(ctx, g, off + 5)
            rope_addr = (self._tv(ctx, g, off + 6) << 32) | self._tv(ctx, g, off + 7)
            row_num = task.heads * task.q_seqlen
            start_kv = task.n_idx_part * task.kv_split_per_core
            table_id = self._tv_table(ctx, params.block_tables, real_batch * max_blocks + start_kv // block_size + n_idx)
            kv_off = table_id * block_size * stride_kv
            rope_off = table_id * block_size * stride_kv_rope
            s_off = core_idx * TMP_SIZE_DECODER + (pp_idx % 2) * TMP_SIZE_DECODER // 2
            ctx.mark("block", batch=real_batch, heads=task.heads, start_head=task.start_head, kv_part=task.n_idx_part,
                     kv_block=n_idx, rows=row_num)
            qk(params.q[q_addr + task.start_head * embed], params.q_rope[rope_addr + task.start_head * embed_rope],
               params.k[kv_off], params.k_rope[rope_off], params.s[s_off], RowMajor(row_num, embed),
               RowMajor(row_num, embed_rope), ColumnMajor(embed, k_seq_tile), ColumnMajor(embed_rope, k_seq_tile),
               RowMajor(round_up(row_num, BLOCK_SIZE), round_up(k_seq_tile, BLOCK_SIZE)),
               GemmCoord(row_num, k_seq_tile, embed + embed_rope), MatrixCoord(task.heads, embed), q_heads, n_idx, pp_idx)
            if n_idx == (task.cur_kv_seqlen + block_size - 1) // block_size - 1:
                ctx.set_flag(HardEvent.MTE1_MTE2, Q_L1_FREE_EVENT)

        for process in range(core_idx, head[3], core_num):
            task = self._task(ctx, g, state, process, core_num, head)
            if task is None:
                continue
            seq_tile = block_size
            n_loop = (task.cur_kv_seqlen + seq_tile - 1) // seq_tile
            k_seq_tile = seq_tile
            row_num = task.heads * task.q_seqlen
            if first_task and n_loop > 0:
                if n_loop - 1 == 0:
                    k_seq_tile = task.cur_kv_seqlen
                issue_qk(task, 0, k_seq_tile, pingpong)
                pingpong += 1
                ctx.cross_core_set_flag(self.qk_ready, 2, Pipe.FIX)
                first_task = False
            for n_idx in range(1, n_loop + 1):
                if n_idx != n_loop:
                    if n_idx == n_loop - 1:
                        k_seq_tile = task.cur_kv_seqlen - n_idx * seq_tile
                    issue_qk(task, n_idx, k_seq_tile, pingpong)
                    ctx.cross_core_set_flag(self.qk_ready, 2, Pipe.FIX)
                if n_idx == n_loop:
                    nxt = self._next_task(ctx, g, state, process, core_num, head)
                    if nxt is not None:
                        nxt_n_loop = (nxt.cur_kv_seqlen + seq_tile - 1) // seq_tile
                        nxt_tile = nxt.cur_kv_seqlen if nxt_n_loop - 1 == 0 else seq_tile
                        issue_qk(nxt, 0, nxt_tile, pingpong)
                        ctx.cross_core_set_flag(self.qk_ready, 2, Pipe.FIX)
                v_seq_tile = seq_tile
                if n_idx == n_loop:
                    v_seq_tile = task.cur_kv_seqlen - (n_idx - 1) * seq_tile
                pv_pp = (pingpong - 1) % 2
                p_off = core_idx * TMP_SIZE + pv_pp * TMP_SIZE // 2
                o_tmp_off = core_idx * TMP_SIZE * 2 + pv_pp * TMP_SIZE
                pv(params.p[p_off], params.o_tmp[o_tmp_off], RowMajor(row_num, v_seq_tile, round_up(v_seq_tile, BLOCK_SIZE)),
                   RowMajor(embed, v_seq_tile), RowMajor(round_up(row_num, BLOCK_SIZE), embed_round),
                   GemmCoord(row_num, embed, v_seq_tile), n_idx, pingpong, self.softmax_ready)
                ctx.cross_core_set_flag(self.pv_ready, 2, Pipe.FIX)
                pingpong += 1
        ctx.wait_flag(HardEvent.M_MTE1, 0)
        ctx.wait_flag(HardEvent.M_MTE1, 1)
        ctx.wait_flag(HardEvent.M_MTE1, 2)
        ctx.wait_flag(HardEvent.M_MTE1, 3)
        ctx.wait_flag(HardEvent.M_MTE1, 4)
        ctx.wait_flag(HardEvent.M_MTE1, 5)
        ctx.wait_flag(HardEvent.M_MTE1, 6)
        ctx.wait_flag(HardEvent.M_MTE1, 7)
        ctx.wait_flag(HardEvent.FIX_M, 0)
        ctx.wait_flag(HardEvent.FIX_M, 1)
        ctx.wait_flag(HardEvent.MTE1_MTE2, 0)
        ctx.wait_flag(HardEvent.MTE1_MTE2, 1)
        ctx.wait_flag(HardEvent.MTE1_MTE2, 2)
        ctx.wait_flag(HardEvent.MTE1_MTE2, 3)
        ctx.wait_flag(HardEvent.MTE1_MTE2, 4)
        ctx.wait_flag(HardEvent.MTE1_MTE2, 5)
        ctx.wait_flag(HardEvent.MTE1_MTE2, 6)
        ctx.wait_flag(HardEvent.MTE1_MTE2, 7)
        ctx.wait_flag(HardEvent.FIX_MTE1, 0)
        ctx.wait_flag(HardEvent.FIX_MTE1, 1)
        ctx.wait_flag(HardEvent.FIX_MTE1, 2)
        ctx.wait_flag(HardEvent.FIX_MTE1, 3)
        ctx.wait_flag(HardEvent.FIX_MTE1, 4)
        ctx.wait_flag(HardEvent.FIX_MTE1, 5)
        ctx.wait_flag(HardEvent.MTE2_FIX, 0)

    @staticmethod
    def _tv_table(ctx, table, i: int) -> int:
        return int(gm_get_value(ctx, table, i))

    # -- AIV --------------------------------------------------------------------------------------------------
    def aiv(self, ctx, params: MLAParams) -> None:
        """The ``__DAV_VEC__`` half of ``operator()``, run by both vector cores of every AI core."""
        ctx.set_flag(HardEvent.MTE3_V, 0)
        ctx.set_flag(HardEvent.MTE3_MTE2, 0)
        ctx.set_flag(HardEvent.MTE3_MTE2, 2)
        ctx.set_flag(HardEvent.MTE3_MTE2, 3)
        ctx.set_flag(HardEvent.MTE3_MTE2, 4)
        ctx.set_flag(HardEvent.MTE3_MTE2, 5)
        ctx.set_flag(HardEvent.MTE3_MTE2, 6)
        ctx.set_flag(HardEvent.MTE3_MTE2, 7)
        ctx.set_flag(HardEvent.V_MTE2, 0)
        ctx.set_flag(HardEvent.V_MTE2, 1)
        ctx.set_flag(HardEvent.V_MTE2, 4)
        ctx.set_flag(HardEvent.MTE3_V, 2)
        ctx.set_flag(HardEvent.MTE3_V, 3)
        ctx.set_flag(HardEvent.V_MTE2, 2)
        ctx.set_flag(HardEvent.V_MTE2, 3)
        g = params.tiling
        head = self._head(ctx, g)
        batch, max_kv_split, q_heads = head[0], head[2], head[8]
        embed = self._tv(ctx, g, TILING_HEADDIM)
        block_size = self._tv(ctx, g, TILING_BLOCKSIZE)
        embed_round = round_up(embed, BLOCK_SIZE)
        stride_qo = q_heads * embed
        tor = float(np.uint32(self._tv(ctx, g, TILING_TOR)).view(np.float32))
        gl_flag = [1, 1]
        softmax = self.epilogue_mla_softmax(ctx.resource, tor, max_kv_split)
        rescale = self.epilogue_mla_rescale_o(ctx.resource, max_kv_split)
        core_idx, core_num = ctx.ai_core_idx, ctx.block_num
        sub = ctx.sub_block_idx
        update_off = core_idx * TMP_SIZE + sub * TMP_SIZE // 2  # the second deviation of the module docstring
        state = {"forward": True, "ker": True, "task_idx": 0}
        pingpong = 0
        first_task = True
        task_pp = 0

        def issue_softmax(task: _Task, n_idx: int, k_seq_tile: int, pp_idx: int, t_pp: int) -> None:
            row_num = task.heads * task.q_seqlen
            k_round = round_up(k_seq_tile, BLOCK_SIZE)
            spp = pp_idx % 2
            ctx.cross_core_wait_flag(self.qk_ready)
            ctx.mark("epilogue_block", heads=task.heads, start_head=task.start_head, kv_part=task.n_idx_part,
                     kv_block=n_idx)
            softmax(params.p[core_idx * TMP_SIZE + spp * TMP_SIZE // 2],
                    params.s[core_idx * TMP_SIZE_DECODER + spp * TMP_SIZE_DECODER // 2],
                    RowMajor(row_num, k_seq_tile, k_round), RowMajor(round_up(row_num, BLOCK_SIZE), k_seq_tile, k_round),
                    GemmCoord(row_num, k_seq_tile, embed_round), n_idx, task.heads, spp, gl_flag, t_pp)
            ctx.cross_core_set_flag(self.softmax_ready, 2, Pipe.MTE3)

        for process in range(core_idx, head[3], core_num):
            task = self._task(ctx, g, state, process, core_num, head)
            if task is None:
                continue
            seq_tile = block_size
            n_loop = (task.cur_kv_seqlen + seq_tile - 1) // seq_tile
            k_seq_tile = seq_tile
            row_num = task.heads * task.q_seqlen
            off = head[5] + head[6] * task.entry
            o_addr = (self._tv(ctx, g, off + 4) << 32) | self._tv(ctx, g, off + 5)
            g_o_off = o_addr + task.start_head * embed
            fd_off = l_off = 0
            if max_kv_split != 1:
                l_addr = (self._tv(ctx, g, off + 11) << 32) | self._tv(ctx, g, off + 12)
                fd_addr = (self._tv(ctx, g, off + 13) << 32) | self._tv(ctx, g, off + 14)
                head_idx = task.start_head + sub * task.heads // 2
                fd_off = fd_addr * max_kv_split + head_idx * embed * max_kv_split + task.n_idx_part * embed
                l_off = l_addr + head_idx * max_kv_split + task.n_idx_part
            if first_task and n_loop > 0:
                if n_loop - 1 == 0:
                    k_seq_tile = task.cur_kv_seqlen
                issue_softmax(task, 0, k_seq_tile, pingpong, task_pp)
                pingpong += 1
                first_task = False
            for n_idx in range(1, n_loop + 1):
                if n_idx != n_loop:
                    if n_idx == n_loop - 1:
                        k_seq_tile = task.cur_kv_seqlen - n_idx * seq_tile
                    issue_softmax(task, n_idx, k_seq_tile, pingpong, task_pp)
                if n_idx == n_loop:
                    nxt = self._next_task(ctx, g, state, process, core_num, head)
                    if nxt is not None:
                        nxt_n_loop = (nxt.cur_kv_seqlen + seq_tile - 1) // seq_tile
                        nxt_tile = nxt.cur_kv_seqlen if nxt_n_loop - 1 == 0 else seq_tile
                        issue_softmax(nxt, 0, nxt_tile, pingpong, 1 - task_pp)
                v_seq_tile = seq_tile
                if n_idx == n_loop:
                    v_seq_tile = task.cur_kv_seqlen - (n_idx - 1) * seq_tile
                ctx.cross_core_wait_flag(self.pv_ready)
                rpp = (pingpong - 1) % 2
                rescale(params.o_tmp[core_idx * TMP_SIZE * 2 + rpp * TMP_SIZE], params.o_update[update_off],
                        params.o[g_o_off], params.o_core_tmp[fd_off], params.l[l_off],
                        RowMajor(row_num, embed, embed_round), RowMajor(task.q_seqlen, stride_qo),
                        RowMajor(row_num, embed, embed_round), GemmCoord(row_num, embed, v_seq_tile), n_idx,
                        n_idx == n_loop, task.heads, rpp, gl_flag, task_pp)
                pingpong += 1
            task_pp = 1 - task_pp
        ctx.wait_flag(HardEvent.MTE3_V, 0)
        ctx.wait_flag(HardEvent.MTE3_MTE2, 0)
        ctx.wait_flag(HardEvent.MTE3_MTE2, 2)
        ctx.wait_flag(HardEvent.MTE3_MTE2, 3)
        ctx.wait_flag(HardEvent.MTE3_MTE2, 4)
        ctx.wait_flag(HardEvent.MTE3_MTE2, 5)
        ctx.wait_flag(HardEvent.MTE3_MTE2, 6)
        ctx.wait_flag(HardEvent.MTE3_MTE2, 7)
        ctx.wait_flag(HardEvent.V_MTE2, 4)
        ctx.wait_flag(HardEvent.V_MTE2, 0)
        ctx.wait_flag(HardEvent.V_MTE2, 1)
        ctx.wait_flag(HardEvent.MTE3_V, 2)
        ctx.wait_flag(HardEvent.MTE3_V, 3)
        ctx.wait_flag(HardEvent.V_MTE2, 2)
        ctx.wait_flag(HardEvent.V_MTE2, 3)
        if max_kv_split != 1:
            self._flash_decoding(ctx, params, head, embed)

    def _flash_decoding(self, ctx, params: MLAParams, head, embed: int) -> None:
        """The flash-decoding tail of ``operator()<AIV>``: barrier, then every vector core combines its share of
        (batch entry, token, head group)."""
        g = params.tiling
        batch, max_kv_split, q_heads = head[0], head[2], head[8]
        ctx.cross_core_barrier(0, Pipe.MTE3)
        reset_vector_mask(ctx)
        fd = self.epilogue_mla_fd_rescale_o
        with fd(ctx.resource, max_kv_split) as combine:
            aiv_num = ctx.block_num * ctx.sub_block_num
            aiv_id = ctx.block_idx
            heads_process = min(fd.compute_ele_num // embed, fd.policy.HEADS_PROCESS_MAX)
            loops_per_batch = (q_heads + heads_process - 1) // heads_process
            for loop in range(aiv_id, batch * loops_per_batch, aiv_num):
                b, in_batch = loop // loops_per_batch, loop % loops_per_batch
                off = head[5] + head[6] * b
                kv_seqlen = self._tv(ctx, g, off + 1)
                q_seqlen = self._tv(ctx, g, off)
                kv_cores = self._tv(ctx, g, off + 16)
                if kv_seqlen == 0:
                    continue
                o_addr = (self._tv(ctx, g, off + 4) << 32) | self._tv(ctx, g, off + 5)
                l_addr = (self._tv(ctx, g, off + 11) << 32) | self._tv(ctx, g, off + 12)
                fd_addr = (self._tv(ctx, g, off + 13) << 32) | self._tv(ctx, g, off + 14)
                heads = q_heads - in_batch * heads_process if in_batch == loops_per_batch - 1 else heads_process
                for t in range(q_seqlen):
                    ctx.mark("epilogue_tile", batch=b, token=t, start_head=in_batch * heads_process, heads=heads)
                    combine(params.o[o_addr + t * q_heads * embed + in_batch * heads_process * embed],
                            params.o_core_tmp[fd_addr * max_kv_split + t * q_heads * embed * max_kv_split
                                              + in_batch * heads_process * max_kv_split * embed],
                            params.l[l_addr + t * q_heads * max_kv_split + in_batch * heads_process * max_kv_split],
                            heads, heads_process, embed, kv_cores)


__all__ = ["MLAKernel", "MLAParams"]
