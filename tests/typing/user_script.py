"""A user's script: numpy in, numpy out, with the launch keywords that change the return type."""

from typing import Any, assert_type

import numpy as np
from numpy.typing import NDArray

import catlass_py
from catlass_py import ops
from catlass_py.analysis import WorkloadReport
from catlass_py.arch import LaunchResult
from catlass_py.data import example10_inputs

assert_type(catlass_py.__version__, str)
x = example10_inputs(group_count=2, m=40, n=64, k=32)
a: NDArray[np.int8] = np.zeros((40, 32), np.int8)

d = ops.grouped_matmul_slice_m_per_token_dequant(a, x.b, x.group_list, x.scale, x.per_token_scale, core_num=2)
assert_type(d, NDArray[Any])
d2, report = ops.grouped_matmul_slice_m_per_token_dequant(a, x.b, x.group_list, x.scale, x.per_token_scale,
                                                          core_num=2, return_report=True)
assert_type(report, WorkloadReport)
blocks: list[int] = report.blocks_per_core()
d3, launch = ops.basic_matmul(np.ones((8, 8), np.float16), np.ones((8, 8), np.float16), core_num=1,
                              return_launch=True)
assert_type(launch, LaunchResult | None)
d4, rep4, launch4 = ops.basic_matmul(d3, d3, core_num=1, return_report=True, return_launch=True)
assert_type(d4, NDArray[Any])
cs = ops.grouped_matmul([d3, d3], [d3, d3], core_num=1)
assert_type(cs, list[NDArray[Any]])
