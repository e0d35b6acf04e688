#!/usr/bin/env python3
"""Makes the README's pictures from the examples' Exodus output (needs python3-matplotlib and
python3-netcdf4). Usage: docs/plot_examples.py OUTPUT_DIR  (where the examples wrote their files).
The expanding ring's strain-rate sweep runs the application (FEGPU_APP, default
build/openmp/app/fegpu-kk) on variants of config/expanding_ring.yaml."""
import glob
import os
import re
import subprocess
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

    def element(self, name, step, block=1):
        return self.d[f"vals_elem_var{self.elv.index(name) + 1}eb{block}"][step]

    def cohesive(self):
        """Corner nodes of the cohesive block (face 0: columns 0, 1), or None before any crack."""
        return self.d["connect2"][:] - 1 if "connect2" in self.d.variables else None

    def globals(self, name):
        return self.d["vals_glo_var"][:, self.glo.index(name)]

    def triangulation(self, ux=None, uy=None, scale=0.0):
        corners = self.conn[:, :3]
        x = self.x + (scale * ux if ux is not None else 0)
        y = self.y + (scale * uy if uy is not None else 0)
        return mtri.Triangulation(x, y, corners)


def histories(path):
    """A history CSV as {column name without its unit: array}."""
    import csv

    with open(path) as fh:
        rows = list(csv.reader(fh))
    names = [re.sub(r" \[.*\]$", "", n) for n in rows[0]]
    data = np.array([[float(v) for v in r] for r in rows[1:]])
    return {n: data[:, i] for i, n in enumerate(names)}


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


def wave_profiles(e, line, c, ylabel, title, png):
    """Velocity x along the nodes of `line` (a mask) at every third frame, the front at c t dotted
    (reflected at the free end x = 1)."""
    order = np.argsort(e.x[line])
    fig, a = plt.subplots(figsize=(7.5, 3.4))
    for s in range(2, len(e.time), 3):
        v = e.nodal("velocity_x", s)[line][order]
        a.plot(e.x[line][order], v, lw=1, label=f"t = {e.time[s] * 1e6:.0f} us")
        front = c * e.time[s]
        a.axvline(front if front <= 1 else 2 - front, color="k", lw=0.4, ls=":")
    a.set_xlabel("x [m]")
    a.set_ylabel(ylabel)
    a.set_title(title)
    a.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def bar(out):
    e = Exodus(f"{out}/bar_wave.e")
    wave_profiles(e, np.abs(e.y - 0.005) < 1e-9, np.sqrt(2.0e11 / 7850.0), "particle velocity [m/s]",
                  "Bar wave: velocity along the strip (dotted: the front at c t)", "docs/images/bar_wave.png")


def side_faces(e, name):
    """The corner nodes (n, 3) and elements of a tetrahedral mesh's side set `name`."""
    names = [str(n) for n in chartostring(e.d["ss_names"][:])]
    k = names.index(name) + 1
    elems = e.d[f"elem_ss{k}"][:] - 1
    sides = e.d[f"side_ss{k}"][:] - 1
    local = np.array([[0, 1, 3], [1, 2, 3], [0, 3, 2], [0, 2, 1]])  # Exodus TETRA sides 1-4
    return e.conn[elems[:, None], local[sides]], elems


