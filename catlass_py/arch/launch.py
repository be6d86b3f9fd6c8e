"""Launching a kernel on the simulated AI cores: one program per core, run one at a time.

Counterpart of the ``<<<blockDim>>>`` launch of a mix kernel (CATLASS ``KernelAdapter``): ``block_dim``
AI cores, each one AIC running ``kernel.aic(ctx, params)`` and two AIVs running ``kernel.aiv(ctx, params)``.

Scheduling protocol (one core holds the baton at any time):

===========  ==================================================  =====================================
core state   entered when                                        leaves when
===========  ==================================================  =====================================
new          launch starts                                       it is picked: its greenlet starts
running      it holds the baton                                  it blocks on a flag, ends or raises
ready        a set made its awaited counter non-zero             it is picked again
blocked      ``cross_core_wait_flag`` finds its counter at 0     a set makes the counter non-zero
done         its program returned                                -
===========  ==================================================  =====================================

The next core is chosen only when the running one blocks or ends (or after each set with
``preempt_on_set``): with ``seed=None`` it is the next runnable core in the fixed order
AIC0, AIV0.0, AIV0.1, AIC1, ...; with a seed it is drawn at random among the runnable ones. When no core is
runnable and some are not done, the launch raises :class:`DeadlockError` at once, naming every blocked
core, its flag and the counters - it never hangs. An exception in a core ends the launch and names the core.

Each core program runs in its own greenlet (a coroutine with its own stack, from the ``greenlet`` package) on
the caller's thread: a core that blocks switches back to the launch's driver, which picks the next core and
switches to it. Exactly one core runs at a time, so the simulation is deterministic and needs no locks; and a
launch starts no operating-system threads, so what the cores allocate comes from the caller's thread's
malloc arena (glibc gives each thread an arena of its own and keeps in it what that thread freed: one thread
per core would leave a long run of launches holding memory in dozens of arenas).
"""

from __future__ import annotations

import contextlib
import copy
import numbers
import random
import threading
from dataclasses import dataclass, field
from typing import Any, Iterable

from greenlet import getcurrent, greenlet

from catlass_py.arch.context import CoreContext
from catlass_py.arch.events import CoreEndEvent, CoreId, CoreStartEvent, LaunchInfo, Observer, ObserverBus
from catlass_py.arch.flags import FlagBoard
from catlass_py.arch.hazards import RaceDetector
from catlass_py.arch.mutation import SyncEditor
from catlass_py.arch.params import LaunchParams
from catlass_py.arch.pipes import CoreType
from catlass_py.arch.spec import ATLAS_A2, ArchSpec, get_arch
from catlass_py.errors import ArgumentError, CatlassError, DeadlockError, KernelError, UnpairedFlagError


class _Abort(BaseException):
    """Unwinds a parked core when the launch ends early (never escapes the core's greenlet)."""


@dataclass
class LaunchResult:
    """What a finished launch reports: the cores that ran, the order in which they held the baton, the
    observers (to read their findings) and any flag sets nobody consumed."""

    arch: ArchSpec
    block_dim: int
    cores: tuple[CoreId, ...]
    schedule: list[str] = field(default_factory=list)
    observers: tuple[Observer, ...] = ()
    unconsumed_flags: list[tuple[CoreId, int, int]] = field(default_factory=list)
    unconsumed_intra_core_flags: list[tuple[CoreId, Any, int, int]] = field(default_factory=list)
    """(core, HardEvent, event id, count) of intra-core ``SetFlag``s no ``WaitFlag`` consumed."""
    race_detector: Observer | None = None
    """The :class:`~catlass_py.arch.hazards.RaceDetector` of a ``detect_races`` launch."""
    sync_sites: list = field(default_factory=list)
    """With ``LaunchParams(record_sync_sites=True)``: every synchronisation call site that ran
    (:class:`~catlass_py.arch.mutation.SyncSiteRecord`), in source order."""


