"""The long adversarial run: `python -m tests.adversarial.longrun` (or `make adversarial`).

Runs the adversarial tests (tests/test_adv_*.py) at the long scale (NAVMCP_ADV_SCALE=long:
thousands of fuzz cases, a bigger crowd, many more kills), collects the figures the tests count,
prints them, and writes them to artifacts/adversarial-longrun.json for RELIABILITY.md.
`--repeat N` runs it N times (new random cases each time); `-k EXPR` selects tests as pytest does.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_once(select: str | None) -> tuple[int, dict[str, int], str]:
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False) as f:
        figures_path = f.name
    env = {**os.environ, "NAVMCP_ADV_SCALE": "long", "NAVMCP_ADV_FIGURES": figures_path}
    tests = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_adv_*.py"))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests]
    if select:
        command += ["-k", select]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    totals: Counter[str] = Counter()
    with open(figures_path, encoding="utf-8") as f:
        for line in f:
            for name, value in json.loads(line).items():
                totals[name] = max(totals[name], value) if name.startswith("max.") else totals[name] + value
    os.unlink(figures_path)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-2000:]
    if done.returncode:
        sys.stdout.write(done.stdout[-20000:] + done.stderr[-5000:])
    return done.returncode, dict(totals), summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("-k", dest="select")
    args = parser.parse_args(argv)
    started = time.time()
    totals: Counter[str] = Counter()
    summaries, worst = [], 0
    for n in range(args.repeat):
        code, figures, summary = run_once(args.select)
        worst = worst or code
        summaries.append(summary)
        for name, value in figures.items():
            totals[name] = max(totals[name], value) if name.startswith("max.") else totals[name] + value
        print(f"run {n + 1}/{args.repeat}: {summary}", flush=True)
    report = {"finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": round(time.time() - started),
              "runs": args.repeat, "pytest": summaries, "exit_code": worst, "figures": dict(sorted(totals.items()))}
    (ROOT / "artifacts").mkdir(exist_ok=True)
    (ROOT / "artifacts" / "adversarial-longrun.json").write_text(json.dumps(report, indent=2) + "\n")
    width = max((len(k) for k in totals), default=0)
    for name, value in sorted(totals.items()):
        print(f"  {name:<{width}}  {value}")
    print(f"{'PASSED' if worst == 0 else 'FAILED'} in {report['seconds']} s; report: artifacts/adversarial-longrun.json")
    if re.search(r"\bfailed\b", " ".join(summaries)):
        return worst or 1
    return worst


if __name__ == "__main__":
    sys.exit(main())
