#!/usr/bin/env python3
"""benchmarks/RESULTS.md from the kept results of every machine (benchmarks/run calls this).

  report.py collect --machine NAME --commit REV --version FILE --build DIR --out FILE bench_*.json
      one machine's Google Benchmark outputs, with its device, build and commit, into one file
      (rows of programs not run this time are kept from the file's last version);
  report.py write --out RESULTS.md results/*.json
      the whole RESULTS.md: one table per module, a column per machine, and the floor lines.
"""
import argparse
import datetime
import json
import os
import re
import sys

# Module sections: title, the benchmark name prefixes they hold, and what the seeds published.
SECTIONS = [
    ("Memory bandwidth, and the plan's node numbering (`bench_stream`)", ["Triad", "GroupOrder"], None),
    ("Examples end to end (`examples.py`), beside their kernels (`bench_examples`)", ["App/"], None),
    ("Elastodynamics: one explicit step (`bench_step`)", ["Step/"], None),
    ("Mesh: topology and colouring (`bench_mesh`)", ["TopologyBuild", "ElementColoring"], None),
    ("Cohesive insertion, the seed's Table A.2 (`bench_insertion`)", ["Insertion"],
     "seed 001's GPU: 36.3 ms (240,000 elements) and 176.1 ms (3,840,000); its CPU core 9.29 s and 150 s"),
    ("Fracture step, ten steps an iteration (`bench_fracture`)", ["FractureStep/", "FragmentedParts/", "fracture_box/"],
     "the seeds give no per-step figure for this module"),
    ("MITC4 shells, ten steps an iteration (`bench_shell`)", ["PinchedCylinder", "CircularPlate", "LaunchFloor"],
     "seed 003's K20: 5.49 steps/s on the 3.28M-element cylinder (its Table 5)"),
    ("Elastoplastic wellbore (`bench_wellbore`)", ["Residual", "Jacobian", "LinearSolve", "NonlinearSolve"],
     "seed 002 (the thesis), Table 7.4: 2.5 s for one solution update at l = 4, p = 2"),
    ("Many ranks (`ranks.py`): the time loop a step, RANKSxTHREADS, the exchange overlapped with the"
     " interior's forces or after them", ["Ranks/"], None),
    ("Output: one file of the 3.84M-element fracture annulus, its mesh and a frame (`bench_output`;"
     " -1 classic netCDF, else netCDF-4 at that compression)", ["Output/"], None),
]

UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def slurp(path):
    with open(path) as fh:
        return fh.read()


def compiler(build_dir):
    """The C++ compiler's id and version, as CMake found them (nvcc_wrapper: its host compiler's;
    sources compiled as CMake's CUDA language: nvcc's, and its host compiler's)."""
    cache_path = os.path.join(build_dir, "CMakeCache.txt")
    wrapper = os.path.exists(cache_path) and "nvcc_wrapper" in slurp(cache_path)
    root = os.path.join(build_dir, "CMakeFiles")
    host, cuda = "?", ""
    for d in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        path = os.path.join(root, d, "CMakeCXXCompiler.cmake")
        if os.path.exists(path):
            text = slurp(path)
            cid = re.search(r'set\(CMAKE_CXX_COMPILER_ID "([^"]*)"\)', text)
            ver = re.search(r'set\(CMAKE_CXX_COMPILER_VERSION "([^"]*)"\)', text)
            host = f"{cid.group(1) if cid else '?'} {ver.group(1) if ver else ''}".strip()
        path = os.path.join(root, d, "CMakeCUDACompiler.cmake")
        if os.path.exists(path):
            ver = re.search(r'set\(CMAKE_CUDA_COMPILER_VERSION "([^"]*)"\)', slurp(path))
            cuda = f"nvcc {ver.group(1) if ver else '?'} (CUDA language)"
    if wrapper:
        return f"nvcc_wrapper (host {host})"
    return f"{cuda}, host {host}" if cuda else host