class _CoreRun:
    __slots__ = ("ctx", "fn", "state", "glet", "waiting_on")

    def __init__(self, ctx: CoreContext, fn):
        self.ctx = ctx
        self.fn = fn
        self.state = "new"
        self.glet: greenlet | None = None  # made when the core is first picked
        self.waiting_on: int | None = None


class _Launch:
    """Scheduler, flag board and bus of one launch (internal; see :func:`launch`)."""

    def __init__(self, kernel, params, block_dim: int, arch: ArchSpec, options: LaunchParams, bus: ObserverBus):
        self.kernel = kernel
        self.params = params
        self.arch = arch
        self.options = options
        self.bus = bus
        self.editor = (SyncEditor(options.mutation, options.record_sync_sites)
                       if options.mutation is not None or options.record_sync_sites else None)
        aic_fn = getattr(kernel, "aic", None)
        aiv_fn = getattr(kernel, "aiv", None)
        runs: list[_CoreRun] = []
        for b in range(block_dim):
            if aic_fn is not None:
                core = CoreId(CoreType.AIC, b, 0, arch.aiv_per_aic)
                runs.append(_CoreRun(self._context(core, block_dim), aic_fn))
            if aiv_fn is not None:
                for s in range(arch.aiv_per_aic):
                    core = CoreId(CoreType.AIV, b, s, arch.aiv_per_aic)
                    runs.append(_CoreRun(self._context(core, block_dim), aiv_fn))
        self.runs = runs
        self.by_core = {r.ctx.core: r for r in runs}
        self.block_dim = block_dim
        self._idle_aic: dict[int, CoreContext] = {}  # AIC contexts that hold L1 for AIV-only kernels (cube_l1)
        self.flags = FlagBoard(arch, [r.ctx.core for r in runs])
        self.rng = random.Random(options.seed) if options.seed is not None else None
        self.current = -1
        self.error: BaseException | None = None
        self.driver: greenlet | None = None  # the caller's greenlet, which picks the cores and switches to them
        self.aborting = False
        self.schedule: list[str] = []

    def _context(self, core: CoreId, block_dim: int) -> CoreContext:
        return CoreContext(
            self.arch, core, block_dim, self.bus, self,
            poison=self.options.poison, check_intra_core_flags=self.options.check_intra_core_flags,
            editor=self.editor, numerics=self.options.numerics,
        )

    def cube_l1(self, ai_core: int):
        """L1 arena of AI core ``ai_core``: its AIC's ``l1_buf``, or (kernels without an AIC program) an idle AIC
        context's, made on first use, so that the vector cores of one AI core share it (Ascend 950 UB -> L1)."""
        core = CoreId(CoreType.AIC, ai_core, 0, self.arch.aiv_per_aic)
        run = self.by_core.get(core)
        if run is not None:
            return run.ctx.resource.l1_buf
        ctx = self._idle_aic.get(ai_core)
        if ctx is None:
            ctx = self._idle_aic[ai_core] = self._context(core, self.block_dim)
        return ctx.resource.l1_buf

    # -- baton passing ---------------------------------------------------------------------------
    def _pick(self) -> _CoreRun | None:
        runs = self.runs
        if self.rng is not None:
            runnable = [i for i, r in enumerate(runs) if r.state in ("new", "ready")]
            if not runnable:
                return None
            i = self.rng.choice(runnable)
        else:  # the first runnable core after the current one, in the fixed order (cyclically)
            n = len(runs)
            i = self.current
            for _ in range(n):
                i = i + 1 if i + 1 < n else 0
                if runs[i].state in ("new", "ready"):
                    break
            else:
                return None
        self.current = i
        return runs[i]

    def _body(self, run: _CoreRun) -> None:
        """A core's greenlet: its program, then back to the driver (the greenlet's parent)."""
        bus = self.bus
        try:
            if bus.cores:
                bus.publish(CoreStartEvent(bus.next_seq(), run.ctx.core))
            run.fn(run.ctx, self.params)
            run.ctx.flush_delayed()
            if bus.cores:
                bus.publish(CoreEndEvent(bus.next_seq(), run.ctx.core))
        except _Abort:
            return
        except BaseException as exc:  # noqa: BLE001 - every failure ends the launch, named by core
            run.state = "done"
            if self.error is None:  # the first failure is the launch's (not one met while unwinding after it)
                # Ctrl-C (or SystemExit) raised in the running core is the caller's: passed on as it is
                caller = isinstance(exc, (KeyboardInterrupt, SystemExit))
                self.error = exc if caller else _attribute(exc, run.ctx)
            return
        run.state = "done"

    def _park(self, run: _CoreRun) -> None:
        """Give the baton back to the driver and sleep until the core is picked again."""
        self.driver.switch()
        if self.aborting:
            raise _Abort()

    def _deadlock(self) -> DeadlockError:
        blocked = []
        lines = []
        for r in self.runs:
            if r.state == "blocked":
                desc = self.flags.describe(r.ctx.core, r.waiting_on)
                blocked.append((r.ctx.core.name, r.waiting_on, desc))
                lines.append(f"  {r.ctx.core.name} waits on flag {r.waiting_on} ({desc})")
        done = sum(r.state == "done" for r in self.runs)
        return DeadlockError(
            f"deadlock: every unfinished core waits on a cross-core flag nobody will set "
            f"({len(blocked)} blocked, {done} finished):\n" + "\n".join(lines),
            blocked=tuple(blocked),
        )

    # -- flags (called from CoreContext in the running core's greenlet) -------------------------
    def flag_set(self, ctx: CoreContext, flag_id: int, mode: int, seq: int) -> None:
        for core in self.flags.set(ctx.core, flag_id, mode, seq):
            r = self.by_core[core]
            if r.state == "blocked" and r.waiting_on == flag_id:
                r.state = "ready"
                r.waiting_on = None
        if self.options.preempt_on_set:
            run = self.by_core[ctx.core]
            run.state = "ready"
            self._park(run)

    def flag_wait(self, ctx: CoreContext, flag_id: int) -> tuple[tuple[int, ...], bool]:
        sources = self.flags.try_wait(ctx.core, flag_id)
        if sources is not None:
            return sources, False
        run = self.by_core[ctx.core]
        run.state = "blocked"
        run.waiting_on = flag_id
        self._park(run)
        sources = self.flags.try_wait(ctx.core, flag_id)
        assert sources is not None, "a core was woken without a count to consume"
        return sources, True

    # -- driver (the caller's greenlet) ------------------------------------------------------------
    def run(self) -> None:
        """Hand the baton from core to core until every core is done, one fails, or none can run (a deadlock
        when some are blocked)."""
        self.driver = getcurrent()
        try:
            while self.error is None:
                run = self._pick()
                if run is None:
                    if any(r.state == "blocked" for r in self.runs):
                        self.error = self._deadlock()
                    break
                self.schedule.append(run.ctx.core.short)
                if run.state == "new":
                    run.glet = greenlet(self._body, parent=self.driver)
                    run.state = "running"
                    run.glet.switch(run)
                else:
                    run.state = "running"
                    run.glet.switch()
        finally:
            self._stop_all()

    def _stop_all(self) -> None:
        """Unwind every parked core (an early end: an error, a deadlock, or Ctrl-C in the running core): each gets
        :class:`_Abort` where it parked, so its ``finally`` blocks run; one that swallows it and parks again gets
        it again."""
        self.aborting = True
        for r in self.runs:
            while r.glet is not None and bool(r.glet):  # started and not dead
                r.glet.throw(_Abort)

    def release(self) -> None:
        """Drop everything the launch allocated or holds (core contexts, their buffers, the caller's params),
        breaking the reference cycles between a core's context, its buffers and the launch, so that memory
        returns without waiting for the cyclic garbage collector."""
        for r in self.runs:
            if r.ctx is not None:
                r.ctx.release()
            r.ctx = r.fn = r.glet = None
        self.runs = []
        self.by_core = {}
        self.kernel = self.params = self.flags = self.editor = self.error = None
        self.__dict__.pop("_launch_memo", None)


