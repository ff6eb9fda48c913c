"""Property: no input makes the ``harness`` command print a traceback or lie with its code.

Hypothesis writes scenario files (keys of the real schema with values of every type: huge,
negative, NaN and infinite numbers, odd strings, tables where numbers go) and command
lines (the real options with odd values), and histories for ``harness check``. For each:
the exit code is 0, 1, 2 or 130; stderr holds no traceback and no "internal error" (the
CLI's last resort, which would hide a bug as exit 2); an exit 2 says why in one line.

Inputs that pass validation would start real runs, so they are made tiny (one worker, a
few ops, seconds) before running. Most examples run in-process (click's test runner over
the real entry point); a few go through a subprocess, as a user's shell would run them.
Settings keep the whole file near a minute on two cores: derandomized, no deadline.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import cli
from harness.errors import HarnessError

REPO = Path(__file__).resolve().parents[2]
CODES = {0, 1, 2, 3, 130}
FUZZ = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))

# -- values of every type ------------------------------------------------------------------

ODD_TEXT = st.sampled_from(["", " ", "..", ".", "/", "a/b", "a\0b", "x" * 300, "glob[x", "*",
                            "\n", "é😀", "\\", '"', "sqlite", "redis", "fork", "spawn",
                            "always", "redis://127.0.0.1:1/0", "not-a-url", "http://h/0",
                            "redis://h:99999/0", ".relative:X", "no_such_pkg.mod:make",
                            "zoo.redis-rmw-append", "os:getcwd", "builtins:print"])
NUMBERS = st.one_of(
    st.integers(min_value=-3, max_value=12),
    st.sampled_from([0, -1, 2**63 - 1, -(2**63), 10**9, 10**12, 10_000_000_000, 1024, 1025]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.inf, -math.inf, math.nan, 1e12, 0.0, 1e-9, 0.5]),
)
SCALARS = st.one_of(NUMBERS, ODD_TEXT, st.booleans(), st.text(max_size=12))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "kind", "at"]), inner,
                                                 max_size=2)), max_leaves=4)

TOP = ["name", "description", "store", "backend", "seed", "workers", "ops", "sessions",
       "session_lifetime", "duration", "start_method", "bogus"]
TABLES = {
    "weights": ["append", "read", "snapshot", "rollback", "list_snapshots", "delete"],
    "payload": ["max_bytes", "long_rate", "size"],
    "redis": ["url", "persistence"],
    "control": ["enabled", "strategy", "schedules", "streams", "trace", "block_ms"],
}
FAULT_KEYS = ["kind", "at", "every", "start", "stop", "count", "worker", "duration", "stall"]
FAULT_KINDS = st.sampled_from(["kill", "pause", "disconnect", "restart", "disk-full",
                               "lock-hold", "meteor"])


def toml_value(v: Any) -> str:
    """A TOML literal for any value the strategies make (NaN and infinities included)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) \
            else repr(v)
    if isinstance(v, str):
        return '"' + "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}"
                             for c in v) + '"'
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + "}"


