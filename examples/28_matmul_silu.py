"""CATLASS example 28: matmul_silu, D = fp16(silu(A @ B)) on simulated Atlas A2 AI cores.

    python examples/28_matmul_silu.py 256 512 1024
    catlass-py run 28_matmul_silu 256 512 1024 --cores 4

The cube cores compute C = A @ B (fp16 inputs, fp32 C) into a GM workspace; the vector cores apply
``TileElemWiseSilu`` to their half of each block in fp32 and cast to fp16. The C++
(``examples/28_matmul_silu/matmul_silu.cpp``) is example 27's with the Silu tile op, and so is this script:
the step-by-step assembly is :func:`assemble` in ``examples/27_matmul_gelu.py``, called here with
``activation=TileElemWiseSilu``; inputs, launch and compare are 27's too.
"""

from __future__ import annotations

import importlib
import sys

from catlass_py.arch import ATLAS_A2
from catlass_py.layout import RowMajor
from catlass_py.runner import ExampleResult
from catlass_py.tile.vector_elementwise import TileElemWiseSilu

NAME = "28_matmul_silu"
USAGE = "m n k [device_id]"
SUMMARY = "fp16 matmul + Silu activation on the vector cores (MatmulActivation, fp32 workspace)"

_matmul_gelu = importlib.import_module("catlass_py.examples.27_matmul_gelu")
inputs = _matmul_gelu.inputs  # host data like the C++: A then B = FillRandomData<fp16_t>(-5.0f, 5.0f)


def assemble(arch=ATLAS_A2, *, swizzle_direction=0, element="float16", out_dtype="float16", layout_a=RowMajor,
             layout_b=RowMajor, compute_length=16384):
    """Build the kernel like the C++ example: example 27's assembly (MatmulActivation; Pingpong<unit flag>
    128x256x256 / 128x256x64 with fp32 C; ElemWiseNoSource epilogue; GemmIdentityBlockSwizzle<3, direction>)
    with ``TileElemWiseSilu`` as the epilogue's tile op. Keywords as there."""
    return _matmul_gelu.assemble(arch, swizzle_direction=swizzle_direction, element=element, out_dtype=out_dtype,
                                 layout_a=layout_a, layout_b=layout_b, compute_length=compute_length,
                                 activation=TileElemWiseSilu)


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``.

    ``observers`` join the launch; ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches
    (``detect_races``, ``preempt_on_set``); ``seed`` overrides ``options.seed``."""
    return _matmul_gelu.run_activation(NAME, "silu", argv, cores=cores, seed=seed, observers=observers,
                                       progress=progress, options=options)


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