def build_info(version_text, build_dir):
    cache_path = os.path.join(build_dir, "CMakeCache.txt")
    cache_text = slurp(cache_path) if os.path.exists(cache_path) else ""

    def line(prefix):
        for l in version_text.splitlines():
            if l.startswith(prefix):
                return l[len(prefix):].strip()
        return "?"

    def cache(key):
        m = re.search(r"^" + re.escape(key) + r":[A-Z]*=(.*)$", cache_text, re.M)
        return m.group(1).strip() if m else ""

    flags = " ".join(f for f in (cache("CMAKE_CXX_FLAGS"), cache("CMAKE_CXX_FLAGS_RELEASE")) if f)
    return {
        "kokkos": line("Kokkos"),
        "backends": line("backends:"),
        "device": line("device:"),
        "kokkoskernels": line("KokkosKernels:"),
        "mpi": line("MPI:") if "MPI:" in version_text else "no",
        "compiler": compiler(build_dir),
        "flags": flags,
        "native": "yes" if re.search(r"-march=native|KOKKOS_ARCH_NATIVE", flags + cache("FEGPU_NATIVE")) or
                  cache("FEGPU_NATIVE") in ("ON", "1", "TRUE") else "no",
    }


def collect(a):
    rows = {}
    host = {"host_name": "?", "num_cpus": "?"}
    if os.path.exists(a.out):
        old = json.loads(slurp(a.out))
        rows = {r["name"]: r for r in old.get("benchmarks", [])}
        host = {"host_name": old.get("host", "?"), "num_cpus": old.get("cpus", "?")}
    for f in a.files:
        try:
            data = json.loads(slurp(f))
        except (OSError, json.JSONDecodeError) as e:
            print(f"report.py: skipping {f}: {e}", file=sys.stderr)
            continue
        program = os.path.basename(f).rsplit(".", 1)[0]
        if a.replace == "program":  # this run replaces the program's rows (else only those it has)
            rows = {k: v for k, v in rows.items() if v.get("program") != program}
        context = data.get("context", {})  # examples.py's files have none: the machine's stays
        host = {k: context.get(k, host[k]) for k in host}
        for b in data["benchmarks"]:
            if b.get("run_type") == "aggregate" or b.get("error_occurred"):
                continue
            b["program"] = program
            b["commit"] = a.commit
            b["date"] = datetime.date.today().isoformat()
            b["name"] = b["name"].replace("/real_time", "").replace("/manual_time", "").replace("/iterations:1", "").replace("/iterations:5", "")
            rows[b["name"]] = b
    out = {
        "machine": a.machine,
        "commit": a.commit,
        "date": datetime.date.today().isoformat(),
        "host": host["host_name"],
        "cpus": host["num_cpus"],
        "build": build_info(slurp(a.version), a.build),
        "benchmarks": sorted(rows.values(), key=lambda r: r["name"]),
    }
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as fh:
        json.dump(out, fh, indent=1)


def ms(b):
    return b["real_time"] * UNIT_MS[b.get("time_unit", "ns")]


def fmt_time(t_ms):
    if t_ms >= 1000:
        return f"{t_ms / 1000:.3g} s"
    if t_ms >= 1:
        return f"{t_ms:.3g} ms"
    return f"{t_ms * 1000:.3g} us"


def bytes_per_s(b):
    if "bytes_per_second" in b:
        return b["bytes_per_second"]
    return b.get("GB/s", 0.0)  # bench_wellbore's counter holds bytes per second


def triad(machine):
    for b in machine["benchmarks"]:
        if b["name"].startswith("Triad"):
            return bytes_per_s(b)
    return 0.0


def cell(b, stream):
    """Time, then the rate that says most: share of the triad bandwidth, or elements per second."""
    text = fmt_time(ms(b))
    bw = bytes_per_s(b)
    if bw > 0:
        text += f", {bw / 1e9:.0f} GB/s" + (f" ({100 * bw / stream:.0f}%)" if stream > 0 and
                                           not b["name"].startswith("Triad") else "")
    elif "element_steps_per_s" in b:
        text += f", {b['element_steps_per_s']:.2e} el-steps/s"
    elif b.get("items_per_second"):
        text += f", {b['items_per_second']:.2e} el/s"
    if "MB" in b:
        text += f", {b['MB']:.0f} MB"
    for key in ("cg_iterations", "colors"):
        if key in b:
            text += f", {int(b[key])} {'CG it.' if key == 'cg_iterations' else 'colours'}"
    return text


