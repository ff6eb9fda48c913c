"""The bug zoo: one small store per memory-loss bug seen in the field.

Each module's docstring tells the story it reproduces, and its ``STORE`` declaration
(:class:`harness.stores.declare.Declared`) names the violation kind the checker catches it
with, the shipped scenario that does, and the fault it needs if any. Adding a zoo store is
adding a module here (and its scenario, if none of the shipped ones catches it): the
registry and the test tables are derived from the declarations.
"""