def cantilever_bar(out):
    e = Exodus(f"{out}/cantilever_bar.e")
    h = histories(f"{out}/cantilever_bar_histories.csv")
    E, nu, rho, H = 2.0e11, 0.3, 7800.0, 0.1
    omega = 1.8751041 ** 2 * np.sqrt(E * H ** 2 / (12 * rho))
    t = np.linspace(0, h["time"][-1], 400)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.6), gridspec_kw={"width_ratios": [1, 1.3]})
    a.plot(h["time"] * 1e3, h["tip_displacement_y"] * 1e3, "o", ms=2.5, label="fegpu-kk (TET10, 30 x 3 x 3 cells)")
    a.plot(t * 1e3, 2 * 0.1 / omega * np.sin(omega * t) * 1e3, "-", lw=1, label="Euler-Bernoulli first mode")
    a.set_xlabel("time [ms]")
    a.set_ylabel("tip deflection [mm]")
    a.legend(fontsize=8)
    a.set_title("Cantilever bar in 3D: tip history")
    s = int(np.argmax([np.abs(e.nodal("displacement_y", k)).max() for k in range(len(e.time))]))
    ux, uy = e.nodal("displacement_x", s), e.nodal("displacement_y", s)
    faces, elems = side_faces(e, "front")
    scale = 100.0
    tri = mtri.Triangulation(e.x + scale * ux, e.y + scale * uy, faces)
    sxx = e.element("stress_xx", s)[elems]
    pc = b.tripcolor(tri, facecolors=sxx / 1e6, cmap="coolwarm", edgecolors="k", linewidth=0.1)
    fig.colorbar(pc, ax=b, label="bending stress xx [MPa]")
    b.set_title(f"front face, t = {e.time[s] * 1e3:.0f} ms (deflection x {scale:.0f})")
    b.set_xlabel("x [m]")
    b.set_ylabel("y [m]")
    b.set_aspect("equal")
    fig.tight_layout()
    fig.savefig("docs/images/cantilever_bar.png", dpi=110)


def rod_wave(out):
    e = Exodus(f"{out}/rod_wave.e")
    z = e.d["coordz"][:]
    axis = (np.abs(e.y - 0.01) < 1e-9) & (np.abs(z - 0.01) < 1e-9)
    wave_profiles(e, axis, np.sqrt(2.0e11 / 7800.0), "particle velocity on the axis [m/s]",
                  "Rod in 3D (TET10): the front and its Pochhammer ringing (dotted: c0 t)", "docs/images/rod_wave.png")


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


def series(out, name):
    """The files of a ParaView series name.e, name.e-s.0001, ... in order."""
    files = glob.glob(f"{out}/{name}.e") + glob.glob(f"{out}/{name}.e-s.*")
    return sorted(files, key=lambda f: int(re.sub(r".*-s\.", "", f)) if "-s." in f else -1)


def cracks(e, step, threshold=0.0):
    """Segments (face-0 corners, deformed) of the cohesive elements whose damage exceeds threshold."""
    c = e.cohesive()
    if c is None:
        return np.zeros((0, 2, 2)), np.zeros(0)
    ux, uy = e.nodal("displacement_x", step), e.nodal("displacement_y", step)
    d = e.element("damage", step, block=2)
    keep = d > threshold
    x, y = e.x + ux, e.y + uy
    seg = np.stack([np.stack([x[c[keep, 0]], y[c[keep, 0]]], 1), np.stack([x[c[keep, 1]], y[c[keep, 1]]], 1)], 1)
    return seg, d[keep]


def crack_picture(ax, e, s, field, scale, label, cmap="viridis"):
    from matplotlib.collections import LineCollection

    ux, uy = e.nodal("displacement_x", s), e.nodal("displacement_y", s)
    tri = e.triangulation(ux, uy, scale=1.0)
    pc = ax.tripcolor(tri, facecolors=e.element(field, s) / scale, cmap=cmap, rasterized=True)
    seg, d = cracks(e, s)
    ax.add_collection(LineCollection(seg * 1e0, colors="k", linewidths=0.6))
    ax.set_aspect("equal")
    return pc


