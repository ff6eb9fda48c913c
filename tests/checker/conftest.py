"""Hypothesis for the checker's property tests: with ``$HARNESS_EXAMPLES`` set (mutation
testing, see ``tests/checker/examples.py``) the examples are drawn the same way on every
run (``derandomize``), loaded before the test modules build their settings."""

from __future__ import annotations

import os

from hypothesis import settings

if os.environ.get("HARNESS_EXAMPLES"):
    settings.register_profile("harness-mutation", derandomize=True)
    settings.load_profile("harness-mutation")
