"""catlass_py: CATLASS GEMM templates as Python components on a simulated Ascend AI core."""

from catlass_py.errors import (
    AlignmentError,
    ArgumentError,
    CapacityError,
    CatlassError,
    ConfigError,
    DeadlockError,
    FlagOverflowError,
    KernelError,
    OutOfBoundsError,
    RaceError,
)

__version__ = "0.1.0"

__all__ = [
    "AlignmentError",
    "ArgumentError",
    "CapacityError",
    "CatlassError",
    "ConfigError",
    "DeadlockError",
    "FlagOverflowError",
    "KernelError",
    "OutOfBoundsError",
    "RaceError",
    "__version__",
]
