#!/usr/bin/env python3
"""Many ranks: the application on 1, 2, 4 ... MPI ranks, the exchange overlapped and not.

  ranks.py --app BUILD/app/fegpu-kk --out FILE.json [--mpiexec mpirun] [--mpiexec-flags "..."]
           [--layouts 1x2,2x1] [--problems t6:1000000,cylinder:294912,t6:500000:weak] [--steps 100]
           [--no-profile t6_weak,...] [--overlap both|on|off] [--exchange auto|nccl|staged|both]

A problem is KIND:ELEMENTS[:weak]: `t6`, elastodynamics of a T6 strip (a velocity pulled at one
end), `cylinder`, the seed's pinched MITC4 cylinder (standard scheme, atomic scatter), or `ring`,
the expanding ring example fragmenting (T6 cells about square, pre-stretched to just below the
mean strength, so that facets crack from the first steps and on; a stress check every step, and
the row counts the cohesive elements inserted), or `pmma`, the PMMA microbranching example's plate
(config/pmma_microbranching.yaml, its crack running from the first steps); ELEMENTS
in all (strong scaling) or, with `weak`, a rank. A layout is RANKSxTHREADS (threads: OpenMP
threads a rank; 0 leaves Kokkos' default, as on a GPU, where each rank takes its own device).
Weak scaling keeps a rank's threads: each layout RxT of several ranks is set against 1xT.
Each problem runs on every layout, plainly (the time loop's wall time over its steps, the row's
time) and with --profile (the exchange's share of the profiled step); layouts of several ranks
run twice, `solver: {overlap: true}` (the default) and `false` (`--overlap on|off` runs one of
them). The runs write no Exodus file (`output: {fields: false}`): the set-up and the time loop are
what they time. `--no-profile` names problems (KIND or KIND_weak) run plainly only, without the
exchange's share (each profiled run repeats the set-up, which on 1e7 elements takes longer than
the steps). `--exchange` names the exchange of several ranks (`solver: {exchange}`; both: NCCL
and staged, rows suffixed /nccl and /staged; auto, the default, leaves the program's choice).
With --profile, a row keeps every phase's time a step (phases_ms). Rows go to FILE.json in the form of Google Benchmark's output, program "ranks", for report.py.
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

T6 = """physics: elastodynamics
mesh: {{generator: rectangle, element: tri6, nx: {nx}, ny: {ny}, lx: {lx}, ly: 1.0}}
materials:
  steel: {{density: 7850, youngs_modulus: 2.0e11, poissons_ratio: 0.3}}
boundary_conditions:
  - {{type: velocity, node_set: left, components: x, value: 1.0}}
solver: {{overlap: {overlap}{exchange}}}
time: {{end_time: 1.0}}
output: {{file: t6.e, fields: false}}
"""

CYLINDER = """physics: explicit_shell
mesh: {{generator: cylinder, n_theta: {n}, n_z: {nz}, radius: 1.016, length: 3.048}}
material: {{density: 1000.0, youngs_modulus: 2.0685e7, poissons_ratio: 0.3, thickness: 0.03}}
boundary_conditions:
  - {{type: fixed, node_set: bottom, dofs: all}}
loads:
  - {{type: force, point: [1.016, 0.0, 3.048], value: [-500.0, 0.0, 0.0]}}
  - {{type: force, point: [-1.016, 0.0, 3.048], value: [500.0, 0.0, 0.0]}}
solver: {{scheme: standard, scatter: atomic, overlap: {overlap}{exchange}}}
time: {{end_time: 0.25}}
output: {{file: cylinder.e, fields: false}}
"""

RING = """physics: cohesive_fracture
mesh: {{generator: annulus, element: tri6, n_theta: {nt}, n_r: {nr}, inner_radius: 0.00475, outer_radius: 0.00525}}
materials:
  ceramic: {{density: 2750, youngs_modulus: 2.75e11, poissons_ratio: 0.3, plane: strain}}
initial_conditions:
  displacement: {{x: "0.5e-3*x", y: "0.5e-3*y"}}
  velocity: {{x: "100*x/sqrt(x^2+y^2)", y: "100*y/sqrt(x^2+y^2)"}}
