"""Experimental designs: which configurations to run, one module per method, one registry, one signature.

``registry.choose(name, space, n, seed, oracle)`` serves plans (a ``Space`` of factor levels, whose candidates
are their grid), ``design-size`` (a ``Space`` of candidate rows) and adaptive campaigns, and returns candidate
indices in run order, so the first k of a sequence are the design of size k. ``levels`` holds the designs over
factor levels (grid, fractions, space-filling draws), ``lhs``/``dopt``/``iopt``/``uniform``/``committee`` one
method each, ``matrix`` the model-matrix algebra they share.
"""