def pmma(out):
    files = series(out, "pmma_microbranching")
    e = Exodus(files[-1])
    s = len(e.time) - 1
    fig, (a, b) = plt.subplots(2, 1, figsize=(9, 6.2), gridspec_kw={"height_ratios": [1.4, 1]})
    pc = crack_picture(a, e, s, "stress_yy", 1e6, "stress yy [MPa]", cmap="coolwarm")
    fig.colorbar(pc, ax=a, label="stress yy [MPa]", shrink=0.8)
    a.set_title(f"PMMA, eps0 = 0.015: cracks (black) at t = {e.time[s] * 1e6:.1f} us, "
                f"{len(e.conn):,} T6 (Delaunay, h = 40 um)")
    a.set_xlabel("x [m]")
    a.set_ylabel("y [m]")
    h = histories(f"{out}/pmma_microbranching_histories.csv")
    t, tip, speed = h["time"], h["crack_tip_x"], h["crack_tip_speed"]
    E, nu, rho = 3.24e9, 0.35, 1190.0
    cs = np.sqrt(E / (2 * (1 + nu)) / rho)
    cr = cs * (0.862 + 1.14 * nu) / (1 + nu)  # Rayleigh speed (Viktorov's approximation)
    b.plot(t * 1e6, tip * 1e3, "-", lw=1.2, label="crack tip (farthest cohesive element along x)")
    # The tip moves facet by facet: its speed averaged over 0.5 us windows (20 rows).
    w = 20
    tw = t[w::w]
    vw = (tip[w::w] - tip[:-w:w][: len(tw)]) / (tw - t[:-w:w][: len(tw)])
    b2 = b.twinx()
    b2.plot(tw * 1e6, vw / cr, "r.-", ms=4, lw=0.8, label="its speed / c_R")
    b2.set_ylabel("speed / Rayleigh speed", color="r")
    b2.set_ylim(0, 1.2)
    b.set_xlabel("time [us]")
    b.set_ylabel("crack tip x [mm]")
    b.set_title(f"Crack tip from the histories (c_R = {cr:.0f} m/s; speed over 0.5 us windows)")
    b.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig("docs/images/pmma_microbranching.png", dpi=110)


def notch(out):
    files = series(out, "mode_i_notch")
    e = Exodus(files[-1])
    s = len(e.time) - 1
    fig, (a, b, c3) = plt.subplots(1, 3, figsize=(15, 3.8), gridspec_kw={"width_ratios": [1.6, 1, 1]})
    pc = crack_picture(a, e, s, "von_mises", 1e6, "von Mises [MPa]")
    fig.colorbar(pc, ax=a, label="von Mises stress [MPa]", shrink=0.8)
    a.set_title(f"Mode-I notch, t = {e.time[s] * 1e6:.0f} us")
    c = e.cohesive()
    ym = 0.5 * (e.y[c[:, 0]] + e.y[c[:, 1]])
    xm = 0.5 * (e.x[c[:, 0]] + e.x[c[:, 1]])
    d = e.element("damage", s, block=2)
    broken = d >= 1
    b.plot(xm[~broken] * 1e3, ym[~broken] * 1e3, ".", color="0.6", ms=3, label="cohesive, partly damaged")
    b.plot(xm[broken] * 1e3, ym[broken] * 1e3, "k.", ms=3, label="cohesive, fully open (notch and crack)")
    b.set_title(f"Path: open facets within |y| <= {np.abs(ym[broken]).max() * 1e3:.2f} mm")
    b.set_ylim(-0.5, 0.5)
    b.set_xlabel("x [mm]")
    b.set_ylabel("y [mm]")
    b.legend(fontsize=8)
    # Load-opening: the grip's force (per unit thickness) against the notch mouth's opening (the
    # probe sits on one face: the opening is twice its displacement, by symmetry).
    h = histories(f"{out}/mode_i_notch_histories.csv")
    opening = 2 * h["mouth_displacement_y"]
    sc = c3.scatter(opening * 1e6, h["top_grip_reaction_y"] / 1e3, c=h["time"] * 1e6, s=6, cmap="viridis")
    fig.colorbar(sc, ax=c3, label="time [us]")
    c3.set_xlabel("notch mouth opening [um]")
    c3.set_ylabel("grip force [kN/m]")
    c3.set_title("Load-opening (histories)")
    fig.tight_layout()
    fig.savefig("docs/images/mode_i_notch.png", dpi=110)


