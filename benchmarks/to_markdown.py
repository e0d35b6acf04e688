#!/usr/bin/env python3
"""Turns Google Benchmark JSON files into a Markdown section of benchmarks/RESULTS.md."""
import argparse
import datetime
import json
import re
import sys

HEADER = """# Benchmark results

Written by `benchmarks/run`; one section per machine. Rates count elements (one explicit step of
every element is one element-step). `GB/s` is the bandwidth of the bytes a minimal implementation
moves per step (each array entry read or written once; `bench_step.cpp` says which): measured time
against that count shows how far a kernel is from the memory limit (~3.0 TB/s copy bandwidth on an
H100, ~4.3 TB/s on an H200).
"""


def rows(files):
    out, ctx = [], {}
    for f in files:
        try:
            with open(f) as fh:
                data = json.load(fh)
        except (OSError, json.JSONDecodeError) as e:
            print(f"to_markdown: skipping {f}: {e}", file=sys.stderr)
            continue
        for b in data["benchmarks"]:
            if b.get("run_type") == "aggregate":
                continue
            name = b["name"].replace("/real_time", "")
            ms = b["real_time"] if b.get("time_unit") == "ms" else b["real_time"] * {"us": 1e-3, "ns": 1e-6, "s": 1e3}[b["time_unit"]]
            ips = b.get("items_per_second", 0.0)
            gbs = b.get("bytes_per_second", 0.0) / 1e9
            out.append((name, int(b.get("elements", 0)), ms, ips, gbs, b.get("colors"), b.get("balance")))
        ctx = data.get("context", ctx)
    return out, ctx


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--label", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    data, ctx = rows(a.files)
    lines = [f"## {a.label}", "",
             f"{datetime.date.today().isoformat()}; host {ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} CPUs.", "",
             "| benchmark | elements | ms per iteration | elements/s | ns per element | GB/s (minimal bytes) | colours | largest/smallest colour |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, n, ms, ips, gbs, colors, balance in data:
        ns = 1e9 / ips if ips else 0.0
        lines.append(f"| {name} | {n:,} | {ms:.3f} | {ips:.3e} | {ns:.2f} | {gbs:.1f} | "
                     f"{'' if colors is None else int(colors)} | {'' if balance is None else f'{balance:.1f}'} |")
    section = "\n".join(lines) + "\n"
    try:
        with open(a.results) as fh:
            text = fh.read()
    except FileNotFoundError:
        text = HEADER
    pattern = re.compile(r"^## " + re.escape(a.label) + r"\n.*?(?=^## |\Z)", re.S | re.M)
    text = pattern.sub(lambda m: section + "\n", text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + section
    with open(a.results, "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