_blas_lock = threading.Lock()
_blas_users = 0
_blas_limiter = None
_blas_controller = None  # threadpoolctl's view of the loaded BLAS libraries, taken at the first limited block
_blas_local: list = []  # each loaded OpenBLAS's openblas_set_num_threads_local (taken with the controller)
_blas_local_before: list = []  # what they returned when the first block in set them


def _thread_local_setters(controller) -> list:
    """``openblas_set_num_threads_local`` of every OpenBLAS ``controller`` found that exports it (OpenBLAS 0.3.27
    on). With numpy's OpenBLAS 0.3.31 (pthreads), once the main thread had limited and restored the count
    threadpoolctl sets, a launch from another thread ran its products on every BLAS thread under a limit of 1
    (threadpoolctl read the old count back), and a float product summed in another order: other bits for the
    same inputs. This setter takes effect from any thread, and returns the count it replaces;
    :func:`blas_threads` sets both."""
    import ctypes

    setters = []
    for lib in getattr(controller, "lib_controllers", ()):
        if getattr(lib, "internal_api", None) != "openblas":
            continue
        dynlib = getattr(lib, "dynlib", None)
        fn = getattr(dynlib, "openblas_set_num_threads_local", None) if dynlib is not None else None
        if fn is not None:
            fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int]
            setters.append(fn)
    return setters


