"""Mutation tests of the attention kernels' synchronisation (FAInferKernel, MLAKernel).

Every synchronisation call the runners of ``attention_mutants.py`` execute — each SetFlag, WaitFlag,
PipeBarrier, CrossCoreSetFlag and CrossCoreWaitFlag site of the kernels, blocks and epilogues — is mutated the
ways ``catlass_py.analysis.mutants`` lists (drop; drop a set with each wait it fed; delay a wait past the next
instruction of the pipe it blocks; issue a cross-core set on PIPE_S; swap ids), and each mutant runs with the
race detector on. A mutant counts as detected when a launch raises RaceError, DeadlockError,
FlagOverflowError or UnpairedFlagError. The slow tests require every mutant to be detected or to be one of
the equivalent mutants listed below, each with the reason it changes no order between conflicting accesses.

Equivalent mutants recognised without reading the kernel: those of
:func:`catlass_py.analysis.mutants.automatic_equivalence` (a wait or barrier nothing it orders follows, a swap
within one burst of calls, a cross-core set moved to PIPE_S from an idle pipe), and two rules of these kernels
(their premises checked on the recorded sites):

* *drain delays*: delaying a WaitFlag of the kernel's final drain (the waits at the end of ``aic``/``aiv`` that
  consume the flags set at its start): no instruction of the core follows, so there is nothing to delay past.
* *unused ids*: dropping a start-of-kernel SetFlag with its end-of-kernel WaitFlag when no other site uses that
  (event, id): the pair orders nothing (CATLASS sets every id of an event type at kernel start, also the ids
  a configuration does not use).

The rest are listed by name (``attention_mutants.site_names``: file, function and source text of the call).
The default run checks a handful of mutants of each kernel on one small problem.
"""

from __future__ import annotations

import os
import sys
from collections import Counter

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import attention_mutants as M  # noqa: E402
from catlass_py.analysis.mutants import automatic_equivalence, catalogue  # noqa: E402

# -- equivalent mutants, by reason ---------------------------------------------------------------------------

TWIN = ("twin flag: the same event's other id is set at the same point (or later) of the source pipe and "
        "waited before the same or an earlier instruction of the waiting pipe, so it already orders everything "
        "this wait orders")
TWIN_L0C = ("the other FIX_M id is waited before the same Mmad; when the two were last set by different "
            "fixpipes (the tail QK block sets only its ping-pong id), the fixpipe this one pairs with read an "
            "L0C region the next Mmad does not write")
NEXT_INSTR = ("the next instruction of the blocked pipe does not touch the buffer the flag protects, and the "
              "delayed wait still comes before the first one that does")
ROUND_TRIP = ("covered by the cube <-> vector round trip: between the previous use of the buffer and this "
              "instruction the core waited for a cross-core flag whose set (on the other core type) follows, "
              "through that core's flags, work ordered after the previous use")
BARRIER_COVERED = ("the PipeBarrier<PIPE_V> separates no read-after-write or write-after-write pair that a later "
                   "barrier does not separate too before the dependent instruction (a write after a read is "
                   "safe on PIPE_V: operands are read at issue)")
P_STACK_TWIN = ("the P stack load waits MTE1_MTE2[4] and [5], and only the L0A copies of P read those L1 bytes; a "
                "normal PV sets both ids after its last L0A copy, so either wait orders its reads (twin); a "
                "masked-tail PV sets only id p + 4 after the L0A copy of its P stage p (one id if its tail spans one "
                "KV block), but it is the last PV of its task, so the next normal PV runs for a later task and waits "
                "softmaxReady of that task's first stack, whose softmax waited qkReady of a QK block whose L1 -> L0 "
                "copies follow the tail's reads on PIPE_MTE1 (round trip); the delayed wait still comes before the "
                "next P load")
NO_ROWS = ("the vector core has no rows of this stack: it reads nothing the cube wrote and waits only to "
           "consume the flag's count; the delayed wait still consumes it before the next stack's wait")