def floor_lines(title, machines):
    """A few lines per module: the largest case of each machine against its bandwidth floor."""
    out = []
    for m in machines:
        stream = triad(m)
        rows = {b["name"]: b for b in m["benchmarks"]}
        label = m["machine"]
        if title.startswith("Elastodynamics"):
            cands = [b for n, b in rows.items() if n.startswith("Step/t6_atomic/")]
            if cands and stream > 0:
                b = max(cands, key=lambda r: r.get("elements", 0))
                need = bytes_per_s(b) * ms(b) / 1e3
                out.append(f"- {label}: T6, atomics, {int(b['elements']):,} elements: {fmt_time(ms(b))} a step; "
                           f"its minimal traffic ({need / 1e9:.2f} GB) at the triad's {stream / 1e9:.0f} GB/s takes "
                           f"{fmt_time(1e3 * need / stream)}: {100 * need / stream / (ms(b) / 1e3):.0f}% of the floor.")
        elif title.startswith("Elastoplastic"):
            cands = [b for n, b in rows.items() if n.startswith("Residual/fused/")]
            for b in cands:
                if stream > 0 and bytes_per_s(b) > 0:
                    out.append(f"- {label}: fused residual {b['name'].split('/', 2)[2]}: {fmt_time(ms(b))}, "
                               f"{100 * bytes_per_s(b) / stream:.0f}% of the triad bandwidth.")
        elif title.startswith("MITC4"):
            cands = [b for n, b in rows.items() if n.startswith("PinchedCylinder/standard_atomic/")]
            if cands and stream > 0:
                b = max(cands, key=lambda r: r.get("elements", 0))
                step = ms(b) / 10
                once = b["bytes_per_element"] * b["elements"] / stream * 1e3
                out.append(f"- {label}: cylinder, {int(b['elements']):,} elements, standard scheme with atomics: "
                           f"{fmt_time(step)} a step, {b['steps_per_s']:.0f} steps/s; reading its "
                           f"{b['bytes_per_element']:.0f} bytes an element once would take {fmt_time(once)}.")
        elif title.startswith("Cohesive insertion"):
            cands = [b for n, b in rows.items() if n.startswith("Insertion/global_atomic/")]
            if cands:
                b = max(cands, key=lambda r: r.get("elements", 0))
                out.append(f"- {label}: {int(b['elements']):,} elements, global atomic counter, arrays grown: "
                           f"{fmt_time(ms(b))}.")
        elif title.startswith("Output"):
            classic = rows.get("Output/-1")
            for level in ("1", "4", "9"):
                b = rows.get(f"Output/{level}")
                if classic and b:
                    out.append(f"- {label}: compression {level} saves {100 * (1 - b['MB'] / classic['MB']):.0f}% of "
                               f"the classic file ({classic['MB']:.0f} MB) at {ms(b) / ms(classic):.1f} times its "
                               f"write time ({int(b['nodes']):,} nodes, {int(b['cohesive']):,} cohesive elements).")
        elif title.startswith("Fracture"):
            for case, what in (("intact", "intact mesh"), ("fragmented_check", "fully fragmented mesh")):
                cands = [b for n, b in rows.items() if n.startswith(f"FractureStep/{case}/") and n.endswith("/1/0")]
                if cands:
                    b = max(cands, key=lambda r: r.get("elements", 0))
                    out.append(f"- {label}: {what}, stress check every step, {int(b['elements']):,} elements, "
                               f"atomics: {fmt_time(ms(b) / 10)} a step, {b.get('items_per_second', 0):.2e} "
                               f"element-steps/s.")
            # Issue 36's 3D targets: intact within 2x of elastic, fragmented within 2.5x of intact.
            for solid in ("tet4", "tet10"):
                case = {c: [b for n, b in rows.items() if n.startswith(f"fracture_box/{solid}_{c}/")]
                        for c in ("elastic", "intact", "intact_unscreened", "fragmented")}
                if all(case.values()):
                    b = {c: max(v, key=lambda r: r.get("elements", 0)) for c, v in case.items()}
                    out.append(f"- {label}: {solid.upper()} box of {int(b['intact']['elements']):,} elements, atomics: "
                               f"intact {ms(b['intact']) / ms(b['elastic']):.2f}x the elastic step "
                               f"({ms(b['intact_unscreened']) / ms(b['elastic']):.2f}x unscreened), fragmented "
                               f"{ms(b['fragmented']) / ms(b['intact']):.2f}x intact.")
    return out


