"""CATLASS example 27: matmul_gelu, D = fp16(gelu(A @ B)) on simulated Atlas A2 AI cores.

    python examples/27_matmul_gelu.py 256 512 1024
    catlass-py run 27_matmul_gelu 256 512 1024 --cores 4

The cube cores compute C = A @ B (fp16 inputs, fp32 C) into a GM workspace; the vector cores apply
``TileElemWiseGelu`` to their half of each block in fp32 and cast to fp16. The assembly
(:mod:`catlass_py.assemblies.matmul_gelu`) follows ``examples/27_matmul_gelu/matmul_gelu.cpp``; inputs are generated
like the C++ host code (glibc rand). Example 28 (matmul_silu) is this assembly and run with ``TileElemWiseSilu``.

The host follows the assembly's template parameters: ``--set element=bf16`` draws A and B bf16, D is of
``out_dtype``, the operator stores the logical A and B in the kernel's layouts (``layout_a`` / ``layout_b``), and
``--set activation=TileElemWiseSilu`` compares with the SiLU golden.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies import matmul_silu
from catlass_py.assemblies.matmul_gelu import assemble
from catlass_py.gemm import GemmCoord
from catlass_py.ops import matmul_activation as ops
from catlass_py.runner import ExampleResult, ExampleRun, compare_output, parse_positional
from catlass_py.tile.vector_elementwise import TileElemWiseGelu, TileElemWiseSilu

NAME = "27_matmul_gelu"
USAGE = "m n k [device_id]"
SUMMARY = "fp16 matmul + Gelu activation on the vector cores (MatmulActivation, fp32 workspace)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16"), "the activation matmul's element types"),
}


def inputs(m: int, n: int, k: int, element: str = "float16"):
    """Host data like the C++: one glibc stream, A then B = FillRandomData<ElementA>(-5.0f, 5.0f), fp16 by
    default."""
    rng = data.GlibcRand()
    lo, hi = np.float32(-5.0), np.float32(5.0)
    a = data.fill_random(rng, m * k, lo, hi, element).reshape(m, k)
    b = data.fill_random(rng, k * n, lo, hi, element).reshape(k, n)
    return a, b


#: the assembly of each activation example (27: gelu, TileElemWiseGelu; 28: silu, TileElemWiseSilu)
ASSEMBLE = {"gelu": assemble, "silu": matmul_silu.assemble}
#: the activation (its golden) of each epilogue tile op
GOLDEN_OF = {TileElemWiseGelu: "gelu", TileElemWiseSilu: "silu"}


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``m n k [device_id]``.

    ``observers`` join the launch; ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches
    (``detect_races``, ``preempt_on_set``); ``seed`` overrides ``options.seed``."""
    return run_activation(NAME, "gelu", argv, cores=cores, seed=seed, observers=observers, progress=progress,
                          options=options, config=config)


def run_activation(name: str, activation: str, argv, *, cores=None, seed=None, observers=(), progress=None,
                   options=None, config=None) -> ExampleResult:
    """``run()`` of example 27 (``activation='gelu'``) and 28 (``'silu'``): the same inputs, assembly, launch
    and compare, with the activation's tile op, operator and golden."""
    m, n, k, *_device = parse_positional(name, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(name, arch, cores, observers=observers, progress=progress, options=options, config=config)
    kernel = ex.assemble(ASSEMBLE[activation], arch, swizzle_direction=0 if m > n else 1)
    element, element_d = ex.setting("element"), kernel.block_epilogue.d_type.element.name
    ex.require_supported(SUPPORTED_SETTINGS)
    if "activation" in ex.config:  # example 27's assembly takes the epilogue's tile op: the golden follows it
        ex.require("activation", tuple(GOLDEN_OF), "the example has a golden for these activations")
        activation = GOLDEN_OF[ex.setting("activation")]
    ex.reserve(kernel, inputs={"a": ((m, k), element), "b": ((k, n), element)}, gm={"d": ((m, n), element_d)},
               golden=golden.peak_bytes(f"matmul_{activation}", m=m, n=n, k=k),
               arguments=lambda gm: kernel.Arguments(GemmCoord(m, n, k), kernel.block_mmad.element_c.nbytes(1),
                                                     gm["a"], gm["b"], gm["d"]))
    a, b = ex.inputs(inputs, m, n, k, element)  # the operator stores them in the kernel's layouts
    matmul_activation = {"gelu": ops.matmul_gelu, "silu": ops.matmul_silu}[activation]
    launch_observers = ex.observers(kernel.total_blocks((m, n, k)))
    with ex.timing():
        d, launch_result = matmul_activation(a, b, core_num=ex.core_num, seed=seed, observers=launch_observers,
                                             kernel=kernel, options=options, return_launch=True)
    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = {"gelu": golden.matmul_gelu, "silu": golden.matmul_silu}[activation](a, b)
            result = compare_output(d, expect, k)
    return ex.result(d, result, golden=expect, shape={"m": m, "n": n, "k": k}, launch_result=launch_result,
                     details={"total_blocks": kernel.total_blocks((m, n, k)), "workspace_bytes": 4 * m * n,
                              "tiles_per_aiv": ex.report.tiles_per_aiv()})


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
