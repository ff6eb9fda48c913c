from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.scenario import Scenario, from_dict, load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.name)
def test_shipped_scenarios_load(path: Path) -> None:
    sc = load_scenario(path)
    assert sc.workers >= 1 and sc.ops >= 1
    assert from_dict(__import__("tomllib").loads(sc.to_toml())).workers == sc.workers


@pytest.mark.parametrize(
    "raw, message",
    [
        ({"workerz": 3}, "unknown key 'workerz'"),
        ({"workers": 0}, "workers must be at least 1"),
        ({"workers": "4"}, "workers must be an integer"),
        ({"duration": -1}, "duration must be a positive"),
        ({"weights": {"delete": 1}}, "unknown weight 'delete'"),
        ({"weights": {"append": 0}}, "weights.append must be > 0"),
        ({"payload": {"size": 3}}, "unknown key payload.'size'"),
        ({"redis": {"persistence": "sometimes"}}, "redis.persistence must be one of"),
        ({"backend": "mysql"}, "backend must be"),
    ],
)
def test_bad_scenarios_name_the_key(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ScenarioError, match=message.replace("(", r"\(")):
        from_dict(raw, source="x.toml")


def test_file_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="not found"):
        load_scenario(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("workers = [", encoding="utf-8")
    with pytest.raises(ScenarioError, match="malformed TOML") as err:
        load_scenario(bad)
    assert "\n" not in str(err.value)


def test_overrides_are_validated() -> None:
    sc = Scenario()
    assert sc.with_overrides(workers=7, seed=None).workers == 7
    with pytest.raises(ScenarioError):
        sc.with_overrides(workers=0)
