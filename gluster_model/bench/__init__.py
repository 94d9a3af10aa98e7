"""Benchmark engines: one module per engine: build argv (pure), run (executor), parse (pure)."""
