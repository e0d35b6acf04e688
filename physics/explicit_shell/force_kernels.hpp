#pragma once
/// \file force_kernels.hpp
/// The MITC4 force kernels of the three schemes: the element's internal and pressure forces
/// (element_forces, from mitc4.hpp), the standard scheme's element kernel (StandardElements:
/// scattered colour by colour or with atomics), the fused scheme's one kernel a step (FusedStep:
/// node update and forces), and the element-local scheme's (LocalStep).
#include "node_update.hpp"

namespace fegpu::shell {

/// Element e's current geometry (x, d: the node arrays, or with `local` the element's own copies,
/// copy k * ne + e) and its reference geometry (X, D).
KOKKOS_INLINE_FUNCTION void gather_element(Index e, Index ne, bool local, const ConnView &conn, const CoordView &x,
                                           const CoordView &d, const CoordView &X, const CoordView &D, Vec3 xe[4],
                                           Vec3 de[4], Vec3 Xe[4], Vec3 De[4]) {
  for (int k = 0; k < 4; ++k) {
    const Index n = conn(e, k), c = local ? k * ne + e : n;
    xe[k] = load(x, c), de[k] = load(d, c), Xe[k] = load(X, n), De[k] = load(D, n);
  }
}
/// Element e's internal and pressure forces at the given geometry; adds them (f_ext - f_int and
/// the moment d x (-f_director)) through `add(k, force, moment)` and returns the strain energy.
/// With `old` (the positions at t(n)), also adds the pressure's work over the step to `work`.
/// `Pressure` false compiles the pressure out: every element kernel would hold its registers,
/// also where the pressure is applied at the nodes or absent (H100: 352 bytes of stack, 40 without).
/// ref: the reference terms (see internal_forces); X: the reference positions, read only by a
/// fixed-direction pressure.
template <bool Pressure, class Reference, class Add>
KOKKOS_INLINE_FUNCTION double element_forces(const Vec3 x[4], const Vec3 d[4], const Reference &ref, const Vec3 X[4],
                                             const Section &s, bool follower, const StepParams &p, const Vec3 *old,
                                             double &work, const Add &add) {
  Vec3 fx[4], fd[4];
  const double energy = internal_forces(x, d, ref, s, fx, fd);
  if (Pressure && (p.pressure_new != 0 || p.pressure_old != 0)) {
    Vec3 fp[4];
    pressure_forces(follower ? x : X, p.pressure_new, fp);
    if (old) {
      Vec3 fo[4];
      pressure_forces(follower ? old : X, p.pressure_old, fo);
      for (int k = 0; k < 4; ++k)
        work += 0.5 * dot(fo[k] + fp[k], x[k] - old[k]);
    }
    for (int k = 0; k < 4; ++k)
      fx[k] = fx[k] - fp[k];
  }
  for (int k = 0; k < 4; ++k)
    add(k, -1.0 * fx[k], cross(fd[k], d[k]));
  return energy;
}

// ---- standard scheme ----

template <bool Atomic, bool Pressure> struct StandardElements {
  ConnView conn;
  IndexView elems; // colour lists (coloured launches) or empty
  Index offset = 0;
  CoordView X, D, x, d, v, f, m;
  RealView work; // (element) pressure work
  Section s;
  bool follower = false, with_work = false;
  StepParams p;

  KOKKOS_INLINE_FUNCTION void operator()(Index i) const {
    const Index el = elems.extent(0) ? elems(offset + i) : i;
    Vec3 xe[4], de[4], Xe[4], De[4], old[4];
    Index n[4];
    const bool work_here = Pressure && with_work;
    gather_element(el, 0, false, conn, x, d, X, D, xe, de, Xe, De);
    for (int k = 0; k < 4; ++k) {
      n[k] = conn(el, k);
      if (work_here) old[k] = xe[k] - p.dt * load(v, n[k]);
    }
    double w = 0;
    const Vec3 *before = work_here ? old : nullptr;
    element_forces<Pressure>(xe, de, GeometryReference{Xe, De}, Xe, s, follower, p, before, w,
                             [&](int k, Vec3 force, Vec3 moment) {
                               if constexpr (Atomic) {
                                 atomic_add(f, n[k], force), atomic_add(m, n[k], moment);
                               } else {
                                 store(f, n[k], load(f, n[k]) + force), store(m, n[k], load(m, n[k]) + moment);
                               }
                             });
    if (work_here) work(el) += w;
  }
};

// ---- fused scheme ----

/// Reference terms stored per element (ShellModel::Spare::reference, raw: see Rows), read in place
/// of the reference geometry (forces only: no centre point for output). Columns: ten per Gauss
/// point (w, inv, g, k), then the four tying shears.
struct StoredReference {
  double *r;
  Rows elems;
  Index e;
  KOKKOS_FORCEINLINE_FUNCTION double &at(int j) const { return r[elems.at<kReferenceTerms>(e, j)]; }
  KOKKOS_INLINE_FUNCTION PointReference point(int p, double, double) const {
    const int o = 10 * p;
    return {
        at(o), {at(o + 1), at(o + 2), at(o + 3)}, {at(o + 4), at(o + 5), at(o + 6)}, {at(o + 7), at(o + 8), at(o + 9)}};
  }
  KOKKOS_INLINE_FUNCTION void tying(double g[4]) const {
    for (int i = 0; i < 4; ++i)
      g[i] = at(40 + i);
  }
  /// Writes element e's terms as `ref` computes them at the Gauss points.
  KOKKOS_INLINE_FUNCTION void store(const GeometryReference &ref) const {
    for (int q = 0; q < 4; ++q) {
      const PointReference t = ref.point(q, kGauss * node_xi(q), kGauss * node_eta(q));
      const double terms[10] = {t.w, t.inv[0], t.inv[1], t.inv[2], t.g[0], t.g[1], t.g[2], t.k[0], t.k[1], t.k[2]};
      for (int j = 0; j < 10; ++j)
        at(10 * q + j) = terms[j];
    }
    double g[4];
    ref.tying(g);
    for (int i = 0; i < 4; ++i)
      at(40 + i) = g[i];
  }
};

/// One kernel per step over elements. Each element advances its four nodes from the forces at
/// t(n) exactly as StandardNodes would (same inputs, same code: every element at a node finds the
/// same state), the node's first element stores the update and resets the node's forces at t(n+2),
/// and the element adds its forces at t(n+1) with atomics. One thread an element: on the H100's
/// 12,500-element plate, two threads sharing an element (two Gauss points each, both advancing the
/// four nodes or two each meeting in team scratch) took 10.7-11.4 and 10.9-11.9 us of kernel time
/// against 10.0-10.4, though each thread issued a quarter and a third fewer instructions.
template <bool Pressure> struct FusedStep : NodeArrays { // the node arrays at t(n), read
  Rows elems;
  int *conn, *owned;                           // (element, 4) and (element)
  double *x_out, *d_out, *v_out, *w_out;       // state at t(n+1)
  double *f_next, *m_next, *f_after, *m_after; // forces at t(n+1) (summed) and t(n+2) (reset)
  double *element_work;                        // pressure work in the elements
  double *reference;                           // (element, kReferenceTerms)
  Section s;
  bool follower = false, with_work = false;

  KOKKOS_INLINE_FUNCTION void operator()(Index e) const {
    Vec3 xe[4], de[4], Xe[4], old[4];
    Index n[4];
    const Rows &r = nodes;
    const bool work_here = Pressure && with_work;
    const int own = owned[e];
#pragma unroll // the four nodes' updates interleave (a loop kept their arrays on the stack)
    for (int k = 0; k < 4; ++k) {
      const Index i = n[k] = conn[elems.at<4>(e, k)];
      if (Pressure) Xe[k] = r.load(X, i); // a follower pressure needs none, but the kernel is generic
      if (work_here) old[k] = r.load(x, i);
      Vec3 xi, di, vi, wi;
      NodeEnergy en;
      advance_node(i, xi, di, vi, wi, en, true);
      if ((own >> k) & 1) {
        integrate(i, en);
        r.store(x_out, i, xi), r.store(d_out, i, di), r.store(v_out, i, vi), r.store(w_out, i, wi);
        r.store(f_after, i, nodal_pressure(i, p.pressure_after, vi));
        r.store(m_after, i, Vec3{});
      }
      xe[k] = xi, de[k] = di;
    }
    double wk = 0;
    element_forces<Pressure>(
        xe, de, StoredReference{reference, elems, e}, Xe, s, follower, p, work_here ? old : nullptr, wk,
        [&](int k, Vec3 force, Vec3 moment) { r.atomic_add(f_next, n[k], force), r.atomic_add(m_next, n[k], moment); });
    if (work_here) element_work[e] += wk;
  }
};

// ---- element-local scheme ----

/// One kernel per step over elements (parallel_for); for energies(), the node update of each
/// node's first copy without storing it (parallel_reduce over copies).
struct LocalStep : SumsReducer {
  Index ne = 0;
  int num_peers = 0;
  CoordView X, D, x, d, v, w, f_in, m_in, f_out, m_out, axes;
  RealView inv_mass, inv_rotary, work; // work: (element) pressure work
  IndexView code;
  NodeWork node_work; // (copy): the first copy's integrals
  Kokkos::View<Index **, Kokkos::LayoutLeft, MemSpace> peers;
  Section s;
  bool follower = false, update = true, with_work = false;
  StepParams p;

