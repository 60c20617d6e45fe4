"""The stability simulation's defaults, in a module of their own: the CLI declares its flags
with them without importing the simulation (and the models it reads)."""

DEFAULT_SIMULATIONS = 2000
"""Simulated reruns of a run when none are asked for."""
