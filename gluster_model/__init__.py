"""glmodel: GlusterFS performance modelling.

Data flows one way: cluster file -> remote configuration and benchmarks -> store -> model -> predictions.
"""

__version__ = "0.1.0"