  /// Copy c's step from its state (x, d in; v, w loaded): the force on its node at t(n) is every
  /// copy's contribution of the previous step, in the same (ascending) order in every copy. The
  /// masses (divisions: the copies keep the inverses) only as needs_masses says.
  KOKKOS_INLINE_FUNCTION void advance_copy(Index c, Vec3 &x_c, Vec3 &d_c, Vec3 &v_c, Vec3 &w_c, NodeEnergy &e,
                                           bool always) const {
    Vec3 fsum, msum;
    for (int j = 0; j < num_peers; ++j) {
      const Index q = peers(c, j);
      if (q < 0) break;
      fsum += load(f_in, q), msum += load(m_in, q);
    }
    v_c = load(v, c), w_c = load(w, c);
    const double im = inv_mass(c), ir = inv_rotary(c);
    const int code_c = code(c);
    const bool masses = needs_masses(p, code_c, always);
    advance(x_c, d_c, v_c, w_c, fsum, msum, im, ir, masses ? 1 / im : 0, masses ? 1 / ir : 0, code_c, load(X, c), p,
            axes, e);
  }

  KOKKOS_INLINE_FUNCTION void operator()(Index e) const {
    Vec3 xe[4], de[4], Xe[4], De[4], old[4];
    for (int k = 0; k < 4; ++k) {
      const Index c = k * ne + e;
      xe[k] = load(x, c), de[k] = load(d, c);
      Xe[k] = load(X, c), De[k] = load(D, c);
      if (!update) continue;
      old[k] = xe[k];
      Vec3 vk, wk;
      NodeEnergy en;
      advance_copy(c, xe[k], de[k], vk, wk, en, false);
      if (peers(c, 0) == c) integrate(node_work(c, 0), node_work(c, 1), en, p.alpha, code(c));
      store(x, c, xe[k]), store(d, c, de[k]), store(v, c, vk), store(w, c, wk);
    }
    double wk = 0;
    element_forces<true>(
        xe, de, GeometryReference{Xe, De}, Xe, s, follower, p, with_work ? old : nullptr, wk,
        [&](int k, Vec3 force, Vec3 moment) { store(f_out, k * ne + e, force), store(m_out, k * ne + e, moment); });
    if (with_work) work(e) += wk;
  }
  KOKKOS_INLINE_FUNCTION void operator()(Index c, EnergySums &sum) const {
    if (peers(c, 0) != c) return;
    Vec3 xc = load(x, c), dc = load(d, c), vc, wc;
    NodeEnergy e;
    advance_copy(c, xc, dc, vc, wc, e, true);
    measure(node_work(c, 0), node_work(c, 1), e, sum);
  }
};

} // namespace fegpu::shell
