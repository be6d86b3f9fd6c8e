"""Runnable CATLASS examples (installed as ``catlass_py.examples``); ``catlass-py list`` shows them."""
