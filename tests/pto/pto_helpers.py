"""Shared helpers of the PTO tests: standalone cores of either sub-block."""

from catlass_py.arch import ASCEND_950, CoreContext, CoreId, CoreType, ObserverBus


def aiv(arch=ASCEND_950, sub=0, observers=()):
    """A standalone vector core of sub-block ``sub`` (``standalone_core`` always makes sub-block 0)."""
    return CoreContext(arch, CoreId(CoreType.AIV, 0, sub, arch.aiv_per_aic), 1, ObserverBus(observers))


def aic(arch=ASCEND_950, observers=()):
    """A standalone cube core."""
    return CoreContext(arch, CoreId(CoreType.AIC, 0, 0, arch.aiv_per_aic), 1, ObserverBus(observers))
