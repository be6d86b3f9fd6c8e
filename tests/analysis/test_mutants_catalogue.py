"""The mutant catalogue and checker on a hand-built kernel whose every synchronisation matters, and the automatic
equivalence arguments on one whose sites include a constructor burst, a final drain and an idle-pipe set."""

import numpy as np

from catlass_py.analysis.mutants import automatic_equivalence, catalogue, check, record_sites
from catlass_py.arch import GlobalBuffer, HardEvent, Pipe, launch

N = 64


class Handoff:
    """AIC: Mmad into L0C, Fixpipe to GM (M_FIX pair), cross-core set on FIX; AIV: wait, load its half to UB,
    Cast (MTE2_V pair), store (V_MTE3 pair). Ends with a final PIPE_ALL barrier on both sides."""

    def aic(self, ctx, gm):
        l0c = ctx.resource.l0c_buf.get_buffer_by_byte("int32", 0, N)
        ctx.emit(Pipe.M, "Mmad", local_writes=(l0c.access(),))
        ctx.set_flag(HardEvent.M_FIX, 0)
        ctx.wait_flag(HardEvent.M_FIX, 0)
        ctx.emit(Pipe.FIX, "Fixpipe", local_reads=(l0c.access(),), gm_writes=(gm["c"].access(0, N),))
        ctx.cross_core_set_flag(0, 2, Pipe.FIX)
        ctx.pipe_barrier(Pipe.ALL)

    def aiv(self, ctx, gm):
        ub = ctx.resource.ub_buf
        x, y = (ub.get_buffer_by_byte("int32", i * 256, N // 4) for i in range(2))
        for i in range(2):  # the constructor's burst of "buffer free" sets, and their drain at the end
            ctx.set_flag(HardEvent.V_MTE2, i)
        ctx.cross_core_wait_flag(0)
        for t in range(2):  # two tiles through the same UB buffers: the second reuses what the first read
            q = ctx.sub_block_idx * N // 2 + t * N // 4
            ctx.wait_flag(HardEvent.V_MTE2, 0)
            ctx.emit(Pipe.MTE2, "CopyGm2Ub", gm_reads=(gm["c"].access(q, N // 4),), local_writes=(x.access(),))
            ctx.set_flag(HardEvent.MTE2_V, 0)
            ctx.wait_flag(HardEvent.MTE2_V, 0)
            ctx.emit(Pipe.V, "Cast", local_reads=(x.access(),), local_writes=(y.access(),))
            ctx.set_flag(HardEvent.V_MTE2, 0)
            ctx.set_flag(HardEvent.V_MTE3, 0)
            ctx.wait_flag(HardEvent.V_MTE3, 0)
            ctx.emit(Pipe.MTE3, "CopyUb2Gm", local_reads=(y.access(),), gm_writes=(gm["d"].access(q, N // 4),))
            ctx.set_flag(HardEvent.MTE3_V, 0)
            ctx.wait_flag(HardEvent.MTE3_V, 0)
        for i in range(2):
            ctx.wait_flag(HardEvent.V_MTE2, i)
        ctx.pipe_barrier(Pipe.ALL)


def _run(options):
    gm = {k: GlobalBuffer.empty(N * 4, k, fill=0).tensor("int32") for k in "cd"}
    return launch(Handoff(), gm, 1, options=options)


def test_every_mutant_is_reported_or_argued_equivalent():
    sites = record_sites([_run])
    assert {r.site.kind for r in sites} == {"SetFlag", "WaitFlag", "PipeBarrier", "CrossCoreSetFlag",
                                            "CrossCoreWaitFlag"}
    mutants = catalogue(sites)
    results = check([_run], mutants)
    recs = {r.site: r for r in sites}
    undetected = [r for r in results if not r.detected]
    reasons = {str(r.mutation): automatic_equivalence(r.mutation, recs) for r in undetected}
    assert all(reasons.values()), reasons
    by = {}
    for r in results:
        by.setdefault(r.detected_by, []).append(str(r.mutation))
    assert len(by["RaceError"]) >= 6 and by["DeadlockError"] and by["UnpairedFlagError"]
    # the burst swap, the drain swap, the final barriers and the delayed drain waits are the equivalent ones
    assert sorted(reasons.values()) == sorted(
        ["the site issues both ids at the same points of the program: the swap only permutes them"] * 2
        + ["no instruction it orders ever follows it: there is nothing after it to order"] * 3)


def test_the_move_to_pipe_s_of_a_busy_pipe_is_reported_with_its_fix():
    sites = {r.site: r for r in record_sites([_run])}
    (xset,) = [s for s in sites if s.kind == "CrossCoreSetFlag"]
    assert not sites[xset].pipe_idle
    (res,) = check([_run], [m for m in catalogue(sites.values()) if m.edits[0].action == "move_pipe"])
    assert res.detected_by == "RaceError" and np.isscalar(res.runner)