FA_EQUIVALENT = {
    # online softmax
    "drop online_softmax_no_mask.py:up_cast_mask: self.ctx.pipe_barrier(Pipe.V)": BARRIER_COVERED,
    "drop online_softmax_no_mask.py:update_global_row_max: ctx.pipe_barrier(Pipe.V)": BARRIER_COVERED,
    "drop online_softmax_no_mask.py:update_global_row_max: ctx.pipe_barrier(Pipe.V) #4": BARRIER_COVERED,
    "drop online_softmax_no_mask.py:update_global_row_max: ctx.pipe_barrier(Pipe.V) #5": BARRIER_COVERED,
    "drop online_softmax_no_mask.py:update_global_row_sum: ctx.pipe_barrier(Pipe.V) #3": BARRIER_COVERED,
    "delay online_softmax_no_mask.py:masked: ctx.cross_core_wait_flag(qk_ready)": NO_ROWS,
    "delay online_softmax_no_mask.py:masked: ctx.wait_flag(HardEvent.V_MTE2, 2)": ROUND_TRIP,
    ("drop online_softmax_no_mask.py:masked: ctx.set_flag(HardEvent.V_MTE2, 2) + "
     "drop online_softmax_no_mask.py:masked: ctx.wait_flag(HardEvent.V_MTE2, 2)"): ROUND_TRIP,
    # rescale O
    "delay rescale_o_no_split_row.py:sub_core_compute: ctx.wait_flag(HardEvent.MTE2_V, 0)": NEXT_INSTR,
    "delay rescale_o_no_split_row.py:sub_core_compute: ctx.wait_flag(HardEvent.MTE2_V, 0) #2": NEXT_INSTR,
    "drop rescale_o_no_split_row.py:sub_core_compute: ctx.pipe_barrier(Pipe.V) #2": BARRIER_COVERED,
    # PV of the masked tail
    "delay mmad_fai_pv_head_tail.py:compute_pv: ctx.wait_flag(HardEvent.M_MTE1, 3)": TWIN,
    "delay mmad_fai_pv_head_tail.py:compute_pv: ctx.wait_flag(HardEvent.M_MTE1, 0)": TWIN,
    "delay mmad_fai_pv_head_tail.py:compute_pv: ctx.wait_flag(HardEvent.M_MTE1, 1)": TWIN,
    "delay mmad_fai_pv_head_tail.py:compute_pv: ctx.wait_flag(HardEvent.FIX_M, 0)": TWIN_L0C,
    "delay mmad_fai_pv_head_tail.py:compute_pv: ctx.wait_flag(HardEvent.FIX_M, 1)": TWIN_L0C,
    ("drop mmad_fai_pv_head_tail.py:compute_pv: ctx.set_flag(HardEvent.FIX_M, 0) + "
     "drop mmad_fai_pv_head_tail.py:compute_pv: ctx.wait_flag(HardEvent.FIX_M, 0)"): TWIN_L0C,
    ("drop mmad_fai_pv_head_tail.py:compute_pv: ctx.set_flag(HardEvent.M_MTE1, 0) + "
     "drop mmad_fai_pv_head_tail.py:compute_pv: ctx.wait_flag(HardEvent.M_MTE1, 0)"): TWIN,
    ("drop mmad_fai_pv_head_tail.py:compute_pv: ctx.set_flag(HardEvent.M_MTE1, 1) + "
     "drop mmad_fai_pv_head_tail.py:compute_pv: ctx.wait_flag(HardEvent.M_MTE1, 1)"): TWIN,
    ("drop mmad_fai_pv_head_tail.py:compute_pv: ctx.set_flag(HardEvent.M_MTE1, 3) + "
     "drop mmad_fai_pv_head_tail.py:compute_pv: ctx.wait_flag(HardEvent.M_MTE1, 3)"): TWIN,
    # the masked tail spans at most two KV blocks; its first step's preload wait (the same buffer pair, the
    # later of the two reads) already orders the next-block load
    "delay mmad_fai_pv_head_tail.py:compute_pv: ctx.wait_flag(HardEvent.MTE1_MTE2, 1 - p + 2)": TWIN,
    "delay mmad_fai_qk_head_tail.py:compute_qk: ctx.wait_flag(HardEvent.MTE1_MTE2, 1 - p)": TWIN,
    "delay mmad_fai_qk_head_tail.py:compute_qk: ctx.wait_flag(HardEvent.M_MTE1, p + 2)": TWIN,
    # PV
    # not the drops of the set + wait pairs of ids 4 and 5: the tail PV's P load into stage 0 / 1 waits id 4 / 5
    # alone after a normal PV whose last L0A copies read those bytes (reported on "GQA causal" / "tails after long
    # stacks")
    "delay mmad_fai_pv_normal.py:compute_pv: ctx.wait_flag(HardEvent.MTE1_MTE2, 4)": P_STACK_TWIN,
    "delay mmad_fai_pv_normal.py:compute_pv: ctx.wait_flag(HardEvent.MTE1_MTE2, 5)": P_STACK_TWIN,
    "delay mmad_fai_pv_normal.py:compute_pv: ctx.wait_flag(HardEvent.M_MTE1, p)": TWIN,
    "delay mmad_fai_pv_normal.py:compute_pv: ctx.wait_flag(HardEvent.FIX_M, 1)": TWIN_L0C,
    ("drop mmad_fai_pv_normal.py:compute_pv: ctx.set_flag(HardEvent.FIX_M, 1) + "
     "drop mmad_fai_pv_normal.py:compute_pv: ctx.wait_flag(HardEvent.FIX_M, 1)"): TWIN_L0C,
    # QK
    "delay mmad_fai_qk_normal.py:compute_qk: ctx.wait_flag(HardEvent.MTE1_MTE2, p)": ROUND_TRIP,
    "delay mmad_fai_qk_normal.py:compute_qk: ctx.wait_flag(HardEvent.M_MTE1, 1)": TWIN,
    "delay mmad_fai_qk_normal.py:compute_qk: ctx.wait_flag(HardEvent.FIX_M, 0)": TWIN_L0C,
    "delay mmad_fai_qk_normal.py:compute_qk: ctx.wait_flag(HardEvent.FIX_M, 1)": TWIN_L0C,
    ("drop mmad_fai_qk_normal.py:compute_qk: ctx.set_flag(HardEvent.M_MTE1, 1) + "
     "drop mmad_fai_qk_normal.py:compute_qk: ctx.wait_flag(HardEvent.M_MTE1, 1)"): TWIN,
    ("drop mmad_fai_qk_normal.py:compute_qk: ctx.set_flag(HardEvent.FIX_M, 1) + "
     "drop mmad_fai_qk_normal.py:compute_qk: ctx.wait_flag(HardEvent.FIX_M, 1)"): TWIN_L0C,
}