fracture:
  law: {{phi_n: 200, phi_t: 200, sigma_max: 3.0e8, tau_max: 3.0e8, alpha: 2, beta: 2}}
  strength: {{distribution: weibull, modulus: 10, seed: 1}}
solver: {{overlap: {overlap}{exchange}}}
time: {{end_time: 4.0e-6, safety_factor: 0.5}}
output: {{file: ring.e, fields: false}}
"""


PMMA = """physics: cohesive_fracture
mesh: {{generator: rectangle, element: tri6, diagonals: alternate, nx: {nx}, ny: {ny}, lx: 0.016, ly: 0.004,
       y0: -0.002}}
materials:
  pmma: {{density: 1190, youngs_modulus: 3.24e9, poissons_ratio: 0.35, plane: stress, thickness: 1.0}}
boundary_conditions:
  - {{type: displacement, node_set: top, components: y, value: 3.0e-5}}
  - {{type: displacement, node_set: bottom, components: y, value: -3.0e-5}}
initial_conditions:
  displacement: {{x: "-0.35*0.015*(x - 0.008)", y: "0.015*y"}}
solver: {{scatter: atomic, overlap: {overlap}{exchange}}}
fracture:
  law: {{phi_n: 352.3, phi_t: 352.3, sigma_max: 129.6e6, tau_max: 129.6e6, alpha: 2, beta: 2}}
  notches: [[0.0, 0.0, 0.002, 0.0]]
  check_every: 1