@contextlib.contextmanager
def blas_threads(limit: int | None):
    """Limit BLAS threads to ``limit`` (None: leave them) for the ``with`` block: every launch's cores (see
    ``LaunchParams.blas_threads``) and an example's golden (:class:`catlass_py.runner.ExampleRun`), whose
    products are as small as the groups they cover.

    The limit is process-wide, so concurrent users share it: the first one in sets it, the last one out
    restores the process's setting (a lock and a count of the blocks running). An OpenBLAS with a second count
    (:func:`_thread_local_setters`) gets that one set and restored the same way. The BLAS libraries are looked
    up once per process (threadpoolctl's ``ThreadpoolController``; a lookup scans the loaded libraries, about
    1.7 ms); numpy's BLAS, which the cores and the goldens use, is loaded with numpy, before the first launch.
    """
    global _blas_users, _blas_limiter, _blas_controller, _blas_local, _blas_local_before
    if limit is None:
        yield
        return
    with _blas_lock:
        if _blas_users == 0:
            if _blas_controller is None:
                from threadpoolctl import ThreadpoolController

                _blas_controller = ThreadpoolController()
                _blas_local = _thread_local_setters(_blas_controller)
            # the second count first: it returns the count before (threadpoolctl's limiter then finds the limit set
            # on that library, and restores only the others)
            _blas_local_before = [set_local(limit) for set_local in _blas_local]
            _blas_limiter = _blas_controller.limit(limits=limit, user_api="blas")
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                _blas_limiter.restore_original_limits()
                for set_local, value in zip(_blas_local, _blas_local_before):
                    set_local(value)
                _blas_limiter = None


def _attribute(exc: BaseException, ctx: CoreContext) -> BaseException:
    """Return an exception that names the core in which ``exc`` was raised."""
    if isinstance(exc, CatlassError):
        if getattr(exc, "core", None) is not None:
            return exc
        new = copy.copy(exc)
        text = exc.args[0] if exc.args else ""
        if not str(text).startswith(f"{ctx.core.name}: "):  # (a core's own check may have named it already)
            text = f"{ctx.core.name}: {text}"
        new.args = (text,) + tuple(exc.args[1:])
        new.core = ctx.core
        new.__cause__ = exc
        return new
    err = KernelError(f"{ctx.core.name} raised {type(exc).__name__}: {exc}")
    err.core = ctx.core
    err.__cause__ = exc
    return err