DRAIN = ("a wait of the flash-decoding epilogue's destructor, the last code of the vector core: nothing follows to "
         "delay it past")
S_DISPATCH = ("PIPE_S waits for V (V_S) right after, and S dispatches every later instruction, so everything after "
              "it already follows the vector work this flag publishes")
SCALAR = ("GetValue runs on PIPE_S, which is in order and blocking; the Duplicate that uses its value is dispatched "
          "after it, and its only operand from GetValue is the scalar, not memory")
STORE_TWIN = ("MTE3_V[4] and MTE3_MTE2[1] are set together after the partial-output stores; every later vector use "
              "of those UB buffers comes after a wait on one of them or after an MTE2 load that waited the other "
              "(and MTE2_V), so either pair orders it")
LSE_TWIN = ("MTE3_V[taskPp + 2] orders the lse store (MTE3, from tv) before later vector writes; MTE3_V[4], set after "
            "the partial-output store that follows it on MTE3 and waited at once, already orders every later "
            "vector instruction")
V_MTE3_CHAIN = ("the V_MTE3[2] set after it fires after the vector work before it, MTE3 stores, and MTE3_V[4] is "
                "waited before the next vector instruction: the write-after-write on tv is ordered through MTE3")
NEXT_TILING = ("the core's next instruction is a scalar read of the read-only tiling; the delayed wait still comes "
               "before the first load of another core's partial results")