time: {{end_time: 1.6e-5, safety_factor: 0.5}}
output: {{file: pmma.e, fields: false}}
"""


def problem_input(kind, elements, overlap, exchange="auto"):
    """The input of about `elements` elements, and how many it has."""
    flag = "true" if overlap else "false"
    exchange = "" if exchange == "auto" else f", exchange: {exchange}"
    if kind == "t6":  # a strip 4:1 of nx x ny cells, two triangles each
        ny = max(1, round(math.sqrt(elements / 8)))
        nx = max(1, round(elements / (2 * ny)))
        return T6.format(nx=nx, ny=ny, lx=nx / ny, overlap=flag, exchange=exchange), 2 * nx * ny
    if kind == "cylinder":  # n x 2n cells, as the seed's meshes
        n = max(4, round(math.sqrt(elements / 2)))
        return CYLINDER.format(n=n, nz=2 * n, overlap=flag, exchange=exchange), 2 * n * n
    if kind == "ring":  # n_theta / n_r = 2 pi R / thickness: cells about square
        nr = max(2, round(math.sqrt(elements / (4 * math.pi * 10))))
        nt = max(8, round(elements / (2 * nr)))
        return RING.format(nt=nt, nr=nr, overlap=flag, exchange=exchange), 2 * nt * nr
    if kind == "pmma":  # the 16 mm x 4 mm plate in nx x ny cells of two triangles, nx = 4 ny
        ny = max(1, round(math.sqrt(elements / 8)))
        return PMMA.format(nx=4 * ny, ny=ny, overlap=flag, exchange=exchange), 8 * ny * ny
    raise SystemExit(f"ranks.py: unknown problem kind '{kind}' (t6, cylinder, ring, pmma)")


def run(a, ranks, threads, yaml_text, extra, scratch):
    path = os.path.join(scratch, "input.yaml")
    with open(path, "w") as fh:
        fh.write(yaml_text)
    out = os.path.join(scratch, "out")
    cmd = [a.mpiexec, "-np", str(ranks)] + a.mpiexec_flags.split() + \
          [a.app, path, "--output-dir", out, "--max-steps", str(a.steps)] + extra
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if threads > 0:
        cmd.append(f"--kokkos-num-threads={threads}")
        env["OMP_NUM_THREADS"] = str(threads)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    shutil.rmtree(out, ignore_errors=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-2000:]}")
    return p.stdout


def phases(stdout):
    """The end-of-run table: phase -> (seconds, calls). The seconds are the calls times the mean a
    call, which the table prints to 0.1 us: its total, printed to 1 ms, would read a phase of a
    30-step run to 1/30 ms a step."""
    table = stdout.split("time per phase:", 1)[1] if "time per phase:" in stdout else ""
    return {m.group(1): (int(m.group(2)) * float(m.group(3)) * 1e-6, int(m.group(2)))
            for m in re.finditer(r"^\s+(\S+)\s+[\d.]+ s\s+[\d.]+ %\s+(\d+) x\s+([\d.]+) us", table, re.M)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--app", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--mpiexec", default="mpirun")
    p.add_argument("--mpiexec-flags", default="")
    p.add_argument("--layouts", default="")
    p.add_argument("--problems", default="t6:1000000,cylinder:294912,t6:500000:weak")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--no-profile", default="")
    p.add_argument("--overlap", choices=("both", "on", "off"), default="both")
    p.add_argument("--exchange", choices=("auto", "nccl", "staged", "both"), default="auto")
    a = p.parse_args()
    cores = os.cpu_count() or 1
    layouts = a.layouts or ",".join(f"{r}x{cores // r}" for r in (1, 2, 4) if cores // r >= 1 and r <= cores)
    rows = []
    scratch = tempfile.mkdtemp(prefix="fegpu-ranks.")
    for spec in a.problems.split(","):
        kind, elements, *mode = spec.split(":")
        weak = mode == ["weak"]
        todo = layouts.split(",")
        if weak:  # one rank of each layout's threads first, the reference of its efficiency
            todo = [f"1x{t}" for t in dict.fromkeys(l.split("x")[1] for l in todo)] + \
                   [l for l in todo if not l.startswith("1x")]
        for layout in todo:
            ranks, threads = (int(x) for x in layout.split("x"))
            modes = {"both": [True, False], "on": [True], "off": [False]}[a.overlap]
            exchanges = ["nccl", "staged"] if a.exchange == "both" else [a.exchange]
            for overlap, exchange in [(o, x) for o in (modes if ranks > 1 else [True])
                                      for x in (exchanges if ranks > 1 else ["auto"])]:
                yaml_text, n = problem_input(kind, int(elements) * (ranks if weak else 1), overlap, exchange)
                name = f"Ranks/{kind}{'_weak' if weak else ''}/{elements}/{layout}" + \
                       (("/overlap" if overlap else "/after") if ranks > 1 else "") + \
                       (f"/{exchange}" if ranks > 1 and exchange != "auto" else "")
                print(f"ranks.py: {name}", file=sys.stderr)
                stdout = run(a, ranks, threads, yaml_text, [], scratch)
                plain = phases(stdout)
                shared = re.search(r"^partition: .* (\d+) shared nodes", stdout, re.M)
                cracks = re.search(r"^cracks: (\d+) cohesive elements", stdout, re.M)
                loop = plain["time_loop"][0]
                row = {"name": name, "run_type": "iteration", "real_time": 1e3 * loop / a.steps,
                       "time_unit": "ms", "elements": n, "ranks": ranks, "threads": threads,
                       "overlap": overlap, "weak": weak, "steps": a.steps, "exchange": exchange,
                       "shared_nodes": int(shared.group(1)) if shared else 0}
                if cracks:
                    row["cohesive_elements"] = int(cracks.group(1))
                if f"{kind}{'_weak' if weak else ''}" not in a.no_profile.split(","):
                    profiled = phases(run(a, ranks, threads, yaml_text, ["--profile"], scratch))
                    step_phases = {k: v for k, v in profiled.items() if k not in ("setup", "start", "output")}
                    exchange = profiled.get("exchange", (0.0, 0))[0]
                    row["exchange_share"] = exchange / max(sum(s for s, _ in step_phases.values()), 1e-30)
                    # The profiled run's phases, ms a step (fracture: the exchange plan's rebuild
                    # against the insertion it follows).
                    row["phases_ms"] = {k: round(1e3 * v / a.steps, 5) for k, (v, _) in step_phases.items()}
                rows.append(row)
                with open(a.out, "w") as fh:  # after every row: a run cut short keeps what it measured
                    json.dump({"context": {}, "benchmarks": rows}, fh, indent=1)
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
