"""CATLASS example 28: matmul_silu, D = fp16(silu(A @ B)) on simulated Atlas A2 AI cores.

    python examples/28_matmul_silu.py 256 512 1024
    catlass-py run 28_matmul_silu 256 512 1024 --cores 4

The cube cores compute C = A @ B (fp16 inputs, fp32 C) into a GM workspace; the vector cores apply
``TileElemWiseSilu`` to their half of each block in fp32 and cast to fp16. The C++
(``examples/28_matmul_silu/matmul_silu.cpp``) is example 27's with the Silu tile op, and so is this script:
the assembly is :mod:`catlass_py.assemblies.matmul_silu` (example 27's with ``TileElemWiseSilu``); inputs,
launch and compare are ``examples/27_matmul_gelu.py``'s.
"""

from __future__ import annotations

import importlib
import sys

from catlass_py.assemblies.matmul_silu import assemble  # noqa: F401 - the assembly --set configures
from catlass_py.runner import ExampleResult

NAME = "28_matmul_silu"
USAGE = "m n k [device_id]"
SUMMARY = "fp16 matmul + Silu activation on the vector cores (MatmulActivation, fp32 workspace)"

_matmul_gelu = importlib.import_module("catlass_py.examples.27_matmul_gelu")
inputs = _matmul_gelu.inputs  # host data like the C++: A then B = FillRandomData<fp16_t>(-5.0f, 5.0f)
SUPPORTED_SETTINGS = _matmul_gelu.SUPPORTED_SETTINGS  # what run_activation takes (run NAME --help)


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``.

    ``observers`` join the launch; ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches
    (``detect_races``, ``preempt_on_set``); ``seed`` overrides ``options.seed``."""
    return _matmul_gelu.run_activation(NAME, "silu", argv, cores=cores, seed=seed, observers=observers,
                                       progress=progress, options=options, config=config)


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
