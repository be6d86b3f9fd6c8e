"""The kernels of the mutation tests, each as runners ``run(options) -> LaunchResult`` at two shapes (the second
with an odd number of blocks on some AI core, so that swapping the two workspace slots' flag ids is visible)."""

from __future__ import annotations

import numpy as np

from catlass_py import ops
from catlass_py.arch import ATLAS_A2, GlobalBuffer
from catlass_py.data import example10_inputs
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm
from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant import build_kernel

_RNG = np.random.default_rng(7)


def _int8(*shape):
    return _RNG.integers(-128, 128, shape, dtype=np.int8)


def _fp16(*shape):
    return _RNG.uniform(-1, 1, shape).astype(np.float16)


def _flagship(g, m, n, k, cores):
    kernel = build_kernel(ATLAS_A2, "bfloat16")
    x = example10_inputs(g, m, n, k)

    def run(options):
        gm = {nm: GlobalBuffer.from_array(v, nm, read_only=True).tensor(v.dtype) for nm, v in x.as_dict().items()}
        d = np.zeros((m, n), x.scale.dtype)
        args = kernel.Arguments(GemmCoord(m, n, k), g, cores, gm["group_list"], gm["a"], gm["b"], gm["scale"],
                                gm["per_token_scale"], GlobalBuffer.from_array(d, "d").tensor(d.dtype))
        op = DeviceGemm(kernel)
        op.initialize(args)
        return op.run(cores, options=options)

    return run


def _moe(g, m, n, k, cores):
    a, b = _int8(m, k), _int8(g, k, n)
    gl = np.sort(_RNG.integers(0, m + 1, g)).astype(np.int32)
    gl[-1] = m
    s, p = _RNG.uniform(0.5, 1.5, (g, n)).astype(np.float32), _RNG.uniform(0.5, 1.5, m).astype(np.float32)
    return lambda options: ops.grouped_matmul_slice_m_per_token_dequant_moe(
        a, b, gl, s, p, core_num=cores, options=options, return_launch=True)[1]


def _quant(m, n, k, cores):
    a, b = _int8(m, k), _int8(k, n)
    s, p = _RNG.uniform(0.5, 1.5, n).astype(np.float16), _RNG.uniform(0.5, 1.5, m).astype(np.float16)
    return lambda options: ops.quant_matmul(a, b, s, p, layout_b="row_major", core_num=cores, options=options,
                                            return_launch=True)[1]


def _splitk(m, n, k, cores):
    a, b = _fp16(m, k), _fp16(k, n)
    return lambda options: ops.splitk_matmul(a, b, layout_b="row_major", core_num=cores, options=options,
                                             return_launch=True)[1]


def _streamk(m, n, k, cores):
    a, b = _fp16(m, k), _fp16(k, n)
    return lambda options: ops.streamk_matmul(a, b, core_num=cores, options=options, return_launch=True)[1]


KERNELS = {
    # example 10: 128x256 blocks; 3 groups over 300 rows on 2 cores, then one group of 3 blocks on 1 core
    "10 grouped_matmul_slice_m_per_token_dequant": lambda: [_flagship(3, 300, 512, 512, 2),
                                                            _flagship(1, 128, 768, 256, 1)],
    "07 grouped_matmul_slice_m_per_token_dequant_moe": lambda: [_moe(3, 300, 512, 512, 2), _moe(1, 128, 768, 256, 1)],
    "09 splitk_matmul": lambda: [_splitk(256, 512, 1024, 2), _splitk(128, 256, 2048, 3)],
    "12 quant_matmul": lambda: [_quant(256, 512, 512, 2), _quant(128, 768, 256, 1)],
    "37 streamk_matmul": lambda: [_streamk(256, 512, 1024, 2), _streamk(384, 256, 640, 3)],
}