def kalthoff(out):
    """The crack at the end over the von Mises stress, and its path against 70 degrees."""
    files = series(out, "kalthoff_winkler")
    e = Exodus(files[-1])
    s = len(e.time) - 1
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 5.2))
    pc = crack_picture(a, e, s, "von_mises", 1e6, "von Mises [MPa]", cmap="magma")
    fig.colorbar(pc, ax=a, label="von Mises stress [MPa]", shrink=0.8)
    a.set_title(f"Kalthoff-Winkler, upper half, t = {e.time[s] * 1e6:.0f} us")
    a.set_xlabel("x [m]")
    a.set_ylabel("y [m]")
    c = e.cohesive()
    xm = 0.5 * (e.x[c[:, 0]] + e.x[c[:, 1]]) * 1e3
    ym = 0.5 * (e.y[c[:, 0]] + e.y[c[:, 1]]) * 1e3
    new = ~((np.abs(ym - 25) < 0.3) & (xm < 50))  # not the notch
    b.plot(xm[new], ym[new], "k.", ms=2, label="cohesive elements")
    r = np.hypot(xm[new] - 50, ym[new] - 25)
    near = (r >= 5) & (r <= 30)
    ang = np.degrees(np.arctan2((ym[new][near] - 25).mean(), (xm[new][near] - 50).mean()))
    t = np.linspace(0, 80, 2)
    b.plot(50 + t * np.cos(np.radians(70)), 25 + t * np.sin(np.radians(70)), "r--", lw=1, label="70 degrees (experiment)")
    b.plot([0, 50], [25, 25], "b-", lw=2, label="notch")
    b.set_xlim(0, 100)
    b.set_ylim(0, 100)
    b.set_aspect("equal")
    b.set_xlabel("x [mm]")
    b.set_ylabel("y [mm]")
    b.set_title(f"Path: {ang:.1f} degrees (mean direction 5 to 30 mm from the tip)")
    b.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig("docs/images/kalthoff_winkler.png", dpi=110)


def plate_with_hole(out):
    """sigma_xx along the hole's vertical axis against Kirsch's infinite plate, and its history."""
    e = Exodus(f"{out}/plate_with_hole.e")
    s = len(e.time) - 1
    sxx = e.element("stress_xx", s) / 1e6
    corners = e.conn[:, :3]
    cx, cy = e.x[corners].mean(1), e.y[corners].mean(1)
    near = cx < 0.02  # elements along the axis x = 0
    a_, sigma = 0.1, 100.0

    def kirsch_xx(x, y):  # Kirsch's infinite plate under sigma along x
        r, th = np.hypot(x, y), np.arctan2(y, x)
        q = (a_ / r) ** 2
        srr = sigma / 2 * (1 - q) + sigma / 2 * (1 - 4 * q + 3 * q * q) * np.cos(2 * th)
        stt = sigma / 2 * (1 + q) - sigma / 2 * (1 + 3 * q * q) * np.cos(2 * th)
        srt = -sigma / 2 * (1 + 2 * q - 3 * q * q) * np.sin(2 * th)
        return srr * np.cos(th) ** 2 + stt * np.sin(th) ** 2 - 2 * srt * np.sin(th) * np.cos(th)

    y = np.linspace(a_, 1.0, 200)
    kirsch = kirsch_xx(0.0 * y, y)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.9))
    tri = e.triangulation()
    pc = a.tripcolor(tri, facecolors=sxx, cmap="coolwarm", rasterized=True)
    fig.colorbar(pc, ax=a, label="stress xx [MPa]")
    a.set_aspect("equal")
    a.set_title(f"Plate with a hole (Gmsh T6 mesh), t = {e.time[s] * 1e3:.1f} ms")
    a.set_xlabel("x [m]")
    a.set_ylabel("y [m]")
    order = np.argsort(cy[near])
    b.plot(cy[near][order], sxx[near][order], "o", ms=3, label="fegpu-kk, element means, centroids x < 0.02")
    b.plot(cy[near][order], kirsch_xx(cx[near], cy[near])[order], "x", ms=3, label="Kirsch at those centroids")
    b.plot(y, kirsch, "-", lw=1.0, color="0.5", label="Kirsch on x = 0")
    b.set_xlabel("y [m]")
    b.set_ylabel("stress xx [MPa]")
    b.set_title("Stress concentration at the hole (3 sigma at its top)")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig("docs/images/plate_with_hole.png", dpi=110)


