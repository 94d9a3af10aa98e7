"""Campaigns: a plan run on a cluster, trial by trial into the store (collector, adaptive rounds, progress,
records, estimates, the lab settings a plan asks for, what could have disturbed a trial)."""
