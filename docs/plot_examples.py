#!/usr/bin/env python3
"""Makes the README's pictures from the examples' Exodus output (needs python3-matplotlib and
python3-netcdf4). Usage: docs/plot_examples.py OUTPUT_DIR  (where the examples wrote their files)."""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib.tri as mtri
import numpy as np
from netCDF4 import Dataset, chartostring


class Exodus:
    def __init__(self, path):
        self.d = Dataset(path)
        self.x = self.d["coordx"][:]
        self.y = self.d["coordy"][:]
        self.conn = self.d["connect1"][:] - 1
        self.time = self.d["time_whole"][:]
        self.nod = [str(s) for s in chartostring(self.d["name_nod_var"][:])]
        self.elv = [str(s) for s in chartostring(self.d["name_elem_var"][:])]
        self.glo = [str(s) for s in chartostring(self.d["name_glo_var"][:])]

    def nodal(self, name, step):
        return self.d[f"vals_nod_var{self.nod.index(name) + 1}"][step]

    def element(self, name, step):
        return self.d[f"vals_elem_var{self.elv.index(name) + 1}eb1"][step]

    def globals(self, name):
        return self.d["vals_glo_var"][:, self.glo.index(name)]

    def triangulation(self, ux=None, uy=None, scale=0.0):
        corners = self.conn[:, :3]
        x = self.x + (scale * ux if ux is not None else 0)
        y = self.y + (scale * uy if uy is not None else 0)
        return mtri.Triangulation(x, y, corners)


def cantilever(out):
    e = Exodus(f"{out}/cantilever.e")
    tip = np.argmin((e.x - 1.0) ** 2 + e.y ** 2)
    w = np.array([e.nodal("displacement_y", s)[tip] for s in range(len(e.time))])
    beta = 1.8751041
    E, rho, H = 2.0e11, 7850.0, 0.05
    omega = beta ** 2 * np.sqrt(E * H ** 2 / (12 * rho))
    t = np.linspace(0, e.time[-1], 400)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.6))
    a.plot(e.time * 1e3, w * 1e3, "o", ms=3, label="fegpu-kk (T6, 80 x 4 cells)")
    a.plot(t * 1e3, 2 * 0.1 / omega * np.sin(omega * t) * 1e3, "-", lw=1, label="Euler-Bernoulli first mode")
    a.set_xlabel("time [ms]")
    a.set_ylabel("tip deflection [mm]")
    a.legend(fontsize=8)
    a.set_title("Cantilever: tip history")
    s = int(np.argmax(np.abs(w)))
    ux, uy = e.nodal("displacement_x", s), e.nodal("displacement_y", s)
    tri = e.triangulation(ux, uy, scale=30.0)
    sxx = e.element("stress_xx", s)
    pc = b.tripcolor(tri, facecolors=sxx / 1e6, cmap="coolwarm")
    fig.colorbar(pc, ax=b, label="bending stress xx [MPa]")
    b.set_title(f"t = {e.time[s] * 1e3:.1f} ms (deflection x 30, depth stretched)")
    b.set_xlabel("x [m]")
    b.set_ylabel("y [m]")
    fig.tight_layout()
    fig.savefig("docs/images/cantilever.png", dpi=110)


def bar(out):
    e = Exodus(f"{out}/bar_wave.e")
    mid = np.abs(e.y - 0.005) < 1e-9
    order = np.argsort(e.x[mid])
    c = np.sqrt(2.0e11 / 7850.0)
    fig, a = plt.subplots(figsize=(7.5, 3.4))
    for s in range(2, len(e.time), 3):
        v = e.nodal("velocity_x", s)[mid][order]
        a.plot(e.x[mid][order], v, lw=1, label=f"t = {e.time[s] * 1e6:.0f} us")
        front = c * e.time[s]
        a.axvline(front if front <= 1 else 2 - front, color="k", lw=0.4, ls=":")
    a.set_xlabel("x [m]")
    a.set_ylabel("particle velocity [m/s]")
    a.set_title("Bar wave: velocity along the strip (dotted: the front at c t)")
    a.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig("docs/images/bar_wave.png", dpi=110)


def ring(out):
    e = Exodus(f"{out}/ring_pressure.e")
    cx = e.x[e.conn[:, :3]].mean(axis=1)
    cy = e.y[e.conn[:, :3]].mean(axis=1)
    th = np.arctan2(cy, cx)

    def radial(s):
        sxx, syy, sxy = (e.element(n, s) for n in ("stress_xx", "stress_yy", "stress_xy"))
        return sxx * np.cos(th) ** 2 + syy * np.sin(th) ** 2 + 2 * sxy * np.sin(th) * np.cos(th)

    s = len(e.time) - 1
    late = [k for k in range(len(e.time)) if e.time[k] >= 0.5 * e.time[-1]]
    srr_mean = np.mean([radial(k) for k in late], axis=0)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    pc = a.tripcolor(e.triangulation(), facecolors=radial(s) / 1e6, cmap="coolwarm")
    fig.colorbar(pc, ax=a, label="radial stress [MPa]")
    a.set_aspect("equal")
    a.set_title(f"Ring under 100 MPa internal pressure, t = {e.time[s] * 1e6:.0f} us")
    r = np.hypot(cx, cy)
    srr = srr_mean
    p, ri, ro = 1.0e8, 0.5, 1.0
    rr = np.linspace(ri, ro, 100)
    lame = p * ri ** 2 / (ro ** 2 - ri ** 2) * (1 - ro ** 2 / rr ** 2)
    b.plot(r, srr / 1e6, ".", ms=2,
           label=f"fegpu-kk, every element, mean over {e.time[late[0]] * 1e6:.0f}-{e.time[-1] * 1e6:.0f} us")
    b.plot(rr, lame / 1e6, "k-", label="Lame static solution")
    b.set_xlabel("r [m]")
    b.set_ylabel("radial stress [MPa]")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig("docs/images/ring_pressure.png", dpi=110)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "out"
    cantilever(out)
    bar(out)
    ring(out)