def expanding_ring(out, app):
    """The example at 100 m/s, and the fragment count over strain rates (runs the app)."""
    files = series(out, "expanding_ring")
    e = Exodus(files[-1])
    s = len(e.time) - 1
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.4))
    pc = crack_picture(a, e, s, "von_mises", 1e6, "von Mises [MPa]")
    fig.colorbar(pc, ax=a, label="von Mises stress [MPa]", shrink=0.8)
    frags = int(e.globals("fragments")[-1])
    a.set_title(f"Ring at 100 m/s, t = {e.time[s] * 1e6:.1f} us: {frags} fragments")
    base = open("config/expanding_ring.yaml").read()
    rates, counts = [], []
    for v in (25, 50, 100, 200, 400):
        yaml = base.replace("100*x/", f"{v}*x/").replace("100*y/", f"{v}*y/").replace(
            "file: expanding_ring.e", f"file: ring_v{v}.e")
        path = f"{out}/ring_v{v}.yaml"
        open(path, "w").write(yaml)
        subprocess.run([app, path, "--output-dir", out, "--quiet"], check=True)
        last = Exodus(series(out, f"ring_v{v}")[-1])
        rates.append(v / 0.005)
        counts.append(last.globals("fragments")[-1])
    rates = np.array(rates)
    b.loglog(rates, counts, "o-", label="fegpu-kk (T6, 200 x 4 cells, Weibull m = 10)")
    G, rho, s_max, E = 200.0, 2750.0, 3.0e8, 2.75e11
    grady = 2 * np.pi * 0.005 / (24 * G / (rho * rates ** 2)) ** (1 / 3)
    b.loglog(rates, grady, "k--", label="Grady: 2 pi R / (24 G / rho rate^2)^(1/3)")
    b.set_xlabel("strain rate [1/s]")
    b.set_ylabel("fragments")
    b.set_title("Fragments rise with strain rate")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig("docs/images/expanding_ring.png", dpi=110)


def quads_to_triangles(conn):
    return np.vstack([conn[:, [0, 1, 2]], conn[:, [0, 2, 3]]])


def shell_disp(e, step):
    return [np.asarray(e.nodal(f"displacement_{c}", step)) for c in "xyz"]


def circular_plate(out):
    e = Exodus(f"{out}/circular_plate.e")
    ux, uy, uz = shell_disp(e, len(e.time) - 1)
    centre = np.argmin(e.x ** 2 + e.y ** 2)
    E, nu, h, R, p = 206000.0, 0.3, 0.1, 10.0, 1e-4
    D = E * h ** 3 / (12 * (1 - nu ** 2))
    exact = p * R ** 4 / (64 * D) * (5 + nu) / (1 + nu) + p * R ** 2 / (4 * 5 / 6 * E / (2 * (1 + nu)) * h)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    tri = mtri.Triangulation(e.x, e.y, quads_to_triangles(e.conn))
    c = a.tripcolor(tri, -uz * 1e3, shading="gouraud", cmap="viridis")
    a.triplot(tri, lw=0.1, color="w", alpha=0.4)
    a.set_aspect("equal")
    fig.colorbar(c, ax=a, label="deflection [um]")
    a.set_title(f"Simply supported plate: {len(e.conn)} MITC4 elements")
    w = np.array([-e.nodal("displacement_z", s)[centre] for s in range(len(e.time))])
    b.plot(e.time * 1e3, w * 1e3, "o-", label="fegpu-kk, centre (damped to rest)")
    b.axhline(exact * 1e3, color="k", ls="--", label=f"Reissner-Mindlin {exact * 1e3:.4f} um")
    b.set_xlabel("t [ms]")
    b.set_ylabel("centre deflection [um]")
    b.set_title(f"final / analytic = {w[-1] / exact:.4f}")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig("docs/images/circular_plate.png", dpi=110)


