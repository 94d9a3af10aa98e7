"""Experiment plans: factors and levels, designs, and their expansion into ordered runs."""
