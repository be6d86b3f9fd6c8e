"""catlass_py.tile"""