def cantilever_plate(out):
    e = Exodus(f"{out}/cantilever_plate.e")
    mid = np.abs(e.y - 10.0) < 1e-9
    order = np.argsort(e.x[mid])
    tip = np.argmin((e.x - 100.0) ** 2 + (e.y - 10.0) ** 2)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    steps = np.linspace(0, len(e.time) - 1, 8).astype(int)
    for s in steps:
        ux, uy, uz = shell_disp(e, s)
        a.plot((e.x + ux)[mid][order], (uz)[mid][order], "-", lw=1.2, label=f"t = {e.time[s]:.3f} s")
    a.set_aspect("equal")
    a.set_xlabel("x + u_x [mm]")
    a.set_ylabel("u_z [mm]")
    a.set_title("Clamped plate under a tip traction: centre line")
    a.legend(fontsize=7, ncol=2)
    hist = np.array([[e.nodal(f"displacement_{c}", s)[tip] for c in "xz"] for s in range(len(e.time))])
    b.plot(e.time, hist[:, 1], label="tip u_z")
    b.plot(e.time, hist[:, 0], label="tip u_x")
    b.set_xlabel("t [s]")
    b.set_ylabel("[mm]")
    b.set_title("Tip displacement (large rotations: u_x < 0)")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig("docs/images/cantilever_plate.png", dpi=110)


def pinched_cylinder(out):
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection
    e = Exodus(f"{out}/pinched_cylinder.e")
    z = e.d["coordz"][:]
    last = len(e.time) - 1
    ux, uy, uz = shell_disp(e, last)
    X = np.stack([e.x + ux, e.y + uy, z + uz], axis=1)
    mag = np.sqrt(ux ** 2 + uy ** 2 + uz ** 2)
    fig = plt.figure(figsize=(11, 4.5))
    a = fig.add_subplot(1, 2, 1, projection="3d")
    polys = X[e.conn]
    col = Poly3DCollection(polys, cmap="viridis", edgecolor="k", linewidths=0.05)
    col.set_array(mag[e.conn].mean(axis=1))
    a.add_collection3d(col)
    a.set_xlim(-1.2, 1.2), a.set_ylim(-1.2, 1.2), a.set_zlim(0, 3.2)
    a.set_box_aspect((2.4, 2.4, 3.2))
    fig.colorbar(col, ax=a, shrink=0.6, label="|u| [m]")
    a.set_title(f"Pinched cylinder at t = {e.time[last]:.3f} s")
    load = np.argmin((e.x - 1.016) ** 2 + e.y ** 2 + (z - 3.048) ** 2)
    b = fig.add_subplot(1, 2, 2)
    b.plot(e.time, [-e.nodal("displacement_x", s)[load] for s in range(len(e.time))], "o-")
    b.set_xlabel("t [s]")
    b.set_ylabel("inward displacement under the load [m]")
    b.set_title("Load point")
    fig.tight_layout()
    fig.savefig("docs/images/pinched_cylinder.png", dpi=110)


def mohr_coulomb(s, lam, G, c, phi, psi):
    """Mohr-Coulomb perfect-plasticity return of principal trial stresses s (tension positive),
    written apart from the C++ one: main plane, else the edge beside the violated ordering, else
    the apex (Souza Neto, Peric and Owen, box 8.4)."""
    sp, ss, k = np.sin(phi), np.sin(psi), 2 * c * np.cos(phi)
    order = np.argsort(-s)
    st = s[order]
    fa = (st[0] - st[2]) + (st[0] + st[2]) * sp - k
    scale = abs(st[0]) + abs(st[2]) + k
    if fa <= 1e-12 * scale:
        return s.copy(), False
    De = lam * np.ones((3, 3)) + 2 * G * np.eye(3)
    Fa, Na = np.array([1 + sp, 0, -(1 - sp)]), np.array([1 + ss, 0, -(1 - ss)])
    Da = De @ Na
    r = st - fa / (Fa @ Da) * Da
    tol = 1e-12 * scale
    if not (r[0] - r[1] >= -tol and r[1] - r[2] >= -tol):
        e12 = r[1] > r[0]
        Fb = np.array([0, 1 + sp, -(1 - sp)]) if e12 else np.array([1 + sp, -(1 - sp), 0])
        Nb = np.array([0, 1 + ss, -(1 - ss)]) if e12 else np.array([1 + ss, -(1 - ss), 0])
        Db = De @ Nb
        A = np.array([[Fa @ Da, Fa @ Db], [Fb @ Da, Fb @ Db]])
        g = np.linalg.solve(A, [fa, Fb @ st - k])
        r = st - g[0] * Da - g[1] * Db
        if not ((r[1] - r[2] if e12 else r[0] - r[1]) >= -tol):
            r = np.full(3, c * np.cos(phi) / sp)
    out = np.empty(3)
    out[order] = r
    return out, True


