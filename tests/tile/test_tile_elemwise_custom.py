"""An element-wise tile op of a user's own, built on the public base ``catlass_py.tile.TileElemWise`` with the
``vector_*`` instructions: assembly checks, the call's dtype check, its values (against numpy) and the pipe-V
barriers a race check needs between its dependent steps."""

from __future__ import annotations

import numpy as np
import pytest

from catlass_py.arch import ATLAS_A2, Pipe, standalone_core
from catlass_py.errors import ConfigError
from catlass_py.tile import TileElemWise
from catlass_py.tile.vector_elementwise import vector_adds, vector_mul


class TileElemWiseSquarePlusOne(TileElemWise):
    """``out = x * x + 1`` over COMPUTE_LENGTH elements: a product, then a scalar add of what it wrote."""

    op_name = "TileElemWiseSquarePlusOne"

    def __call__(self, ub_out, ub_in):
        self.check(ub_out, ub_in)
        vector_mul(ub_out, ub_in, ub_in, self.compute_length)
        ub_out.ctx.pipe_barrier(Pipe.V)
        vector_adds(ub_out, ub_out, 1, self.compute_length)


def test_assembly_checks_name_the_op():
    with pytest.raises(ConfigError, match=r"^TileElemWiseSquarePlusOne: compute type must be one of"):
        TileElemWiseSquarePlusOne(ATLAS_A2, "int8", 64)
    with pytest.raises(ConfigError, match=r"^TileElemWiseSquarePlusOne: COMPUTE_LENGTH must be a positive int"):
        TileElemWiseSquarePlusOne(ATLAS_A2, "float32", 0)
    assert repr(TileElemWiseSquarePlusOne(ATLAS_A2, "float16", 64)) == \
        "TileElemWiseSquarePlusOne(float16, COMPUTE_LENGTH=64)"


def test_values_and_dtype_check():
    ctx = standalone_core(core_type="AIV")
    ub = ctx.resource.ub_buf
    x = np.linspace(-3, 3, 256, dtype=np.float32)
    ub_in, ub_out = ub.get_buffer_by_byte("float32", 0, 256), ub.get_buffer_by_byte("float32", 1024, 256)
    ub_in.view(256)[:] = x
    op = TileElemWiseSquarePlusOne(ATLAS_A2, "float32", 256)
    op(ub_out, ub_in)
    np.testing.assert_array_equal(ub_out.view(256), x * x + np.float32(1))
    with pytest.raises(ConfigError, match="assembled for float32, called with a float16 tensor"):
        op(ub.get_buffer_by_byte("float16", 2048, 256), ub.get_buffer_by_byte("float16", 4096, 256))


class _NoBarrier(TileElemWiseSquarePlusOne):
    op_name = "TileElemWiseSquarePlusOneNoBarrier"

    def __call__(self, ub_out, ub_in):
        self.check(ub_out, ub_in)
        vector_mul(ub_out, ub_in, ub_in, self.compute_length)
        vector_adds(ub_out, ub_out, 1, self.compute_length)  # reads what the Mul wrote, no PipeBarrier<PIPE_V>


class _OneTile:
    aic = None

    def __init__(self, op):
        self.op = op

    def aiv(self, ctx, params):
        ub = ctx.resource.ub_buf
        self.op(ub.get_buffer_by_byte("float32", 1024, 256), ub.get_buffer_by_byte("float32", 0, 256))


def test_the_race_check_sees_a_missing_barrier_between_its_steps():
    from catlass_py.arch import LaunchParams, launch
    from catlass_py.errors import RaceError

    launch(_OneTile(TileElemWiseSquarePlusOne(ATLAS_A2, "float32", 256)), None, 1, arch=ATLAS_A2,
           options=LaunchParams(detect_races=True))
    with pytest.raises(RaceError):
        launch(_OneTile(_NoBarrier(ATLAS_A2, "float32", 256)), None, 1, arch=ATLAS_A2,
               options=LaunchParams(detect_races=True))
