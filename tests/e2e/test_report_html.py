"""report.html in a real headless Chromium (Debian's ``chromium``, driven by Playwright): a
failing run's page shows the verdict, the lanes and the violation, and clicking the
violation highlights the ops that prove it. A missing browser fails these tests."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from harness.runner.coordinator import run
from harness.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def chromium() -> str:
    path = shutil.which("chromium")
    assert path, "chromium is not installed: scripts/install-browser installs it"
    return path


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # lost turns in every seed (a pickle from another host reads back as [])
    res = run(load_scenario(SCENARIOS / "redis-pickle.toml").with_overrides(
        seed=2, ops=40), reports=tmp_path_factory.mktemp("r"))
    assert res.verdict == "fail"
    return res.run_dir


def test_a_failing_runs_page_highlights_the_ops_behind_a_violation(
        failing: Path, tmp_path: Path) -> None:
    page_file = failing / "report.html"
    html = page_file.read_text()
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")  # no network
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(page_file.as_uri())
            assert page.locator("#verdict").inner_text().startswith("FAIL: lost-turn x")
            assert page.locator(".lane").count() >= 2
            first = page.locator("#violations li").first
            assert "was acknowledged by process" in first.inner_text()
            ops: list[str] = (first.get_attribute("data-ops") or "").split()
            assert ops and all(page.locator(f"#op-{o}").count() == 1 for o in ops)
            assert page.locator(".op.hl").count() == 0
            first.click()
            highlighted: Any = page.eval_on_selector_all(".op.hl", "els => els.map(e => e.id)")
            assert sorted(highlighted) == sorted(f"op-{o}" for o in ops)
            page.screenshot(path=str(tmp_path / "report.png"))
        finally:
            browser.close()
    assert (tmp_path / "report.png").stat().st_size > 10_000
