"""The benchmark keeps working: a tiny run (100 items, one round, a few requests) of `python -m bench`.

It spawns the real servers (bin/mcp-server and the SDK peer) like the full run does. Figures are
printed but not asserted: CI machines are too noisy for that. What is asserted: the run completes,
both servers serve the same pages, and every figure was measured for both (the /mcp figure for
navmcp only where `navmcp web` exists).
"""

from __future__ import annotations

import json
import subprocess
import sys

from bench.run import FIGURES
from tests.conftest import ROOT


def test_bench_runs_at_a_tiny_size(tmp_path):
    out = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--sizes", "100", "--quick", "--workdir", str(tmp_path / "work"),
         "--json", str(out)],
        capture_output=True, cwd=ROOT, timeout=180)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    printed = done.stdout.decode()
    assert "| cold_start_ms (ms) |" in printed and "| navigate_p50_ms (ms) |" in printed
    results = json.loads(out.read_text())
    size = results["sizes"]["100"]
    assert size["same_pages"] is True
    (round_,) = size["rounds"]
    http = results["http"] == "measured"
    for name in ("navmcp", "sdk"):
        for figure in FIGURES:
            if figure.startswith("http") and name == "navmcp" and not http:
                assert figure not in round_[name]
                continue
            assert round_[name][figure] > 0, (name, figure)
    assert size["summary"]["cold_start_ms"]["ratio"] > 0
