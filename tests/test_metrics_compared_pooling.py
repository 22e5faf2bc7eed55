"""Pooling a variant's rows over sessions: weighted means, summed totals, empty sessions skipped."""

from __future__ import annotations

import pytest

from harness.metrics.compared.campaign import pool_rows
from harness.metrics.compared.report import MetricRow, MetricsReport


def _report(latency: float | None, n: int, filler_turns: float, dead_air: float) -> MetricsReport:
    rows = [
        MetricRow(measure="response latency", variant="EVA mean_latency_ms", value=latency, unit="ms", n=n),
        MetricRow(measure="tool-aware latency", variant="ours filler-only tool turns", value=filler_turns, unit="turns", n=1),
        MetricRow(measure="tool-aware latency", variant="ours dead air while a tool call is open (total)",
                  value=dead_air, unit="ms", n=1),
    ]
    return MetricsReport(recording="r", session=False, duration_ms=1, source_rate=16_000, speech={}, rows=rows, variants={})


def test_pool_rows_weights_means_by_n_and_sums_totals():
    pooled = pool_rows([_report(600.0, 3, 1, 200.0), _report(1000.0, 1, 0, 300.0), _report(None, 0, 2, 0.0)])
    latency, filler, dead_air = pooled
    assert latency.value == pytest.approx((600 * 3 + 1000) / 4) and latency.n == 4 and latency.note == "2/3 sessions"
    assert filler.value == 3.0 and dead_air.value == 500.0
    assert pool_rows([]) == []


def test_results_refuses_an_unknown_metrics_family(tmp_path):
    from typer.testing import CliRunner

    from harness.cli.main import app

    (tmp_path / "c" / "t" / "rep0").mkdir(parents=True)
    (tmp_path / "c" / "t" / "rep0" / "result.json").write_text("{}")
    result = CliRunner().invoke(app, ["results", str(tmp_path / "c"), "--out", str(tmp_path / "o"), "--metrics", "eva,bogus"])
    assert result.exit_code == 2 and "unknown bogus" in result.output