def wellbore_rk(a, b, pa, pb, E, nu, c, phi, psi, n=2000):
    """The radial plane-strain problem as an ODE in x = ln r, classical Runge-Kutta from b to a,
    shot on u(b) so that sigma_rr(a) = pa; the stress of the strain (u', u / r, 0) by one return
    from zero. Returns r, sigma_rr, sigma_tt, sigma_zz, plastic flags (from b down to a)."""
    lam, G = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))

    def stress(er, et):
        tr = lam * (er + et)
        return mohr_coulomb(np.array([tr + 2 * G * er, tr + 2 * G * et, tr]), lam, G, c, phi, psi)

    def rhs(r, u, sr):
        er = sr / (lam + 2 * G)
        for _ in range(50):
            s, _ = stress(er, u / r)
            h = 1e-9 * max(abs(er), 1e-12)
            d = (stress(er + h, u / r)[0][0] - stress(er - h, u / r)[0][0]) / (2 * h)
            step = (s[0] - sr) / d
            er -= step
            if abs(step) <= 1e-14 * max(abs(er), 1e-20):
                break
        s, plastic = stress(er, u / r)
        return np.array([r * er, s[1] - s[0]]), s, plastic

    def integrate(ub):
        h = (np.log(a) - np.log(b)) / n
        y = np.array([ub, pb])
        rows = []
        for i in range(n + 1):
            x = np.log(b) + i * h
            k1, s, plastic = rhs(np.exp(x), *y)
            rows.append((np.exp(x), y[1], s[1], s[2], plastic))
            if i == n:
                break
            k2 = rhs(np.exp(x + h / 2), *(y + h / 2 * k1))[0]
            k3 = rhs(np.exp(x + h / 2), *(y + h / 2 * k2))[0]
            k4 = rhs(np.exp(x + h), *(y + h * k3))[0]
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return rows

    u0 = b * pb / (2 * (lam + G))
    u1 = u0 * 1.001
    f0, f1 = integrate(u0)[-1][1] - pa, integrate(u1)[-1][1] - pa
    for _ in range(30):
        if abs(f1) < 1e-10 * abs(pa):
            break
        u0, u1, f0 = u1, u1 - f1 * (u1 - u0) / (f1 - f0), f1
        f1 = integrate(u1)[-1][1] - pa
    return np.array(integrate(u1)).T


def wellbore(out):
    """config/wellbore.yaml's profile along the 45 degree ray against the Runge-Kutta reference."""
    fe = np.genfromtxt(os.path.join(out, "wellbore_profile.csv"), delimiter=",", names=True)
    r, sr, st, sz, plastic = wellbore_rk(0.1, 4.0, -40.0, -49.9937, 2000.0, 0.2, 5.0, np.radians(20), np.radians(20))
    front = r[plastic > 0].max()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for ref, col, label, color in ((sr, "sigma_rr", "radial", "C0"), (st, "sigma_tt", "hoop", "C1"),
                                   (sz, "sigma_zz", "axial", "C2")):
        ax.plot(r, ref, "-", color=color, lw=1.2, label=f"{label}, Runge-Kutta (2000 steps)")
        ax.plot(fe["r"][::6], fe[col][::6], "o", color=color, ms=3.5, mfc="none", label=f"{label}, FE (Q9)")
    ax.axvline(front, color="0.5", ls="--", lw=0.8)
    ax.text(front * 1.03, -30, f"plastic radius {front:.3f} m", color="0.3", fontsize=8)
    ax.set_xscale("log")
    ax.set_xlim(0.1, 1.0)
    ax.set_xlabel("r (m)")
    ax.set_ylabel("stress (MPa, tension positive)")
    ax.set_title("Wellbore, thesis Table 7.2: FE against the Runge-Kutta reference")
    ax.legend(fontsize=7, ncol=2, loc="lower right")
    fig.tight_layout()
    fig.savefig("docs/images/wellbore.png", dpi=130)
    print(f"wellbore: Runge-Kutta plastic radius {front:.4f} m")


