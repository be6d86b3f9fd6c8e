"""pytest fixtures of catlass_py, registered through the ``pytest11`` entry point ``catlass_py`` (pyproject.toml):
installing catlass_py makes them available in every test session.

* ``catlass_check`` - :func:`catlass_py.testing.check`;
* ``catlass_compare`` - :func:`catlass_py.testing.assert_compare`;
* ``catlass_arch`` - the :class:`~catlass_py.arch.ArchSpec` to assemble for (Atlas A2; override the fixture to
  test another);
* ``catlass_core`` - ``catlass_core("AIV")`` (or ``"AIC"``): a standalone core of ``catlass_arch`` for trying
  tile operations one at a time.
"""

from __future__ import annotations

import pytest

from catlass_py.arch.context import standalone_core
from catlass_py.arch.spec import ATLAS_A2
from catlass_py.testing import assert_compare, check


@pytest.fixture
def catlass_check():
    """:func:`catlass_py.testing.check`."""
    return check


@pytest.fixture
def catlass_compare():
    """:func:`catlass_py.testing.assert_compare`."""
    return assert_compare


@pytest.fixture
def catlass_arch():
    """The arch tests assemble for."""
    return ATLAS_A2


@pytest.fixture
def catlass_core(catlass_arch):
    """A factory of standalone cores: ``catlass_core("AIV")``."""
    return lambda core_type="AIV": standalone_core(catlass_arch, core_type)
