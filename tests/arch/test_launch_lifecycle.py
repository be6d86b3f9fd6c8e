"""A launch as a process resource: it frees what it allocated without the cyclic garbage collector (its observers
keep only their findings), stops every core when the caller is interrupted, and shares the process-wide BLAS
thread limit safely between threads."""

import gc
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
import weakref

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from catlass_py.arch import GlobalBuffer, HardEvent, LaunchParams, Pipe, launch
from catlass_py.errors import DeadlockError, KernelError


class Params:
    """Launch parameters an observer can hold a weak reference to."""

    def __init__(self, n=256):
        self.src = GlobalBuffer.from_array(np.arange(n, dtype=np.float32), "src", read_only=True).tensor("float32")
        self.dst = GlobalBuffer.empty(n * 4, "dst", fill=0).tensor("float32")
        self.n = n


class Copy:
    """Each AIV copies its half of src to dst through UB (with the intra-core flags)."""

    def __init__(self, fail=False, deadlock=False):
        self.fail, self.deadlock = fail, deadlock

    def aiv(self, ctx, p):
        half = p.n // 2
        off = ctx.sub_block_idx * half
        ub = ctx.resource.ub_buf.get_buffer_by_byte("float32", 0, half)
        ub.view()[:] = p.src[off].view(half)
        ctx.emit(Pipe.MTE2, "CopyGm2Ub", gm_reads=(p.src.access(off, half),), local_writes=(ub.access(),))
        if self.fail and ctx.sub_block_idx == 1:
            raise ValueError("boom")
        if self.deadlock and ctx.sub_block_idx == 1:
            ctx.cross_core_wait_flag(3)
        ctx.set_flag(HardEvent.MTE2_MTE3, 0)
        ctx.wait_flag(HardEvent.MTE2_MTE3, 0)
        p.dst[off].view(half, write=True)[:] = ub.view()
        ctx.emit(Pipe.MTE3, "CopyUb2Gm", local_reads=(ub.access(),), gm_writes=(p.dst.access(off, half),))


def _launch_and_forget(kernel, **kw):
    p = Params()
    refs = (weakref.ref(p), weakref.ref(p.src.buffer), weakref.ref(p.dst.buffer))
    try:
        launch(kernel, p, 1, **kw)
    except Exception as exc:  # noqa: BLE001 - the test drops the exception and checks what it kept alive
        kind = type(exc)
    else:
        kind = None
    del p
    return refs, kind


@pytest.mark.parametrize("kernel, expected", [(Copy(), None), (Copy(fail=True), KernelError),
                                              (Copy(deadlock=True), DeadlockError)])
def test_a_launch_frees_its_params_and_buffers_without_the_garbage_collector(kernel, expected):
    gc.collect()
    gc.disable()
    try:
        refs, kind = _launch_and_forget(kernel, options=LaunchParams(detect_races=True))
        assert kind is expected
        assert [r() for r in refs] == [None, None, None]
    finally:
        gc.enable()


def test_ten_launches_leave_no_thread_and_no_garbage_cycle_behind():
    gc.collect()
    threads = threading.active_count()
    gc.disable()
    try:
        for _ in range(10):
            refs, _ = _launch_and_forget(Copy())
            assert all(r() is None for r in refs)
        assert threading.active_count() == threads
    finally:
        gc.enable()


class Unwind:
    """AIV0.0 waits on a cross-core flag nobody sets, inside a try/finally (whose clean-up raises too with
    ``cleanup_fails``); AIV0.1 raises or returns."""

    def __init__(self, fail, cleanup_fails=False):
        self.fail, self.cleanup_fails = fail, cleanup_fails
        self.threads: set[int] = set()
        self.unwound: list[str] = []

    def aiv(self, ctx, p):
        self.threads.add(threading.get_ident())
        if ctx.sub_block_idx == 0:
            try:
                ctx.cross_core_wait_flag(5)
            finally:
                self.unwound.append(ctx.core.short)
                if self.cleanup_fails:
                    raise RuntimeError("clean-up failed")
        elif self.fail:
            raise ValueError("boom")


@pytest.mark.parametrize("fail, expected", [(True, KernelError), (False, DeadlockError)])
def test_cores_run_on_the_callers_thread_and_a_parked_core_unwinds_when_the_launch_ends_early(fail, expected):
    """Every core runs on the thread that called launch() (no thread starts); when another core fails, or every
    core left is blocked, the parked core is unwound (its finally block runs) before launch() raises."""
    box = {}

    def caller():
        kernel = Unwind(fail)
        before = threading.active_count()
        try:
            launch(kernel, Params(), 1)
        except Exception as exc:  # noqa: BLE001 - checked below
            box["error"] = exc
        box.update(kernel=kernel, ident=threading.get_ident(), started=threading.active_count() - before)

    worker = threading.Thread(target=caller)
    worker.start()
    worker.join()
    assert isinstance(box["error"], expected)
    assert box["kernel"].threads == {box["ident"]}
    assert box["started"] == 0
    assert box["kernel"].unwound == ["AIV0.0"]


