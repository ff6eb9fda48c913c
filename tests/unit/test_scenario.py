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


@pytest.mark.parametrize(
    "raw, message",
    [
        ({"workers": 1_000_000_000}, "workers must be at most 1024"),
        ({"sessions": 1_000_000_000}, "sessions must be at most 10000"),
        ({"ops": 1_000_000_000_000}, "ops must be at most 100000000 per worker"),
        ({"ops": "many"}, 'ops must be an integer or "unlimited"'),
        ({"ops": "unlimited", "control": {"enabled": True}}, "controlled mode needs a number of ops"),
        ({"ops": 10_000_000, "session_lifetime": 1}, "sessions x generations"),
        ({"payload": {"max_bytes": 10_000_000_000}}, "payload.max_bytes must be at most"),
        ({"payload": {"max_bytes": True}}, "payload.max_bytes must be a non-negative integer"),
        ({"payload": {"long_rate": float("nan")}}, "payload.long_rate must be between"),
        ({"duration": 1e12}, "duration must be at most 604800 seconds"),
        ({"duration": float("inf")}, "duration must be a positive number"),
        ({"duration": float("nan")}, "duration must be a positive number"),
        ({"seed": 2**64}, "seed must be an integer from 0 to 2\\*\\*64 - 1"),
        ({"seed": -1}, "seed must be an integer"),
        ({"name": "a\0b"}, "name must not contain '/' or a NUL"),
        ({"name": "a/b"}, "name must not contain '/' or a NUL"),
        ({"name": ".."}, "name must be a usable directory name"),
        ({"name": ""}, "name must be a usable directory name"),
        ({"name": "x" * 101}, "name must be at most 100 bytes"),
        ({"name": 5}, "name must be a string"),
        ({"description": ["x"]}, "description must be a string"),
        ({"store": 5}, "store must be a string"),
        ({"backend": 5}, "backend must be a string"),
        ({"start_method": {"a": 1}}, "start_method must be a string"),
        ({"redis": {"url": 5}}, "redis.url must be a string"),
        ({"redis": {"persistence": 1}}, "redis.persistence must be a string"),
        ({"redis": {"url": "not-a-url"}}, "redis.url: not a Redis URL"),
        ({"redis": {"url": "redis://127.0.0.1:99999/0"}}, "redis.url: not a Redis URL"),
        ({"redis": {"url": "http://127.0.0.1/0"}}, "redis.url: not a Redis URL"),
        ({"weights": {"append": True}}, "weights must be non-negative integers"),
    ],
)
def test_absurd_or_mistyped_values_are_refused_with_one_line(raw: dict[str, object],
                                                             message: str) -> None:
    with pytest.raises(ScenarioError, match=message) as err:
        from_dict(raw, source="x.toml")
    assert "\n" not in str(err.value)


def test_the_bounds_themselves_are_accepted() -> None:
    sc = from_dict({"workers": 64, "sessions": 10_000, "seed": 2**64 - 1, "duration": 604800,
                    "payload": {"max_bytes": 64 * 2**20}, "name": "x" * 100,
                    "redis": {"url": "redis://:pw@127.0.0.1:6379/0"}})
    assert sc.seed == 2**64 - 1 and sc.workers == 64


def test_more_workers_than_the_process_limit_allows_are_refused() -> None:
    import resource

    from harness.limits import workers_problem

    soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    resource.setrlimit(resource.RLIMIT_NPROC, (200, hard))
    try:
        assert "RLIMIT_NPROC" in (workers_problem(1000) or "")
    finally:
        resource.setrlimit(resource.RLIMIT_NPROC, (soft, hard))
    assert workers_problem(8) is None


def test_unlimited_ops_are_spelled_out_and_survive_the_run_directory() -> None:
    import tomllib

    sc = from_dict({"ops": "unlimited", "duration": 5})
    assert sc.ops is None
    assert 'ops = "unlimited"' in sc.to_toml()
    assert from_dict(tomllib.loads(sc.to_toml())).ops is None
    assert Scenario().with_overrides(ops="unlimited").ops is None
    assert from_dict({"ops": 0}).ops == 0  # 0 still means none
    huge = from_dict({"workers": 64, "ops": 100_000_000, "session_lifetime": 0})
    assert huge.ops == 100_000_000  # no memory bound: the plan is drawn lazily