ONE_PAGE = ("the softmax tile is at most one KV block of 128 tokens (the kernel walks the KV in tiles of the tiling's "
            "blockSize, which mla_tiling fixes at 128), so the loop holding this barrier runs at most once (k = 128) "
            "and the barrier after the loop follows it with no vector instruction in between")
PV_L0B_SWAP = ("with ids 2 and 3 exchanged, the waits before V pieces 0 and 2 take the set of the Mmad issued just "
               "before them, which follows every earlier Mmad on PIPE_M (so every read of either L0B buffer); pieces 1 "
               "and 3 are loaded after those waits on PIPE_MTE1, and the one Mmad issued in between reads the other "
               "L0B buffer")
KERNEL_START_PAIR = ("the set is issued at the start of aiv, before the core's first instruction, and the wait after "
                     "the task loop consumes it; no other call uses this id in between (the flash-decoding epilogue's "
                     "constructor sets it again before its own waits), so the wait joins no work and orders nothing")

MLA_EQUIVALENT = {
    "delay mla_fd_rescale_o.py:close: ctx.wait_flag(HardEvent.MTE3_V, 0)": DRAIN,
    "delay mla_fd_rescale_o.py:close: ctx.wait_flag(HardEvent.V_MTE2, 0)": DRAIN,
    "delay mla_fd_rescale_o.py:close: ctx.wait_flag(HardEvent.V_MTE2, 1)": DRAIN,
    "delay mla_fd_rescale_o.py:close: ctx.wait_flag(HardEvent.V_MTE2, 2)": DRAIN,
    "delay mla_fd_rescale_o.py:__call__: ctx.wait_flag(HardEvent.V_MTE2, 2)": S_DISPATCH,
    ("drop mla_fd_rescale_o.py:__call__: ctx.set_flag(HardEvent.V_MTE2, 2) + "
     "drop mla_fd_rescale_o.py:__call__: ctx.wait_flag(HardEvent.V_MTE2, 2)"): S_DISPATCH,
    "drop mla_fd_rescale_o.py:__call__: ctx.pipe_barrier(Pipe.V) #10": BARRIER_COVERED,
    "drop mla_fd_rescale_o.py:__call__: ctx.pipe_barrier(Pipe.V) #11": BARRIER_COVERED,
    ("drop mla_fd_rescale_o.py:__call__: ctx.set_flag(HardEvent.S_V, b) + "
     "drop mla_fd_rescale_o.py:__call__: ctx.wait_flag(HardEvent.S_V, b)"): SCALAR,
    "delay mla_fd_rescale_o.py:__call__: ctx.wait_flag(HardEvent.S_V, b)": SCALAR,
    "drop mla_rescale_o.py:sub_core_compute: ctx.pipe_barrier(Pipe.V) #8": BARRIER_COVERED,
    "drop mla_rescale_o.py:sub_core_compute: ctx.pipe_barrier(Pipe.V) #10": V_MTE3_CHAIN,
    ("drop mla_rescale_o.py:sub_core_compute: ctx.set_flag(HardEvent.MTE3_V, task_pp + 2) + "
     "drop mla.py:aiv: ctx.wait_flag(HardEvent.MTE3_V, 2)"): LSE_TWIN,
    "delay mla_softmax.py:sub_core_compute: ctx.wait_flag(HardEvent.MTE3_V, task_pp + 2)": LSE_TWIN,
    ("drop mla.py:aiv: ctx.set_flag(HardEvent.MTE3_V, 2) + "
     "drop mla_softmax.py:sub_core_compute: ctx.wait_flag(HardEvent.MTE3_V, task_pp + 2)"): LSE_TWIN,
    ("drop mla_rescale_o.py:sub_core_compute: ctx.set_flag(HardEvent.MTE3_V, 4) + "
     "drop mla_rescale_o.py:sub_core_compute: ctx.wait_flag(HardEvent.MTE3_V, 4)"): STORE_TWIN,
    "delay mla_rescale_o.py:sub_core_compute: ctx.wait_flag(HardEvent.MTE3_V, 4)": STORE_TWIN,
    ("drop mla_rescale_o.py:sub_core_compute: ctx.set_flag(HardEvent.MTE3_MTE2, 1) + "
     "drop mla_rescale_o.py:sub_core_compute: ctx.wait_flag(HardEvent.MTE3_MTE2, 1)"): STORE_TWIN,
    "delay mla_rescale_o.py:sub_core_compute: ctx.wait_flag(HardEvent.MTE3_MTE2, 1)": STORE_TWIN,
    "delay mla.py:_flash_decoding: ctx.cross_core_barrier(0, Pipe.MTE3) #2": NEXT_TILING,
    # the ids the kernel sets at the start of aiv for the flash-decoding epilogue only
    ("drop mla.py:aiv: ctx.set_flag(HardEvent.MTE3_V, 0) + "
     "drop mla.py:aiv: ctx.wait_flag(HardEvent.MTE3_V, 0)"): KERNEL_START_PAIR,
    ("drop mla.py:aiv: ctx.set_flag(HardEvent.V_MTE2, 2) + "
     "drop mla.py:aiv: ctx.wait_flag(HardEvent.V_MTE2, 2)"): KERNEL_START_PAIR,
    # softmax: the barrier after Sub (dm) is followed by the copy gm <- hm (a write after Sub's read of gm) and the
    # barrier after it; the barrier after that copy by Brcb(tv <- hm) and the barrier in TensorSubValueRepeatM
    "drop mla_softmax.py:sub_core_compute: ctx.pipe_barrier(Pipe.V) #3": BARRIER_COVERED,
    "drop mla_softmax.py:sub_core_compute: ctx.pipe_barrier(Pipe.V) #5": BARRIER_COVERED,
    # the barrier after Cast (P into the first half of S's UB buffer): the only later vector writes of those bytes
    # (the softmax two KV blocks later, the flash-decoding epilogue) come after the rescale of the same KV block,
    # whose first row cycle issues a barrier (it has rows wherever the softmax has: both split the heads alike)
    "drop mla_softmax.py:sub_core_compute: ctx.pipe_barrier(Pipe.V) #7": BARRIER_COVERED,
    "drop mla_softmax.py:reduce_max_repeat_m: ctx.pipe_barrier(Pipe.V) #2": ONE_PAGE,
    # RowsumTAILTILE: after the first 64-column sum into rowsum, the next reader of rowsum (Add) follows the barrier
    # after the next BlockReduceSum; the barrier after each Add is followed by the next column block's BlockReduceSum
    # into the start of tv (which the Add does not touch) and its barrier, or by the function's end; the last barrier
    # of each path (#2 for 64 columns, #5, #7, #9) is followed by Cast, which touches neither rowsum nor tv, and the
    # barrier after Cast
    "drop mla_softmax.py:rowsum_tail_tile: ctx.pipe_barrier(Pipe.V) #2": BARRIER_COVERED,
    "drop mla_softmax.py:rowsum_tail_tile: ctx.pipe_barrier(Pipe.V) #5": BARRIER_COVERED,
    "drop mla_softmax.py:rowsum_tail_tile: ctx.pipe_barrier(Pipe.V) #7": BARRIER_COVERED,
    "drop mla_softmax.py:rowsum_tail_tile: ctx.pipe_barrier(Pipe.V) #9": BARRIER_COVERED,
    # S load into the buffer P was stored from two KV blocks earlier: the vector core waited pvReady of the PV that
    # read that P, which waited softmaxReady, set on PIPE_MTE3 after the P store
    "delay mla_softmax.py:sub_core_compute: ctx.wait_flag(HardEvent.MTE3_MTE2, softmax_pp + 6)": ROUND_TRIP,
    ("drop mla_softmax.py:sub_core_compute: ctx.set_flag(HardEvent.MTE3_MTE2, softmax_pp + 6) + "
     "drop mla_softmax.py:sub_core_compute: ctx.wait_flag(HardEvent.MTE3_MTE2, softmax_pp + 6)"): ROUND_TRIP,
    # rescale: the next vector instruction after the O_tmp load is Exp(dm) or Brcb(tv <- dm); O_tmp is first read by
    # the Add after the per-row Mul
    "delay mla_rescale_o.py:sub_core_compute: ctx.wait_flag(HardEvent.MTE2_V, 0)": NEXT_INSTR,
    # after gl = gl + ll: Brcb(tv <- dm) and the barrier after it come before the next read of gl; after go = go + lo:
    # Brcb(tv <- gl) (a write after the per-row Mul's read of tv) and its barrier come before Div reads go, or the
    # next cycle's first barrier before its Mul (the V_MTE2 / V_MTE3 sets order the MTE2 and MTE3 accesses)
    "drop mla_rescale_o.py:sub_core_compute: ctx.pipe_barrier(Pipe.V) #3": BARRIER_COVERED,
    "drop mla_rescale_o.py:sub_core_compute: ctx.pipe_barrier(Pipe.V) #5": BARRIER_COVERED,
    # QK: MTE1_M[q + 2] is set after the K piece's L0 load, later on PIPE_MTE1 than the Q piece's load, and waited
    # right after MTE1_M[q], before the same Mmad
    ("drop mmad_mla_qk.py:__call__: ctx.set_flag(HardEvent.MTE1_M, q) + "
     "drop mmad_mla_qk.py:__call__: ctx.wait_flag(HardEvent.MTE1_M, q)"): TWIN,
    "delay mmad_mla_qk.py:__call__: ctx.wait_flag(HardEvent.MTE1_M, q)": TWIN,
    # QK: MTE1_MTE2[p], which the PV block sets after its last read of the same K stage (later on PIPE_MTE1 than the
    # QK's read of the rope columns), is waited before the K load that precedes the K_rope load on PIPE_MTE2
    ("drop mmad_mla_qk.py:__call__: ctx.set_flag(HardEvent.MTE1_MTE2, p + 2) + "
     "drop mmad_mla_qk.py:__call__: ctx.wait_flag(HardEvent.MTE1_MTE2, p + 2)"): TWIN,
    "delay mmad_mla_qk.py:__call__: ctx.wait_flag(HardEvent.MTE1_MTE2, p + 2)": TWIN,
    "swap_ids 2<->3 mmad_mla_pv.py:__call__: ctx.wait_flag(HardEvent.M_MTE1, b + 2)": PV_L0B_SWAP,
}

