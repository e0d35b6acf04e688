#!/usr/bin/env python3
"""The application benchmark: every example of config/ run end to end, as a user runs it.

  examples.py --app BUILD/app/fegpu-kk --out FILE.json [--max-steps N] [--only NAME] config/*.yaml

Each example runs twice: plainly, timed from process start to exit (output included), and with
--profile for the share of each phase (the fences of a profiled run slow it, so only its shares
are kept). The rows (ms of wall time per step, the phase shares) go to FILE.json in the form of
Google Benchmark's output, program "examples", for report.py.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def run(app, config, extra, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.perf_counter()
    p = subprocess.run([app, config, "--output-dir", out_dir] + extra, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    shutil.rmtree(out_dir, ignore_errors=True)
    if p.returncode != 0:
        raise RuntimeError(f"{config}: exit {p.returncode}: {p.stderr.strip()}")
    return seconds, p.stdout


def parse(stdout):
    steps = re.search(r"^done: (\d+) (load )?steps", stdout, re.M)
    elements = re.search(r"^mesh: \d+ nodes, (\d+) ", stdout, re.M)
    phases = {}
    table = stdout.split("time per phase:", 1)[1] if "time per phase:" in stdout else ""
    for m in re.finditer(r"^\s+(\S+)\s+([\d.]+) s\s+([\d.]+) %", table, re.M):
        phases[m.group(1)] = float(m.group(3))
    return (int(steps.group(1)) if steps else 0), (int(elements.group(1)) if elements else 0), phases


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--app", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--max-steps", type=int, default=0)
    p.add_argument("--only", default="")
    p.add_argument("configs", nargs="+")
    a = p.parse_args()
    extra = ["--max-steps", str(a.max_steps)] if a.max_steps > 0 else []
    rows = []
    scratch = tempfile.mkdtemp(prefix="fegpu-examples.")
    for config in sorted(a.configs):
        name = os.path.splitext(os.path.basename(config))[0]
        if a.only and name != a.only:
            continue
        print(f"examples.py: {name}", file=sys.stderr)
        seconds, out = run(a.app, config, extra, os.path.join(scratch, name))
        steps, elements, phases = parse(out)
        _, profiled = run(a.app, config, extra + ["--profile"], os.path.join(scratch, name))
        _, _, shares = parse(profiled)
        rows.append({"name": f"App/{name}", "run_type": "iteration", "real_time": 1e3 * seconds / max(steps, 1),
                     "time_unit": "ms", "seconds": seconds, "steps": steps, "elements": elements,
                     "phases": shares, "max_steps": a.max_steps})
    shutil.rmtree(scratch, ignore_errors=True)
    with open(a.out, "w") as fh:
        json.dump({"context": {}, "benchmarks": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
