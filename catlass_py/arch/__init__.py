"""The simulated machine: arch specs, memories, cores and pipes, cross-core flags, launcher, observer bus.

Knows nothing about GEMM. Counterpart of CATLASS ``include/catlass/arch`` plus the Ascend C runtime.
"""

from catlass_py.arch.budget import Footprint, check_footprint, memory_limit
from catlass_py.arch.context import CoreContext, standalone_core
from catlass_py.arch.events import (
    CoreEndEvent,
    CoreId,
    CoreStartEvent,
    CrossCoreSetEvent,
    CrossCoreWaitEvent,
    Event,
    MemAccess,
    InstructionEvent,
    LaunchInfo,
    MarkerEvent,
    Observer,
    ObserverBus,
    PipeBarrierEvent,
    SetFlagEvent,
    WaitFlagEvent,
)
from catlass_py.arch.flags import CrossCoreFlag, FlagBoard
from catlass_py.arch.launch import LaunchResult, launch
from catlass_py.arch.memory import GlobalBuffer, GlobalTensor, LocalArena, LocalTensor, Resource
from catlass_py.arch.params import LaunchParams
from catlass_py.arch.pipes import CoreType, HardEvent, Pipe
from catlass_py.arch.spec import ASCEND_950, ATLAS_A2, ArchSpec, get_arch, load_arch

__all__ = [
    "ASCEND_950",
    "ATLAS_A2",
    "ArchSpec",
    "CoreContext",
    "CoreEndEvent",
    "CoreId",
    "CoreStartEvent",
    "CoreType",
    "CrossCoreFlag",
    "CrossCoreSetEvent",
    "CrossCoreWaitEvent",
    "Event",
    "FlagBoard",
    "Footprint",
    "GlobalBuffer",
    "GlobalTensor",
    "MemAccess",
    "HardEvent",
    "InstructionEvent",
    "LaunchInfo",
    "LaunchParams",
    "LaunchResult",
    "LocalArena",
    "LocalTensor",
    "MarkerEvent",
    "Observer",
    "ObserverBus",
    "Pipe",
    "PipeBarrierEvent",
    "Resource",
    "SetFlagEvent",
    "WaitFlagEvent",
    "check_footprint",
    "get_arch",
    "launch",
    "load_arch",
    "memory_limit",
    "standalone_core",
]