def example_cell(m, name):
    rows = {b["name"]: b for b in m["benchmarks"]}
    app = rows.get(name)
    if not app:
        return ""
    per_step = ms(app)
    text = f"{app['seconds']:.3g} s, {fmt_time(per_step)}/step"
    kernel = rows.get("Example/" + name.split("/", 1)[1])
    if kernel:
        # An iteration is the example's whole run ("steps"); rows from before that took ten
        # steps after the first ten, and say so.
        k = ms(kernel) / kernel.get("steps", 10)
        text += f"; kernels {fmt_time(k)}/step{'' if 'steps' in kernel else ' (10-step)'} ({per_step / k:.1f}x)"
    top = sorted(app.get("phases", {}).items(), key=lambda kv: -kv[1])[:3]
    if top:
        text += "; " + ", ".join(f"{k} {v:.0f}%" for k, v in top)
    return text


def ranks_cell(m, name):
    """A layout's time a step; against the one-rank row of the problem: speed-up (strong) or
    efficiency (weak: against one rank of as many threads); the profiled exchange's share."""
    rows = {b["name"]: b for b in m["benchmarks"]}
    b = rows.get(name)
    if not b:
        return ""
    text = fmt_time(ms(b)) + "/step"
    problem = name.split("/")[1:3]
    one = next((r for n, r in rows.items() if n.split("/")[1:3] == problem and r.get("ranks") == 1 and
                (not b.get("weak") or r.get("threads") == b.get("threads"))), None)
    if one and b["ranks"] > 1:
        ratio = ms(one) / ms(b)
        text += f", {100 * ratio:.0f}% efficiency" if b.get("weak") else f", {ratio:.2f}x one rank"
    if b["ranks"] > 1:
        share = f"exchange {100 * b['exchange_share']:.0f}%, " if "exchange_share" in b else ""
        text += f"; {share}{b['shared_nodes']:,} shared nodes"
    phases = b.get("phases_ms", {})
    if "exchange_plan" in phases:  # fracture on many ranks: the plan's rebuild against the insertion, a step
        text += f"; insertion {fmt_time(phases['insertion'])}, plan {fmt_time(phases.get('exchange_plan', 0))}"
    return text


def examples_section(title, names, machines):
    lines = ["", f"## {title}", "",
             "Wall time from process start to exit (output included) and per step; the kernels' time per",
             "step of the same mesh and settings over the same steps from `bench_examples` (the whole run",
             "from t = 0 without output; `10-step`: an older row, ten steps after the first ten), and the",
             "ratio; the three largest phases of a `--profile` run (`time_loop` there is the host's own work",
             "between phases).", "",
             "| example | elements | steps | " + " | ".join(m["machine"] for m in machines) + " |",
             "|---|---:|---:|" + "---|" * len(machines)]
    for n in names:
        first = next(b for m in machines for b in m["benchmarks"] if b["name"] == n)
        capped = first.get("max_steps") and first["steps"] == first["max_steps"]
        steps = f"{first['steps']:,}" + (" (capped)" if capped else "")
        lines.append(f"| {n.split('/', 1)[1]} | {first['elements']:,} | {steps} | " +
                     " | ".join(example_cell(m, n) for m in machines) + " |")
    return lines


