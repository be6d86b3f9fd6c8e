"""catlass_py: CATLASS GEMM templates as Python components on a simulated Ascend AI core.

Importing the package loads only its error classes (no numpy): the layers load when used
(``catlass_py.ops``, ``catlass_py.arch``, ...).
"""

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

#: The package version: the one place it is written (pyproject.toml reads it, ``catlass-py --version`` prints it).
__version__ = "0.1.0"

#: Version of the JSON documents catlass_py writes (``catlass-py run --json``, ``catlass-py list --json``, the
#: ``otherData`` of a Chrome trace): raised when a field changes meaning or goes away.
JSON_SCHEMA_VERSION = 1

__all__ = [
    "JSON_SCHEMA_VERSION",
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
