"""Experimental designs: which configurations to run, one module per method behind one signature.

Every strategy takes the candidates' input matrix ``x`` (one row per candidate configuration), a size and a
seeded ``numpy.random.Generator``, and returns candidate indices in the order it would run them, so the first k
of a sequence are the design of size k. ``registry`` names them for plans, ``design-size`` and adaptive
campaigns (and the CLI's choices); ``matrix`` holds the model-matrix algebra they share. Plans over factor levels
(``plan.design``) draw their Latin hypercube from ``lhs`` and their D-optimal fractions from ``dopt``.
"""
