"""Helpers of the chaos tests (a module of its own: ``conftest`` is not importable by name
when several test folders have one)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import psutil

from harness.scenario import load_scenario
from harness.stores import BUILTINS, StoreInfo

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
CHAOS = {"sqlite": SCENARIOS / "chaos-sqlite.toml", "redis": SCENARIOS / "chaos-redis.toml",
         "postgres": SCENARIOS / "chaos-postgres.toml"}


def faults_of(backend: str, kinds: Iterable[str],
              tweak: dict[str, dict[str, Any]] | None = None) -> tuple[dict[str, Any], ...]:
    """The chaos scenario's ``[[faults]]`` tables of these kinds, with ``tweak[kind]`` keys
    replaced (a test makes a fault more frequent so its bug is caught in a short run)."""
    kinds = set(kinds)
    tweak = tweak or {}
    return tuple({**f, **tweak.get(f["kind"], {})}
                 for f in load_scenario(CHAOS[backend]).faults if f["kind"] in kinds)


def alive(pid: int, created: float) -> bool:
    """Whether the process ``pid`` started at ``created`` still runs (zombies do not)."""
    try:
        p = psutil.Process(pid)
        return bool(p.create_time() == created and p.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def fault_exposed(backend: str) -> list[str]:
    """The zoo stores of ``backend`` whose declared bug only a fault exposes, by name."""
    return sorted(name for name, info in BUILTINS.items()
                  if info.backend == backend and info.expected and info.fault)


def caught_as(info: StoreInfo) -> set[str]:
    """The violation kinds that may name a zoo store's bug, as it declares them."""
    return {k for k in (info.expected, *info.also_caught_as) if k}
