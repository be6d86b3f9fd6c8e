"""catlass_py.ops"""
