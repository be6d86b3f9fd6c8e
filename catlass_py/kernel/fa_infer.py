"""CATLASS example 23's ``FAInferKernel`` (``examples/23_flash_attention_infer/fai_kernel.cpp``) and its host
tiling (``fai_tiling.cpp``, ``kernel_common.hpp``): flash attention inference on the simulated AI cores.

Work split. For each batch ``b`` the rows of Q form ``qSBlockNum x qNBlockNum`` *tasks*: ``qSBlockTile = 128``
query tokens times ``qNBlockTile = clamp((128 / qSeqlen) / 2 * 2, 1, groupSize)`` query heads of one KV head
(GQA group). All tasks of all batches are dealt round robin over the AI cores (task ``t`` to core ``t %
coreNum``); inside a task the two vector cores split the rows (whole heads, or a single head's tokens in half).
A task walks its KV sequence in *stacks* of up to 512 columns (four 128-token KV blocks, read through the block
table when the cache is paged); with the causal mask it stops at the diagonal and the last stack is the
``qSBlockSize`` columns on the diagonal (the ``Tail`` blocks). Row ``h * qSBlockSize + t`` of a task is token
``t`` of its ``h``-th head.

Pipeline per AI core (``preLaunch = 2``, three workspace slots per core for S, P and O_tmp):

======================  =========================================  =================================================
who                     step, stack ``i``                          flags (mode 2: both vector cores)
======================  =========================================  =================================================
AIC                     S_i = Q K_i^T (QK block) to slot i % 3      set ``qkReady`` on PIPE_FIX
AIC (i >= 2)            O_tmp = P_{i-2} V (PV block) to slot        waits ``softmaxReady`` (inside the PV block),
                        (i-2) % 3                                  sets ``pvReady`` on PIPE_FIX
AIV                     P_i = online softmax of S_i                wait ``qkReady`` (masked stack: inside the
                                                                   epilogue, after its mask load), set
                                                                   ``softmaxReady`` on PIPE_MTE3
AIV (i >= 2)            O = O * dm + O_tmp (rescale), the last      wait ``pvReady``
                        stack also O / l -> O (fp16/bf16)
======================  =========================================  =================================================

Flag ids: ``qkReady`` 1, ``softmaxReady`` 2, ``pvReady`` 3 (``kernel_common.hpp``). Every intra-core event the
blocks use is set once at the start of each core program and waited at its end, in the C++ order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from catlass_py.arch.flags import CrossCoreFlag
from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.epilogue.block.online_softmax_no_mask import BlockEpilogueOnlineSoftmax
from catlass_py.epilogue.block.rescale_o_no_split_row import BlockEpilogueRescaleO
from catlass_py.errors import ConfigError
from catlass_py.gemm.block.attention_calls import FAI_PV_CALL, FAI_QK_CALL, FAI_TAIL_PV_CALL, FAI_TAIL_QK_CALL
from catlass_py.gemm.block.block_mmad import check_block_mmad
from catlass_py.gemm.block.capabilities import BlockMmadRequirement
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_up
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.tile.ascendc_copy import gm_get_value

QK_READY_ID = 1
SOFTMAX_READY_ID = 2
PV_READY_ID = 3
BLOCK_SIZE = 16
WORKSPACE_BLOCK_SIZE_DB = 131072
PAGED_BLOCK_SIZE = 128
BLOCK_STACK_NUM = 4
PRE_LAUNCH = 2
MASK_SIDE = 1024


# -- host tiling (fai_tiling.cpp) ---------------------------------------------------------------------------
@dataclass(frozen=True)
class FATilingData:
    """``FATilingData`` of ``kernel_common.hpp`` (the fields the kernel reads)."""

    num_heads: int
    embedding_size: int
    num_blocks: int
    block_size: int
    max_kv_seqlen: int
    kv_heads: int
    batch: int
    max_num_blocks_per_batch: int
    first_batch_task_num: int
    total_task_num: int
    mask_type: int
    mm1_out_size: int
    sm_online_out_size: int
    mm2_out_size: int
    update_size: int
    workspace_size: int
    scale_value: float


def q_n_block_tile(q_seqlen: int, group_size: int) -> int:
    """``GetQNBlockTile``: ``clamp((128 / qSeqlen) / 2 * 2, 1, groupSize)`` (an even head count when possible,
    so that the two vector cores hold whole heads and at most 64 rows each)."""
    tile = (128 // q_seqlen) // 2 * 2
    return max(min(tile, group_size), 1)


def q_s_block_tile(kv_seqlen: int) -> int:
    """``GetQSBlockTile``: 128 query tokens."""
    return 128


def get_fa_tiling_param(batch: int, num_heads: int, kv_heads: int, embedding_size: int, num_blocks: int,
                        block_size: int, mask_type: int, q_seqlen_list, kv_seqlen_list, block_dim: int) -> FATilingData:
    """``FAInferTiling::GetFATilingParam``: the scale ``1 / sqrt(embed)`` as float, the task counts and the
    workspace sizes (``blockDim * WORKSPACE_BLOCK_SIZE_DB * sizeof * 3`` bytes for S, P, O_tmp and the unused
    update buffer)."""
    if block_size != 128:
        raise ConfigError(f"FAInferTiling: blockSize != 128 is not supported, got {block_size}")
    max_kv = max((int(v) for v in kv_seqlen_list), default=0)
    group = num_heads // kv_heads
    total = first = 0
    for b in range(batch):
        qs, kvs = int(q_seqlen_list[b]), int(kv_seqlen_list[b])
        qn_tile = q_n_block_tile(qs, group)
        qn_num = ceil_div(group, qn_tile) * kv_heads
        qs_num = ceil_div(qs, q_s_block_tile(kvs))
        if b == 0:
            first = qn_num * qs_num
        total += qn_num * qs_num
    mm1 = block_dim * WORKSPACE_BLOCK_SIZE_DB * 4 * 3
    sm = block_dim * WORKSPACE_BLOCK_SIZE_DB * 2 * 3
    mm2 = block_dim * WORKSPACE_BLOCK_SIZE_DB * 4 * 3
    upd = block_dim * WORKSPACE_BLOCK_SIZE_DB * 4 * 3
    scale = float(np.float32(1.0 / math.sqrt(1.0 * embedding_size)))
    return FATilingData(num_heads, embedding_size, num_blocks, block_size, max_kv, kv_heads, batch,
                        ceil_div(max_kv, block_size), first, total, mask_type, mm1, sm, mm2, upd,
                        mm1 + sm + mm2 + upd, scale)


# -- the kernel -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FAInferParams:
    """``FAIKernelParams``: the GM tensors (Q, K, V, mask, block table, sequence lengths, O, the four
    workspaces) and the host tiling."""

    q: GlobalTensor
    k: GlobalTensor
    v: GlobalTensor
    mask: GlobalTensor | None
    block_tables: GlobalTensor | None
    actual_qseqlen: GlobalTensor
    actual_kvseqlen: GlobalTensor
    o: GlobalTensor
    s: GlobalTensor
    p: GlobalTensor
    o_temp: GlobalTensor
    o_update: GlobalTensor
    tiling: FATilingData


@dataclass(frozen=True)
class _Task:
    """Where one task sits (the C++ locals of the task loop)."""

    batch: int
    q_seqlen: int
    kv_seqlen: int
    q_s_block_idx: int
    q_n_block_idx: int
    kv_head_idx: int
    q_head_idx: int
    q_s_block_size: int
    q_n_block_size: int
    q_s_block_tile: int
    row_num: int
    no_skip_kv_s: int
    no_mask_kv_s: int
    no_mask_tail_s: int


class FAInferKernel:
    """CATLASS ``FAInferKernel<BlockMmadQK, BlockMmadPV, BlockMmadQKTail, BlockMmadPVTail, EpilogueOnlineSoftmax,
    EpilogueRescaleO, PAGED_CACHE_FLAG>`` (module docstring). Assembly checks: the four blocks and two epilogues
    of the right kinds on one arch, one element type, ``PAGED_CACHE_FLAG`` equal to every block's, and the L1
    layout ``L1_QK_SIZE + 4 * L1A_SIZE + 2 * L1B_SIZE <= L1_SIZE`` (QK's Q and two K stages, then PV's P stack
    and two V stages)."""

    Params = FAInferParams

    def __init__(self, block_mmad_qk, block_mmad_pv, block_mmad_qk_tail, block_mmad_pv_tail, epilogue_online_softmax,
                 epilogue_rescale_o, paged_cache: bool = True):
        what = "FAInferKernel"
        for name, block, call in (("BlockMmadQK", block_mmad_qk, FAI_QK_CALL), ("BlockMmadPV", block_mmad_pv, FAI_PV_CALL),
                                  ("BlockMmadQKTail", block_mmad_qk_tail, FAI_TAIL_QK_CALL),
                                  ("BlockMmadPVTail", block_mmad_pv_tail, FAI_TAIL_PV_CALL)):
            check_block_mmad(f"{what}: {name}", block, BlockMmadRequirement(
                call, asynchronous=False, reason="the kernel signals the vector cores right after the call"))
        for name, obj, cls in (("EpilogueOnlineSoftmax", epilogue_online_softmax, BlockEpilogueOnlineSoftmax),
                               ("EpilogueRescaleO", epilogue_rescale_o, BlockEpilogueRescaleO)):
            if not isinstance(obj, cls):
                raise ConfigError(f"{what}: {name} must be an assembled {cls.__name__}, got {obj!r}")
        if not isinstance(paged_cache, bool):
            raise ConfigError(f"{what}: PAGED_CACHE_FLAG must be a bool, got {paged_cache!r}")
        blocks = (block_mmad_qk, block_mmad_pv, block_mmad_qk_tail, block_mmad_pv_tail)
        for b in blocks:
            if b.paged_cache != paged_cache:
                raise ConfigError(f"{what}: PAGED_CACHE_FLAG is {paged_cache} but {type(b.policy).__name__} has "
                                  f"{b.paged_cache}")
        elements = {b.element_a for b in blocks} | {epilogue_online_softmax.element_output,
                                                     epilogue_rescale_o.element_output}
        if len(elements) != 1:
            raise ConfigError(f"{what}: Q, K, V, P and O must share one element type, got {sorted(map(str, elements))}")
        archs = {b.arch.name for b in blocks} | {epilogue_online_softmax.arch.name, epilogue_rescale_o.arch.name}
        if len(archs) != 1:
            raise ConfigError(f"{what}: blocks and epilogues target different archs: {sorted(archs)}")
        qk = block_mmad_qk
        self.l1_qk_size = qk.l1a_tile_size + qk.l1b_tile_size * 2
        need = self.l1_qk_size + block_mmad_pv.l1_bytes
        if need > qk.arch.l1_size:
            raise ConfigError(f"{what}: the blocks need {need} bytes of L1 but {qk.arch.name} has {qk.arch.l1_size} "
                              f"(L1_QK_SIZE + 4 * L1A_SIZE + 2 * L1B_SIZE <= L1_SIZE)")
        self.block_mmad_qk, self.block_mmad_pv = block_mmad_qk, block_mmad_pv
        self.block_mmad_qk_tail, self.block_mmad_pv_tail = block_mmad_qk_tail, block_mmad_pv_tail
        self.epilogue_online_softmax, self.epilogue_rescale_o = epilogue_online_softmax, epilogue_rescale_o
        self.paged_cache = paged_cache
        self.arch = qk.arch
        self.element = qk.element_a
        self.qk_ready = CrossCoreFlag(QK_READY_ID)
        self.softmax_ready = CrossCoreFlag(SOFTMAX_READY_ID)
        self.pv_ready = CrossCoreFlag(PV_READY_ID)

    # -- task walk (same on AIC and AIV) -----------------------------------------------------------------------
    def _tasks(self, ctx, params: FAInferParams, core_idx: int, core_num: int):
        """The tasks of this AI core in order, with the batch offsets (the C++ ``while (taskIdx >=
        curTotalTaskNum)`` walk, reading the sequence lengths with ``GetValue``)."""
        t = params.tiling
        group = t.num_heads // t.kv_heads
        cur_batch = 0
        q_seq = int(gm_get_value(ctx, params.actual_qseqlen, cur_batch))
        kv_seq = int(gm_get_value(ctx, params.actual_kvseqlen, cur_batch))

        def counts(qs, kvs):
            qn_tile = q_n_block_tile(qs, group)
            qn_per_group = ceil_div(group, qn_tile)
            qs_tile = q_s_block_tile(kvs)
            return qn_tile, qn_per_group, qn_per_group * t.kv_heads, qs_tile, ceil_div(qs, qs_tile)

        qn_tile, qn_per_group, qn_num, qs_tile, qs_num = counts(q_seq, kv_seq)
        pre_total, cur_total = 0, qn_num * qs_num
        q_b = kv_b = block_b = o_b = 0
        for task_idx in range(core_idx, t.total_task_num, core_num):
            while task_idx >= cur_total:
                cur_batch += 1
                pre_total = cur_total
                q_b += q_seq * t.num_heads * t.embedding_size
                o_b += q_seq * t.num_heads * t.embedding_size
                if self.paged_cache:
                    block_b += t.max_num_blocks_per_batch
                else:
                    kv_b += kv_seq * t.kv_heads * t.embedding_size
                q_seq = int(gm_get_value(ctx, params.actual_qseqlen, cur_batch))
                kv_seq = int(gm_get_value(ctx, params.actual_kvseqlen, cur_batch))
                qn_tile, qn_per_group, qn_num, qs_tile, qs_num = counts(q_seq, kv_seq)
                cur_total += qn_num * qs_num
            in_batch = task_idx - pre_total
            qs_idx = in_batch // qn_num
            qn_idx = in_batch - qs_idx * qn_num
            qn_in_group = qn_idx % qn_per_group
            kv_head = qn_idx // qn_per_group
            q_head = kv_head * group + qn_in_group * qn_tile
            qs_size = q_seq - qs_idx * qs_tile if qs_idx == qs_num - 1 else qs_tile
            qn_size = group - qn_in_group * qn_tile if qn_in_group == qn_per_group - 1 else qn_tile
            no_skip = no_mask = kv_seq
            tail = 0
            if t.mask_type != 0:
                diff = kv_seq - q_seq
                no_skip = min(kv_seq, (qs_idx + 1) * qs_tile + diff)
                no_mask = no_skip - qs_size
                tail = no_mask % t.block_size
            task = _Task(cur_batch, q_seq, kv_seq, qs_idx, qn_idx, kv_head, q_head, qs_size, qn_size, qs_tile,
                         qs_size * qn_size, no_skip, no_mask, tail)
            yield task_idx, task, q_b, kv_b, block_b, o_b

    @staticmethod
    def _stack_plan(t: FATilingData, task: _Task) -> dict:
        """The loop bounds the C++ derives per task (``kvSLoopNumNoMask`` ... ``preLaunchStackNum``)."""
        masked = t.mask_type != 0
        bs = t.block_size
        loop_no_mask = ceil_div(task.no_mask_kv_s, bs)
        loop_total = ceil_div(task.no_skip_kv_s, bs)
        total_stack = ceil_div(task.no_mask_kv_s, BLOCK_STACK_NUM * bs) + (1 if masked else 0)
        if masked:
            masked_start = loop_no_mask - 1 if task.no_mask_tail_s != 0 else loop_no_mask
        else:
            masked_start = round_up(loop_no_mask, BLOCK_STACK_NUM)
        tail_inte = (task.no_mask_kv_s // bs) % BLOCK_STACK_NUM
        if tail_inte == 0:
            tail_inte = 0 if task.no_mask_tail_s != 0 else BLOCK_STACK_NUM
        pre_launch_stack = ((PRE_LAUNCH - 1) * BLOCK_STACK_NUM + tail_inte) if masked else PRE_LAUNCH * BLOCK_STACK_NUM
        return dict(loop_no_mask=loop_no_mask, loop_total=loop_total, total_stack=total_stack,
                    masked_start=masked_start, tail_inte=tail_inte, pre_launch_stack=pre_launch_stack)

    @staticmethod
    def _no_mask_tile(kv_s_idx: int, loop_no_mask: int, no_mask_kv_s: int, bs: int) -> int:
        if kv_s_idx + BLOCK_STACK_NUM > loop_no_mask - 1:
            return no_mask_kv_s - kv_s_idx * bs
        return bs * BLOCK_STACK_NUM

    def _slot(self, core_idx: int, count: int) -> int:
        return core_idx * WORKSPACE_BLOCK_SIZE_DB * (PRE_LAUNCH + 1) + (count % (PRE_LAUNCH + 1)) * WORKSPACE_BLOCK_SIZE_DB

    # -- device side: AIC -----------------------------------------------------------------------------------
    def aic(self, ctx, params: FAInferParams) -> None:
        """``operator()<AIC>``."""
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
        res = ctx.resource
        qk = self.block_mmad_qk(res)
        pv = self.block_mmad_pv(res, self.l1_qk_size)
        qk_tail = self.block_mmad_qk_tail(res)
        pv_tail = self.block_mmad_pv_tail(res, self.l1_qk_size)
        t = params.tiling
        embed, bs = t.embedding_size, t.block_size
        stride_qo = t.num_heads * embed
        stride_kv = t.kv_heads * embed
        masked = t.mask_type != 0
        g_q, g_k, g_v = params.q, params.k, params.v
        g_s, g_p, g_o_tmp = params.s, params.p, params.o_temp
        core_idx = ctx.block_idx
        for task_idx, task, q_b, kv_b, block_b, _o_b in self._tasks(ctx, params, core_idx, ctx.block_num):
            g_table = params.block_tables[block_b] if self.paged_cache else params.block_tables
            q_off = q_b + task.q_s_block_idx * task.q_s_block_tile * stride_qo + task.q_head_idx * embed
            k_off = kv_b + task.kv_head_idx * embed
            v_off = kv_b + task.kv_head_idx * embed
            row_num = task.row_num
            plan = self._stack_plan(t, task)
            ctx.mark("block", task=task_idx, batch=task.batch, q_s_block=task.q_s_block_idx,
                     q_n_block=task.q_n_block_idx, kv_head=task.kv_head_idx, q_head=task.q_head_idx,
                     heads=task.q_n_block_size, tokens=task.q_s_block_size, rows=row_num,
                     kv=task.no_skip_kv_s, stacks=plan["total_stack"])
            loop_no_mask, loop_total = plan["loop_no_mask"], plan["loop_total"]
            count = 0
            layout_q = RowMajor(row_num, embed)
            layout_k = ColumnMajor(stride_kv, BLOCK_STACK_NUM * bs)
            layout_v = RowMajor(BLOCK_STACK_NUM * bs, stride_kv)
            qk.load_q_gm(g_q[q_off], layout_q, row_num, task.q_n_block_size, t.num_heads)
            for kv_s_idx in range(0, loop_no_mask, BLOCK_STACK_NUM):
                tile = self._no_mask_tile(kv_s_idx, loop_no_mask, task.no_mask_kv_s, bs)
                qk(g_q[q_off], g_k[k_off], g_s[self._slot(core_idx, count)], g_table, layout_q, layout_k,
                   GemmCoord(row_num, tile, embed), kv_s_idx, loop_no_mask, bs, task.no_mask_kv_s, stride_kv)
                ctx.cross_core_set_flag(self.qk_ready, 2, Pipe.FIX)
                if kv_s_idx >= PRE_LAUNCH * BLOCK_STACK_NUM:
                    now = kv_s_idx - PRE_LAUNCH * BLOCK_STACK_NUM
                    tile = self._no_mask_tile(now, loop_no_mask, task.no_mask_kv_s, bs)
                    slot = self._slot(core_idx, count - PRE_LAUNCH)
                    pv(g_p[slot], g_v[v_off], g_o_tmp[slot], g_table, RowMajor(row_num, BLOCK_STACK_NUM * 128), layout_v,
                       GemmCoord(row_num, embed, tile), now, loop_no_mask, bs, task.no_mask_kv_s, stride_kv,
                       self.softmax_ready)
                    ctx.cross_core_set_flag(self.pv_ready, 2, Pipe.FIX)
                count += 1
            kv_s_idx = plan["masked_start"]
            end = loop_total + plan["pre_launch_stack"]
            while kv_s_idx < end:
                if kv_s_idx < loop_total and count <= plan["total_stack"] - 1:
                    tile = task.q_s_block_size
                    qk_tail(g_q[q_off], g_k[k_off], g_s[self._slot(core_idx, count)], g_table, layout_q, layout_k,
                            GemmCoord(row_num, tile, embed), kv_s_idx, loop_total, bs, task.no_skip_kv_s, stride_kv,
                            task.no_mask_tail_s, True)
                    ctx.cross_core_set_flag(self.qk_ready, 2, Pipe.FIX)
                if kv_s_idx >= plan["pre_launch_stack"]:
                    delayed = kv_s_idx - plan["pre_launch_stack"]
                    if delayed + BLOCK_STACK_NUM > loop_total - 1 and masked:
                        tile = task.q_s_block_size
                    elif delayed + BLOCK_STACK_NUM > loop_no_mask - 1:
                        tile = task.no_mask_kv_s - delayed * bs
                    else:
                        tile = bs * BLOCK_STACK_NUM
                    slot = self._slot(core_idx, count - PRE_LAUNCH)
                    layout_p = RowMajor(row_num, BLOCK_STACK_NUM * 128)
                    shape = GemmCoord(row_num, embed, tile)
                    if count - PRE_LAUNCH == plan["total_stack"] - 1 and masked:
                        pv_tail(g_p[slot], g_v[v_off], g_o_tmp[slot], g_table, layout_p, layout_v, shape, delayed,
                                loop_total, bs, task.no_skip_kv_s, stride_kv, self.softmax_ready, task.no_mask_tail_s,
                                True)
                    else:
                        pv(g_p[slot], g_v[v_off], g_o_tmp[slot], g_table, layout_p, layout_v, shape, delayed,
                           loop_no_mask, bs, task.no_mask_kv_s, stride_kv, self.softmax_ready)
                    ctx.cross_core_set_flag(self.pv_ready, 2, Pipe.FIX)
                if masked and count - PRE_LAUNCH == plan["total_stack"] - 2:
                    kv_s_idx += plan["tail_inte"]
                else:
                    kv_s_idx += BLOCK_STACK_NUM
                count += 1
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

    # -- device side: AIV -----------------------------------------------------------------------------------
    def aiv(self, ctx, params: FAInferParams) -> None:
        """``operator()<AIV>``, run by both vector cores of every AI core."""
        ctx.set_flag(HardEvent.MTE3_V, 0)
        ctx.set_flag(HardEvent.MTE3_V, 1)
        ctx.set_flag(HardEvent.MTE3_MTE2, 2)
        ctx.set_flag(HardEvent.MTE3_MTE2, 3)
        ctx.set_flag(HardEvent.MTE3_MTE2, 4)
        ctx.set_flag(HardEvent.MTE3_MTE2, 5)
        ctx.set_flag(HardEvent.V_MTE2, 0)
        ctx.set_flag(HardEvent.V_MTE2, 1)
        ctx.set_flag(HardEvent.V_MTE2, 3)
        ctx.set_flag(HardEvent.MTE3_V, 2)
        ctx.set_flag(HardEvent.V_MTE2, 2)
        t = params.tiling
        embed, bs = t.embedding_size, t.block_size
        embed_round = round_up(embed, BLOCK_SIZE)
        masked = t.mask_type != 0
        softmax = self.epilogue_online_softmax(ctx.resource, t.scale_value)
        rescale = self.epilogue_rescale_o(ctx.resource)
        g_s, g_p, g_o_tmp, g_o = params.s, params.p, params.o_temp, params.o
        core_idx = ctx.ai_core_idx
        for task_idx, task, _q_b, _kv_b, _block_b, o_b in self._tasks(ctx, params, core_idx, ctx.block_num):
            o_off = o_b + task.q_s_block_idx * task.q_s_block_tile * t.num_heads * embed + task.q_head_idx * embed
            row_num = task.row_num
            plan = self._stack_plan(t, task)
            ctx.mark("epilogue_block", task=task_idx, batch=task.batch, q_s_block=task.q_s_block_idx,
                     q_n_block=task.q_n_block_idx, q_head=task.q_head_idx, rows=row_num)
            loop_no_mask, loop_total = plan["loop_no_mask"], plan["loop_total"]
            pad = BLOCK_STACK_NUM * bs
            count = 0
            for kv_s_idx in range(0, loop_no_mask, BLOCK_STACK_NUM):
                tile = self._no_mask_tile(kv_s_idx, loop_no_mask, task.no_mask_kv_s, bs)
                slot = self._slot(core_idx, count)
                ctx.cross_core_wait_flag(self.qk_ready)
                softmax(g_p[slot], g_s[slot], RowMajor(row_num, tile, pad), RowMajor(row_num, tile, pad),
                        GemmCoord(row_num, tile, embed), count == 0, task.q_s_block_size, task.q_n_block_size,
                        count % (PRE_LAUNCH + 1))
                ctx.cross_core_set_flag(self.softmax_ready, 2, Pipe.MTE3)
                if kv_s_idx >= PRE_LAUNCH * BLOCK_STACK_NUM:
                    delayed = kv_s_idx - PRE_LAUNCH * BLOCK_STACK_NUM
                    # The C++ takes this tile from kvSIdx (uint32 arithmetic), not the delayed index; the rescale
                    # reads only the rows and the head dimension of the shape.
                    if delayed + BLOCK_STACK_NUM > loop_no_mask - 1:
                        tile = (task.no_mask_kv_s - kv_s_idx * bs) % (1 << 32)
                    else:
                        tile = bs * BLOCK_STACK_NUM
                    mod = (count - PRE_LAUNCH) % (PRE_LAUNCH + 1)
                    ctx.cross_core_wait_flag(self.pv_ready)
                    rescale(g_o[o_off], g_o_tmp[self._slot(core_idx, count - PRE_LAUNCH)],
                            RowMajor(task.q_seqlen, embed * t.num_heads), RowMajor(row_num, embed, embed_round),
                            GemmCoord(row_num, embed, tile), task.q_s_block_size, task.q_n_block_size,
                            count - PRE_LAUNCH == 0, False, mod)
                count += 1
            kv_s_idx = plan["masked_start"]
            end = loop_total + plan["pre_launch_stack"]
            while kv_s_idx < end:
                if kv_s_idx < loop_total and count <= plan["total_stack"] - 1:
                    tile = task.q_s_block_size
                    slot = self._slot(core_idx, count)
                    softmax.masked(g_p[slot], g_s[slot], params.mask, RowMajor(row_num, tile, pad),
                                   RowMajor(row_num, tile, pad), RowMajor(MASK_SIDE, MASK_SIDE, MASK_SIDE),
                                   GemmCoord(row_num, tile, embed), count == 0, task.q_s_block_size,
                                   task.q_n_block_size, count % (PRE_LAUNCH + 1), self.qk_ready)
                    ctx.cross_core_set_flag(self.softmax_ready, 2, Pipe.MTE3)
                if kv_s_idx >= plan["pre_launch_stack"]:
                    delayed = kv_s_idx - plan["pre_launch_stack"]
                    if delayed + BLOCK_STACK_NUM > loop_total - 1 and masked:
                        tile = task.q_s_block_size
                    elif delayed + BLOCK_STACK_NUM > loop_no_mask - 1:
                        tile = task.no_mask_kv_s - delayed * bs
                    else:
                        tile = bs * BLOCK_STACK_NUM
                    mod = (count - PRE_LAUNCH) % (PRE_LAUNCH + 1)
                    ctx.cross_core_wait_flag(self.pv_ready)
                    rescale(g_o[o_off], g_o_tmp[self._slot(core_idx, count - PRE_LAUNCH)],
                            RowMajor(task.q_s_block_size, embed * t.num_heads), RowMajor(row_num, embed, embed_round),
                            GemmCoord(row_num, embed, tile), task.q_s_block_size, task.q_n_block_size,
                            count - PRE_LAUNCH == 0, count - PRE_LAUNCH == plan["total_stack"] - 1, mod)
                if masked and count - PRE_LAUNCH == plan["total_stack"] - 2:
                    kv_s_idx += plan["tail_inte"]
                else:
                    kv_s_idx += BLOCK_STACK_NUM
                count += 1
        ctx.wait_flag(HardEvent.MTE3_MTE2, 2)
        ctx.wait_flag(HardEvent.MTE3_MTE2, 3)
        ctx.wait_flag(HardEvent.MTE3_MTE2, 4)
        ctx.wait_flag(HardEvent.MTE3_MTE2, 5)
        ctx.wait_flag(HardEvent.MTE3_V, 0)
        ctx.wait_flag(HardEvent.MTE3_V, 1)
        ctx.wait_flag(HardEvent.MTE3_V, 2)
        ctx.wait_flag(HardEvent.V_MTE2, 0)
        ctx.wait_flag(HardEvent.V_MTE2, 1)
        ctx.wait_flag(HardEvent.V_MTE2, 2)
        ctx.wait_flag(HardEvent.V_MTE2, 3)

    # -- host side --------------------------------------------------------------------------------------------
    @staticmethod
    def workspace_sizes(tiling: FATilingData) -> dict[str, int]:
        """Bytes of the four workspaces (``mm1OutSize``, ``smOnlineOutSize``, ``mm2OutSize``, ``UpdateSize``)."""
        return {"s": tiling.mm1_out_size, "p": tiling.sm_online_out_size, "o_temp": tiling.mm2_out_size,
                "o_update": tiling.update_size}


__all__ = ["FAInferKernel", "FAInferParams", "FATilingData", "get_fa_tiling_param", "q_n_block_tile",
           "q_s_block_tile"]