def hollow_sphere(out):
    """The hollow sphere's outer surface coloured by piece, and the fragments and crack area over
    time. A piece: elements joined through intact faces or cohesive elements whose damage (the
    largest of its points') is below 1; the run's `fragments` also joins through a cohesive element
    until all its points have failed, so it counts fewer."""
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    files = series(out, "hollow_sphere")
    d = Dataset(files[-1])
    s = len(d["time_whole"][:]) - 1
    X = np.stack([d["coordx"][:], d["coordy"][:], d["coordz"][:]], 1)
    nod = [str(v) for v in chartostring(d["name_nod_var"][:])]
    elv = [str(v) for v in chartostring(d["name_elem_var"][:])]
    u = np.stack([d[f"vals_nod_var{nod.index('displacement_' + c) + 1}"][s] for c in "xyz"], 1)
    conn = d["connect1"][:] - 1
    parent = list(range(len(conn)))

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    faces = {}
    for e, t in enumerate(conn):
        for f in ((0, 1, 3), (1, 2, 3), (0, 3, 2), (0, 2, 1)):
            faces.setdefault(tuple(sorted(t[list(f)])), []).append(e)
    for els in faces.values():
        if len(els) == 2:
            parent[find(els[0])] = find(els[1])
    if "connect2" in d.variables:
        damage = d[f"vals_elem_var{elv.index('damage') + 1}eb2"][s]
        for w, dmg in zip(d["connect2"][:] - 1, damage):
            if dmg < 1:
                a, b = faces[tuple(sorted(w[:3]))][0], faces[tuple(sorted(w[3:]))][0]
                parent[find(a)] = find(b)
    roots = {find(e) for e in range(len(conn))}
    h = histories(f"{out}/hollow_sphere_histories.csv")
    print(f"hollow sphere: {len(roots)} pieces in the picture, the run's {h['fragments'][-1]:.0f} fragments")
    r = np.linalg.norm(X, axis=1)
    outer = [(k, els[0]) for k, els in faces.items() if len(els) == 1 and r[list(k)].min() > 0.99 * r.max()]
    rng = np.random.default_rng(1)
    colour = {root: rng.random(3) * 0.8 + 0.2 for root in roots}
    x = X + u
    fig = plt.figure(figsize=(10, 4.6))
    ax = fig.add_subplot(1, 2, 1, projection="3d")
    polys = [x[list(k)] * 1e3 for k, _ in outer]
    ax.add_collection3d(Poly3DCollection(polys, facecolors=[colour[find(e)] for _, e in outer], linewidths=0))
    lim = 5.3
    ax.set(xlim=(-lim, lim), ylim=(-lim, lim), zlim=(-lim, lim), xlabel="x (mm)", ylabel="y (mm)", zlabel="z (mm)")
    ax.set_box_aspect((1, 1, 1))
    ax.view_init(elev=20, azim=35)
    ax.set_title(f"t = {d['time_whole'][s] * 1e6:.1f} us: {h['fragments'][-1]:.0f} fragments\n"
                 f"(a colour a piece cut at every face with a failed point: {len(roots)})", fontsize=10)
    b = fig.add_subplot(1, 2, 2)
    b.plot(h["time"] * 1e6, h["fragments"], "C0")
    b.set(xlabel="time (us)", ylabel="fragments", title="Hollow sphere (TET4), 50 m/s radial")
    c = b.twinx()
    c.plot(h["time"] * 1e6, h["crack_length"] * 1e6, "C1")
    c.set_ylabel("crack area (mm^2)", color="C1")
    fig.tight_layout()
    fig.savefig("docs/images/hollow_sphere.png", dpi=110)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "out"
    app = os.environ.get("FEGPU_APP", "build/openmp/app/fegpu-kk")
    cantilever(out)
    bar(out)
    cantilever_bar(out)
    rod_wave(out)
    ring(out)
    notch(out)
    plate_with_hole(out)
    expanding_ring(out, app)
    pmma(out)
    kalthoff(out)
    circular_plate(out)
    cantilever_plate(out)
    pinched_cylinder(out)
    wellbore(out)
    hollow_sphere(out)