@pytest.mark.parametrize("fail, expected", [(True, "ValueError: boom"), (False, "deadlock")])
def test_an_error_met_while_unwinding_a_parked_core_does_not_replace_the_launchs_error(fail, expected):
    kernel = Unwind(fail, cleanup_fails=True)
    with pytest.raises((KernelError, DeadlockError), match=expected):
        launch(kernel, Params(), 1)
    assert kernel.unwound == ["AIV0.0"]


_SPINNER = textwrap.dedent("""
    import signal, sys, threading, time, hashlib
    # Ctrl-C raises KeyboardInterrupt even when the test runs in a background job (which starts with SIGINT
    # ignored, and Python then installs no handler)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np
    from catlass_py.arch import GlobalBuffer, Pipe, launch

    class Spin:  # a single core that never blocks on a flag
        def aic(self, ctx, p):
            a = np.ones((64, 64), np.float32)
            print("spinning", flush=True)
            while True:
                a = (a @ a) * (1.0 / 64)

    class Small:
        def aic(self, ctx, p):
            p.view(16, write=True)[:] = np.arange(16, dtype=np.float32) * 3

    print("ready", flush=True)
    t0 = time.perf_counter()
    try:
        launch(Spin(), None, 1)
    except KeyboardInterrupt:
        print("interrupted", round(time.perf_counter() - t0, 3), flush=True)
    t1 = time.perf_counter()
    while threading.active_count() > 1 and time.perf_counter() - t1 < 5:
        time.sleep(0.01)
    print("threads", threading.active_count(), flush=True)
    out = GlobalBuffer.empty(64, "out", fill=0).tensor("float32")
    launch(Small(), out, 1)
    print("digest", hashlib.sha256(out.view().tobytes()).hexdigest()[:16], flush=True)
""")


def _lines_with_deadline(proc, seconds: float):
    """The child's stdout lines as they come, read on a thread; a line that does not come within ``seconds``
    fails the test (the child is killed) instead of hanging the suite."""
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout] + [lines.put(None)],
                     daemon=True).start()
    seen = []

    def next_line() -> list[str]:
        try:
            line = lines.get(timeout=seconds)
        except queue.Empty:
            proc.kill()
            raise AssertionError(f"no line from the child within {seconds} s after {seen}") from None
        assert line is not None, f"the child ended after {seen}"
        seen.append(line.strip())
        return line.split()

    return next_line


def test_ctrl_c_stops_a_core_that_never_blocks_and_leaves_no_thread():
    proc = subprocess.Popen([sys.executable, "-c", _SPINNER], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        next_line = _lines_with_deadline(proc, 120)
        assert next_line() == ["ready"]
        assert next_line() == ["spinning"]  # the core runs its endless loop
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        # the spinning core never ends on its own: the launch returns and no thread is left only if the
        # interrupt stopped it
        assert next_line()[0] == "interrupted"
        assert next_line() == ["threads", "1"]
        digest = next_line()
        proc.wait(timeout=30)
    finally:
        proc.kill()
    import hashlib

    fresh = hashlib.sha256((np.arange(16, dtype=np.float32) * 3).tobytes()).hexdigest()[:16]
    assert digest == ["digest", fresh]


@pytest.mark.parametrize("detect_races", [False, True])
def test_observers_kept_after_a_launch_hold_no_launch_state_and_free_without_the_garbage_collector(detect_races):
    from catlass_py.analysis import CostModel

    gc.collect()
    gc.disable()
    try:
        cost = CostModel()
        result = launch(Copy(), Params(), 1, observers=(cost,), options=LaunchParams(detect_races=detect_races))
        assert cost.report.cycles > 0
        kept = [cost] + ([result.race_detector] if detect_races else [])
        assert all(o.orders == {} for o in kept)
        if detect_races:
            assert result.race_detector.accesses > 0
        refs = [weakref.ref(o) for o in kept]
        del cost, result, kept
        assert [r() for r in refs] == [None] * len(refs)
    finally:
        gc.enable()


def _blas_limits():
    return sorted((i["internal_api"], i["filepath"], i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas")


def test_concurrent_launches_leave_the_blas_setting_as_it_was():
    before = _blas_limits()
    errors = []

    def worker():
        try:
            for _ in range(20):
                p = Params()
                launch(Copy(), p, 1)
                np.testing.assert_array_equal(p.dst.view(), np.arange(256, dtype=np.float32))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert _blas_limits() == before