def commits(m):
    """The commits the machine's rows come from, each with its programs where there are several."""
    by = {}
    for b in m["benchmarks"]:
        by.setdefault(b.get("commit", m["commit"]), set()).add(b.get("program", "?").replace("bench_", ""))
    if len(by) == 1:
        return next(iter(by))
    return "; ".join(f"{c} ({', '.join(sorted(p))})" for c, p in sorted(by.items()))


def dates(m):
    ds = sorted({b.get("date", m["date"]) for b in m["benchmarks"]})
    return ds[0] if len(ds) == 1 else f"{ds[0]} to {ds[-1]}"


def write(a):
    machines = [json.loads(slurp(f)) for f in a.files]
    machines.sort(key=lambda m: (m["build"]["backends"].find("Cuda") < 0, m["machine"]))
    lines = ["# Benchmark results", "",
             "Written by `benchmarks/run` from `benchmarks/results/*.json`; do not edit. How to read it and",
             "how to add a machine: [docs/performance.md](../docs/performance.md). A cell gives the time of one",
             "benchmark iteration and its rate; a percentage is the share of that machine's own triad bandwidth",
             "at which the benchmark moves its minimal bytes (each array entry read or written once).", "",
             "| machine | device | build | commit | date | triad bandwidth |", "|---|---|---|---|---|---:|"]
    for m in machines:
        b = m["build"]
        build = f"Kokkos {b['kokkos']} ({b['backends'].strip()}), {b['compiler']}, KokkosKernels {b['kokkoskernels']}, " \
                f"MPI {b['mpi']}, native flags {b['native']}"
        lines.append(f"| {m['machine']} | {b['device']}; {m['cpus']} host CPUs | {build} | {commits(m)} | "
                     f"{dates(m)} | " + (f"{triad(m) / 1e9:.0f} GB/s |" if triad(m) else "not measured |"))
    all_machines = machines
    for title, prefixes, seed in SECTIONS:
        names = sorted({b["name"] for m in all_machines for b in m["benchmarks"]
                        if any(b["name"].startswith(p) for p in prefixes)},
                       key=lambda n: [(0, int(t), "") if t.lstrip("-").isdigit() else (1, 0, t)
                                      for t in n.split("/")])
        if not names:
            continue
        # A section's columns: the machines that ran some of it.
        machines = [m for m in all_machines if any(b["name"] in names for b in m["benchmarks"])]
        if prefixes == ["App/"]:
            lines += examples_section(title, names, machines)
            continue
        if prefixes == ["Ranks/"]:
            lines += ["", f"## {title}", "", "| run | elements | " + " | ".join(m["machine"] for m in machines) + " |",
                      "|---|---:|" + "---|" * len(machines)]
            for n in names:
                first = next(b for m in machines for b in m["benchmarks"] if b["name"] == n)
                lines.append(f"| {n.split('/', 1)[1]} | {first['elements']:,} | " +
                             " | ".join(ranks_cell(m, n) for m in machines) + " |")
            continue
        lines += ["", f"## {title}", "", "| benchmark | " + " | ".join(m["machine"] for m in machines) + " |",
                  "|---|" + "---:|" * len(machines)]
        for n in names:
            cells = []
            for m in machines:
                b = next((r for r in m["benchmarks"] if r["name"] == n), None)
                cells.append(cell(b, triad(m)) if b else "")
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
        floor = floor_lines(title, machines)
        if floor or seed:
            lines.append("")
        lines += floor
        if seed:
            lines.append(f"- Published: {seed}.")
    with open(a.out, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    for k in ("machine", "commit", "version", "build", "out"):
        c.add_argument("--" + k, required=True)
    c.add_argument("--replace", choices=("program", "name"), default="program",
                   help="drop the machine's old rows of each program run, or only those of the same name")
    c.add_argument("files", nargs="*")
    w = sub.add_parser("write")
    w.add_argument("--out", required=True)
    w.add_argument("files", nargs="*")
    a = p.parse_args()
    collect(a) if a.cmd == "collect" else write(a)


if __name__ == "__main__":
    main()
