"""`bitexact demo`: record a realistic agent run, export it signed, verify it."""

from bitexact.demo.scenario import DemoResult, run_demo

__all__ = ["DemoResult", "run_demo"]