@st.composite
def scenarios(draw: st.DrawFn) -> str:
    """A scenario file: a tiny valid base with some keys replaced by odd values, sometimes
    a table where a value goes, sometimes bytes that are not TOML at all."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.text(max_size=40))
    top: dict[str, Any] = {"name": "fuzz", "workers": 1, "ops": 3, "duration": 5}
    for key in draw(st.lists(st.sampled_from(TOP), max_size=3)):
        top[key] = draw(VALUES)
    lines = [f"{k} = {toml_value(v)}" for k, v in top.items()]
    for table in draw(st.lists(st.sampled_from(sorted(TABLES)), max_size=2, unique=True)):
        lines.append(f"[{table}]")
        keys = draw(st.lists(st.sampled_from(TABLES[table]), max_size=3, unique=True))
        lines += [f"{k} = {toml_value(draw(VALUES))}" for k in keys]
    for _ in range(draw(st.integers(0, 2))):
        lines.append("[[faults]]")
        lines.append(f"kind = {toml_value(draw(FAULT_KINDS))}")
        keys = draw(st.lists(st.sampled_from(FAULT_KEYS[1:]), max_size=3, unique=True))
        lines += [f"{k} = {toml_value(draw(st.one_of(NUMBERS, VALUES)))}" for k in keys]
    return "\n".join(lines) + "\n"


ARG_VALUES = st.one_of(st.sampled_from(["0", "-1", "1", "2", "1000000000", "1e12", "inf",
                                        "nan", "-inf", str(2**64), "x", ""]), ODD_TEXT)
OPTIONS = ["--seed", "--workers", "--ops", "--sessions", "--duration", "--store",
           "--redis-url", "--strategy"]


@st.composite
def run_args(draw: st.DrawFn) -> list[str]:
    args: list[str] = []
    for opt in draw(st.lists(st.sampled_from(OPTIONS), max_size=3)):
        args += [opt, draw(ARG_VALUES)]
    if draw(st.booleans()):
        args.append(draw(st.sampled_from(["--controlled", "--schedules", "--nope", "-q"])))
        if args[-1] == "--schedules":
            args.append(draw(st.sampled_from(["1", "0", "x"])))
    return args


# -- running it ----------------------------------------------------------------------------

def starts_a_run(path: Path) -> bool:
    """Could this file start workers? Only if it is a valid scenario on its own: the CLI
    loads and validates it before it applies any option."""
    from harness.scenario import from_dict

    try:
        from_dict(tomllib.loads(path.read_text(encoding="utf-8")), source=str(path))
    except (HarnessError, tomllib.TOMLDecodeError, UnicodeDecodeError, ValueError):
        return False
    return True


def tiny(args: list[str]) -> list[str]:
    """The command line, made to finish in seconds whatever it asked (later options win)."""
    return [*args, "--workers", "1", "--ops", "3", "--sessions", "1", "--duration", "5",
            "-q"]


def assert_contract(code: int, stderr: str, what: object) -> None:
    assert code in CODES, (code, stderr, what)
    assert "Traceback" not in stderr, (stderr, what)
    assert "internal error" not in stderr, (stderr, what)
    if code == 2:
        lines = [ln for ln in stderr.splitlines()
                 if ln.strip() and not ln.startswith("target: ")]
        assert len(lines) <= 1, (stderr, what)


def invoke(args: list[str]) -> tuple[int, str]:
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    return res.exit_code, res.stderr


@FUZZ
@given(text=scenarios(), args=run_args())
def test_fuzzed_run_inputs_keep_the_exit_code_contract(tmp_path_factory: Any, text: str,
                                                       args: list[str]) -> None:
    tmp = tmp_path_factory.mktemp("fz")
    path = tmp / "s.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    argv = ["run", str(path), "--reports", str(tmp / "r"), *args]
    if starts_a_run(path):
        argv = tiny(argv)
    code, err = invoke(argv)
    assert_contract(code, err, (text, argv))


EVENT_KEYS = ["index", "time", "process", "pid", "type", "f", "session", "value", "error"]
EVENT_VALUES = st.one_of(VALUES, st.sampled_from(["invoke", "ok", "fail", "info", "append",
                                                  "read", "snapshot", "rollback", "nemesis",
                                                  "final", "kill", "s0", "s1"]),
                         st.just(["user", "w0.1|"]), st.just([["user", "w0.1|"]]))


@st.composite
def histories(draw: st.DrawFn) -> bytes:
    """JSON lines: events of a real shape with some fields odd or missing, other JSON, junk."""
    import orjson

    lines = []
    for i in range(draw(st.integers(0, 6))):
        e: dict[str, Any] = {"index": i, "time": i, "process": 0, "pid": 1, "type": "invoke",
                             "f": "append", "session": "s0", "value": ["user", f"w0.{i}|"]}
        for key in draw(st.lists(st.sampled_from(EVENT_KEYS), max_size=2)):
            if draw(st.booleans()):
                e[key] = draw(EVENT_VALUES)
            else:
                e.pop(key, None)
        choice = draw(st.integers(0, 9))
        raw = orjson.dumps(draw(VALUES)) if choice == 0 else draw(st.binary(max_size=8)) \
            if choice == 1 else orjson.dumps(e, option=orjson.OPT_SERIALIZE_NUMPY)
        lines.append(raw)
    return b"\n".join(lines) + draw(st.sampled_from([b"", b"\n", b"\n\n"]))


@FUZZ
@given(data=histories())
def test_fuzzed_histories_are_checked_or_refused(tmp_path_factory: Any, data: bytes) -> None:
    path = tmp_path_factory.mktemp("fh") / "h.jsonl"
    path.write_bytes(data)
    code, err = invoke(["check", str(path)])
    assert_contract(code, err, data)


SUBPROCESS_CASES = [
    (["run", "{s}", "--workers", "1000000000"], 'name = "a\\u0000b"\n'),
    (["run", "{s}", "--duration", "inf"], "[redis]\nurl = 5\n"),
    (["run", "{s}", "--seed", str(2**64)], "workers = 1\n"),
    (["run", "{s}", "--redis-url", "redis://h:99999/0", "--store", "redis"], "ops = 1\n"),
    (["run", "{s}", "--store", ".relative:X"], "ops = 1\n"),
    (["run", "{s}", "--seed", "1"], "workers = 1\nops = 4\nduration = 5\n"),  # a tiny pass
    (["check", "{s}"], "[1, 2]\n"),
    (["bogus"], ""),
    ([], ""),
]


def test_a_few_inputs_through_a_real_process(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    codes = []
    for n, (args, text) in enumerate(SUBPROCESS_CASES):
        path = tmp_path / f"s{n}.toml"
        path.write_text(text, encoding="utf-8")
        argv = [a.format(s=path) for a in args]
        if argv[:1] == ["run"]:
            argv += ["--reports", str(tmp_path / "r"), "-q"]
        r = subprocess.run([sys.executable, "-m", "harness", *argv], cwd=tmp_path, text=True,
                           capture_output=True, timeout=120, env=env)
        assert_contract(r.returncode, r.stderr, argv)
        codes.append(r.returncode)
    assert codes == [2, 2, 2, 2, 2, 0, 2, 2, 2]