KERNEL_FILES = {"fa": "fa_infer.py", "mla": "mla.py"}


# -- rules ----------------------------------------------------------------------------------------------------


def _kernel_body(rec, kind) -> bool:
    return os.path.basename(rec.site.file) == KERNEL_FILES[kind] and rec.function in ("aic", "aiv")


def rule_equivalent(mut, records, kind) -> str | None:
    """The reason a mutant is equivalent by one of the module docstring's rules, else None."""
    recs = [records[e.site] for e in mut.edits]
    if len(mut.edits) == 1 and mut.edits[0].action == "delay" and recs[0].site.kind == "WaitFlag" \
            and _kernel_body(recs[0], kind):
        return "drain delay"
    if len(mut.edits) == 2 and all(e.action == "drop" for e in mut.edits) and all(_kernel_body(r, kind) for r in recs):
        (set_rec, wait_rec) = recs
        if set_rec.site.kind == "SetFlag" and wait_rec.site.kind == "WaitFlag" and len(set_rec.events) == 1 \
                and set_rec.events == wait_rec.events and len(set_rec.ids) == 1 and set_rec.ids == wait_rec.ids:
            event, ident = next(iter(set_rec.events)), next(iter(set_rec.ids))
            others = [r for r in records.values() if r.site not in (set_rec.site, wait_rec.site)
                      and r.site.kind in ("SetFlag", "WaitFlag") and event in r.events and ident in r.ids]
            if not others:
                return "unused id"
    return None