def _unpaired(leftover, intra) -> UnpairedFlagError:
    """The error for flag sets no wait consumed by the end of the launch (the next operator on the device
    would inherit them: a wait there returns early, or the counter overflows)."""
    items = [f"{c.name}: {n} unconsumed set(s) of cross-core flag {fid}" for c, fid, n in leftover]
    items += [f"{c.name}: {n} unconsumed SetFlag<{ev.name}>({eid})" for c, ev, eid, n in intra]
    shown = "\n  ".join(items[:12]) + ("\n  ..." if len(items) > 12 else "")
    err = UnpairedFlagError(
        f"{len(items)} flag(s) were set but never waited for when the launch ended (on hardware the next operator "
        f"would inherit them; LaunchParams(allow_unpaired_flags=True) accepts this):\n  {shown}")
    err.cross_core = list(leftover)
    err.intra_core = list(intra)
    return err


def launch(
    kernel,
    params: Any,
    block_dim: int,
    *,
    arch: ArchSpec | str = ATLAS_A2,
    seed: int | None = None,
    observers: Iterable[Observer] = (),
    options: LaunchParams | None = None,
    detect_races: bool | None = None,
) -> LaunchResult:
    """Run ``kernel`` on ``block_dim`` simulated AI cores (the ``<<<blockDim>>>`` launch of a mix kernel).

    ``kernel.aic(ctx, params)`` runs on every cube core and ``kernel.aiv(ctx, params)`` on every vector
    core; a kernel without one of the two methods (or with it set to None) launches only the other type.
    ``seed`` and ``detect_races`` override the fields of ``options``. Raises :class:`DeadlockError`, or the
    error a core raised (annotated with that core), after every observer has been told that the launch
    ended. With ``detect_races`` a :class:`~catlass_py.arch.hazards.RaceDetector` joins the observers: it
    raises :class:`RaceError` at the first unordered conflicting pair of accesses (between cores, or between
    pipes of one core). Flag sets nobody consumed by the end raise :class:`UnpairedFlagError` unless
    ``options.allow_unpaired_flags``.
    """
    arch = get_arch(arch)
    options = options or LaunchParams()
    if seed is not None or detect_races is not None:
        changes = {"seed": seed, "detect_races": detect_races}
        options = LaunchParams(**{**options.__dict__, **{k: v for k, v in changes.items() if v is not None}})
    if isinstance(block_dim, bool) or not isinstance(block_dim, numbers.Integral) or not 1 <= block_dim <= arch.core_num:
        raise ArgumentError(f"block_dim: expected an int in 1..{arch.core_num} ({arch.name} AI cores), got {block_dim!r}")
    block_dim = int(block_dim)  # numpy integers too
    if getattr(kernel, "aic", None) is None and getattr(kernel, "aiv", None) is None:
        raise ArgumentError(f"kernel: {kernel!r} defines neither aic(ctx, params) nor aiv(ctx, params)")
    observers = tuple(observers)
    detector = None
    if options.detect_races:
        detector = RaceDetector()
        observers = observers + (detector,)
    bus = ObserverBus(observers)
    state = _Launch(kernel, params, block_dim, arch, options, bus)
    cores = tuple(r.ctx.core for r in state.runs)
    error: BaseException | None = None
    try:
        info = LaunchInfo(arch, block_dim, cores, kernel, params)
        bus.launch_start(info)
        try:
            with blas_threads(options.blas_threads):
                state.run()
        finally:
            bus.launch_end(info, state.error)
            info = None
        error = state.error
        if error is None:
            leftover = state.flags.leftover()
            intra = [(r.ctx.core, ev, eid, n) for r in state.runs for ev, eid, n in r.ctx.pending_intra_core_flags()]
            if (leftover or intra) and not options.allow_unpaired_flags:
                error = _unpaired(leftover, intra)
            else:
                result = LaunchResult(
                    arch=arch, block_dim=block_dim, cores=cores, schedule=state.schedule, observers=observers,
                    unconsumed_flags=leftover, unconsumed_intra_core_flags=intra, race_detector=detector,
                    sync_sites=sorted(state.editor.records.values(), key=lambda r: r.site) if state.editor else [],
                )
    finally:
        state.release()
        state = kernel = params = None
    if error is not None:
        try:
            raise error
        finally:  # the frame must not keep the exception (a cycle through its traceback)
            error = None
    return result
