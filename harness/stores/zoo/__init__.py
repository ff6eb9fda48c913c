"""The bug zoo: one small store per memory-loss bug seen in the field.

Each module's docstring tells the story it reproduces; each store is caught by the checker
with the violation kind named in :data:`harness.stores.registry.BUILTINS`.
"""
