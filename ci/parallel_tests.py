#!/usr/bin/env python3
"""Runs a build's default CTest suite (every test not labelled slow) side by side, each gtest case
of a program a process of its own, longest timeouts first:

    ci/parallel_tests.py BUILD JOBS

For GPU builds (ci/cuda test), whose tests run their host side on one core (Kokkos' Serial beside
CUDA): there the suite takes about its longest case instead of the sum of its programs (test_mpi's
cases alone run some 20 minutes in a row on a GPU). A CPU build's tests each use every core, so
ctest runs them one at a time (RUN_SERIAL, test/CMakeLists.txt); CTest itself cannot split a
program into its cases here, its gtest discovery losing list-valued properties (the labels and
environment that test/CMakeLists.txt gives). The commands, environments, working folders and
timeouts are CTest's own (`ctest --show-only=json-v1`). Each case's output goes to
BUILD/Testing/cases/NAME.log; a failure's last lines are printed. Exit status 0 when every case
passed, else 1."""
import json
import os
import re
import subprocess
import sys
import threading
import time


def cases(build):
    """(name, command, folder, environment, timeout, gtest case?) for every default test, a gtest
    program's cases one by one, longest timeouts first."""
    listing = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"], capture_output=True, text=True,
                             check=True).stdout
    out = []
    for t in json.loads(listing)["tests"]:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        if "slow" in props.get("LABELS", []):
            continue
        if "command" not in t:
            sys.exit(f"parallel_tests: {t['name']} has no command: is {build} built?")
        env = dict(os.environ)
        for kv in props.get("ENVIRONMENT", []):
            k, v = kv.split("=", 1)
            env[k] = v
        folder = props.get("WORKING_DIRECTORY", build)
        timeout = float(props.get("TIMEOUT", 1500))
        command = t["command"]
        if not os.path.basename(command[0]).startswith("test_"):  # a script, not a gtest program
            out.append((t["name"], command, folder, env, timeout, False))
            continue
        listed = subprocess.run(command + ["--gtest_list_tests"], cwd=folder, env=env, capture_output=True,
                                text=True)
        if listed.returncode != 0:
            sys.exit(f"parallel_tests: {t['name']} --gtest_list_tests failed:\n{listed.stdout}{listed.stderr}")
        suite = None
        for line in listed.stdout.splitlines():
            if not line.strip():
                continue
            if not line.startswith(" "):
                suite = line.split("#")[0].strip()
                continue
            case = suite + line.split("#")[0].strip()
            one = dict(env, GTEST_FILTER=case)  # the program's own filter already chose its cases
            out.append((t["name"] + ":" + case, command, folder, one, timeout, True))
    return sorted(out, key=lambda c: -c[4])


def main():
    build, jobs = os.path.abspath(sys.argv[1]), int(sys.argv[2])
    todo = cases(build)
    logs = os.path.join(build, "Testing", "cases")
    os.makedirs(logs, exist_ok=True)
    results, lock = {}, threading.Lock()
    start = time.time()

    def log_of(name):
        return os.path.join(logs, re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".log")

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                name, command, folder, env, timeout, one_case = todo.pop(0)
            t0 = time.time()
            with open(log_of(name), "w") as log:
                try:
                    rc = subprocess.run(command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT,
                                        timeout=timeout).returncode
                    state = "Passed" if rc == 0 else f"Failed (exit {rc})"
                    with open(log_of(name), errors="replace") as ran:
                        text = ran.read()
                    if rc == 0 and one_case and "[  PASSED  ] 1 test." not in text:
                        # A case that skips itself (GTEST_SKIP: no CHOLMOD, one GPU) passes, as
                        # under ctest, and is named; one that ran nothing fails.
                        skipped = "[  SKIPPED ] 1 test," in text
                        state = "Skipped" if skipped else "Failed (its filter ran no test)"
                except subprocess.TimeoutExpired:
                    state = f"Timeout ({timeout:.0f} s)"
            with lock:
                results[name] = state
                print(f"{len(results):4d} {name} ... {state} {time.time() - t0:.1f} s", flush=True)

    threads = [threading.Thread(target=worker) for _ in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = [n for n, s in results.items() if s not in ("Passed", "Skipped")]
    skipped = [n for n, s in results.items() if s == "Skipped"]
    for n in failed:
        with open(log_of(n), errors="replace") as f:
            print(f"===== {n}: {results[n]}\n" + "".join(f.readlines()[-40:]))
    summary = f"{len(results) - len(failed)} of {len(results)} cases passed in {time.time() - start:.0f} s"
    summary += f" ({jobs} at a time; logs in {logs})"
    if skipped:
        summary += f"; {len(skipped)} of them skipped: " + ", ".join(skipped)
    if failed:
        summary += "; failed: " + ", ".join(failed)
    print(summary)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