def _outcome(kind):
    runs = M.runners(kind)
    per_runner = M.record(runs)
    sites = M.merged_sites(per_runner)
    records = {r.site: r for r in sites}
    names = M.site_names(sites)
    mutants = catalogue(sites)
    results = M.check_mutants(runs, per_runner, mutants)
    return results, records, names


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fa", "mla"])
def test_every_mutant_is_reported_or_argued_equivalent(kind):
    results, records, names = _outcome(kind)
    listed = FA_EQUIVALENT if kind == "fa" else MLA_EQUIVALENT
    by_rule, by_list, missed, undetected = {}, set(), [], set()
    for r in results:
        if r.detected:
            continue
        name = M.describe(r.mutation, names)
        undetected.add(name)
        reason = ("automatic" if automatic_equivalence(r.mutation, records) else None) or \
            rule_equivalent(r.mutation, records, kind)
        if reason:
            by_rule.setdefault(reason, []).append(name)
        elif name in listed:
            by_list.add(name)
        else:
            missed.append(f"{name} ({r.message or 'no report'})")
    stale = sorted(set(listed) - undetected)
    detected = sum(r.detected for r in results)
    errors = sorted(Counter(r.detected_by for r in results if r.detected).items())
    print(f"\n{kind}: {len(records)} sites, {len(results)} mutants, {detected} detected {dict(errors)}, "
          f"{sum(map(len, by_rule.values())) + len(by_list)} equivalent "
          f"({', '.join(f'{k}: {len(v)}' for k, v in by_rule.items())}, listed: {len(by_list)})")
    assert not missed, "mutants neither reported nor argued equivalent:\n" + "\n".join(missed)
    assert not stale, "listed as equivalent but now reported (or no longer generated):\n" + "\n".join(stale)


# -- default run: a few mutants of each kind, on one small problem ---------------------------------------------

FAST = {
    "fa": (M.fa_runner, dict(q_lens=[1], kv_lens=[130], heads=1, kv_heads=1, d=32, causal=True), [
        "drop mmad_fai_pv_normal.py:compute_pv: ctx.cross_core_wait_flag(softmax_flag)",
        "move_pipe fa_infer.py:aic: ctx.cross_core_set_flag(self.qk_ready, 2, Pipe.FIX)",
        "delay online_softmax_no_mask.py:masked: ctx.cross_core_wait_flag(qk_ready) #2",
        "drop online_softmax_no_mask.py:calc_exp: ctx.pipe_barrier(Pipe.V) #2",
        "delay online_softmax_no_mask.py:sub_core_compute: ctx.wait_flag(HardEvent.V_MTE3, pp)",
        "swap_ids 1<->2 fa_infer.py:aic: ctx.cross_core_set_flag(self.qk_ready, 2, Pipe.FIX)",
        "drop mmad_fai_qk_normal.py:compute_qk: ctx.wait_flag(HardEvent.MTE2_MTE1, p)",
    ]),
    "mla": (M.mla_runner, dict(q_lens=[1], kv_lens=[200], heads=4), [
        "drop mmad_mla_pv.py:__call__: ctx.cross_core_wait_flag(softmax_ready)",
        "delay mmad_mla_pv.py:__call__: ctx.cross_core_wait_flag(softmax_ready)",
        "move_pipe mla.py:aic: ctx.cross_core_set_flag(self.qk_ready, 2, Pipe.FIX)",
        "drop mla_softmax.py:reduce_max_repeat_m: ctx.pipe_barrier(Pipe.V)",
        "swap_ids 0<->1 mmad_mla_pv.py:__call__: ctx.wait_flag(HardEvent.M_MTE1, p)",
    ]),
}


@pytest.mark.parametrize("kind", ["fa", "mla"])
def test_key_mutants_are_reported(kind):
    """The cross-core handshakes, a cross-core set on the wrong pipe, a vector barrier, a delayed wait and
    swapped ids: each reported on a one-task problem."""
    make, kw, wanted = FAST[kind]
    run = make(**kw)
    per_runner = M.record([run])
    sites = M.merged_sites(per_runner)
    names = M.site_names(sites)
    by_name = {M.describe(m, names): m for m in catalogue(sites)}
    assert set(wanted) <= set(by_name), sorted(set(wanted) - set(by_name))
    results = M.check_mutants([run], per_runner, [by_name[w] for w in wanted])
    assert all(r.detected for r in results), [(M.describe(r.mutation, names), r.message) for r in results
                                              if not r.detected]
