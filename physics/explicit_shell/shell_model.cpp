/// \file shell_model.cpp
/// Set-up (mass, directors, constraints, loads, element-local copies) and the kernels of the two
/// time-integration schemes.
#include "shell_model.hpp"

#include "fegpu/core/error.hpp"
#include "fegpu/mesh/topology.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <type_traits>

namespace fegpu::shell {

namespace {

/// Launches a time-loop kernel over [0, n). Every thread works through a long chain of dependent
/// double-precision arithmetic (a MITC4 element or a node's update), so a small launch is
/// latency-bound: Kokkos' blocks of 128 to 256 threads leave most multiprocessors idle (the
/// 12,500-element plate's node update ran as 50 blocks on 132), while blocks of 64 spread it.
/// H100, plate, standard scheme with atomics: 23.3 -> 21.4 us a step; on the 3.28M-element
/// cylinder the same blocks cost 5%, so large launches keep Kokkos' choice.
template <class Functor> void step_for(const char *label, Index n, const Functor &k) {
  constexpr Index kSmall = 65536;
  if (n < kSmall)
    Kokkos::parallel_for(label, range_in_blocks<64>(0, n), k);
  else
    Kokkos::parallel_for(label, range(0, n), k);
}

/// Sums the energy terms of `k(i, sums)` over [0, n) (energies(), not the time loop).
template <class Functor> EnergySums sum_energies(const char *label, Index n, const Functor &k) {
  EnergySums s;
  Kokkos::parallel_reduce(label, range(0, n), k, s);
  return s;
}

// Constraint code of a node: bits 0-2 translation x, y, z prescribed; bits 3-4 rotation mode
// (0 free, 1 fixed, 2 only about the axis axes(index)); bits 5-16 the axis index; bits 17-28 for
// each translation component the prescribed-motion slot + 1 (0: held at zero velocity).
constexpr int kRotFixed = 1, kRotAxis = 2, kAxisShift = 5, kAxisBits = 12, kSlotShift = 17;

KOKKOS_FORCEINLINE_FUNCTION Vec3 load(const CoordView &v, Index i) { return {v(i, 0), v(i, 1), v(i, 2)}; }
KOKKOS_FORCEINLINE_FUNCTION void store(const CoordView &v, Index i, Vec3 a) {
  v(i, 0) = a.x;
  v(i, 1) = a.y;
  v(i, 2) = a.z;
}
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
KOKKOS_FORCEINLINE_FUNCTION void atomic_add(const CoordView &v, Index i, Vec3 a) {
  Kokkos::atomic_add(&v(i, 0), a.x), Kokkos::atomic_add(&v(i, 1), a.y), Kokkos::atomic_add(&v(i, 2), a.z);
}
/// How the node-update and fused kernels address (entity, component) arrays of n entities in the
/// device's default layout: through raw pointers and this one length. A View in a kernel's
/// argument is 24-40 bytes with its own extents: the fused kernel's 25 Views made a 1.1 kB argument
/// whose uniform loads waited on constant-cache misses (12% of its stall samples on the H100),
/// and each array's component offsets were computed apart. H100 plate: 2,994 -> 2,647
/// instructions on the busiest scheduler, constant-cache waits halved.
struct Rows {
  static constexpr bool kLeft = std::is_same_v<CoordView::array_layout, Kokkos::LayoutLeft>;
  static_assert(kLeft || std::is_same_v<CoordView::array_layout, Kokkos::LayoutRight>);
  Index n = 0;
  /// Entity i's component c of C.
  template <int C> KOKKOS_FORCEINLINE_FUNCTION Index at(Index i, int c) const { return kLeft ? i + c * n : C * i + c; }
  KOKKOS_FORCEINLINE_FUNCTION Vec3 load(const double *a, Index i) const {
    return {a[at<3>(i, 0)], a[at<3>(i, 1)], a[at<3>(i, 2)]};
  }
  KOKKOS_FORCEINLINE_FUNCTION void store(double *a, Index i, Vec3 v) const {
    a[at<3>(i, 0)] = v.x, a[at<3>(i, 1)] = v.y, a[at<3>(i, 2)] = v.z;
  }
  KOKKOS_FORCEINLINE_FUNCTION void atomic_add(double *a, Index i, Vec3 v) const {
    Kokkos::atomic_add(&a[at<3>(i, 0)], v.x), Kokkos::atomic_add(&a[at<3>(i, 1)], v.y);
    Kokkos::atomic_add(&a[at<3>(i, 2)], v.z);
  }
  /// v's data, where v is an array of these entities in the default layout (or empty: nullptr).
  template <class View> typename View::pointer_type data(const View &v) const {
    static_assert(std::is_same_v<typename View::array_layout, CoordView::array_layout>);
    if (v.size() == 0) return nullptr;
    FEGPU_CHECK(static_cast<Index>(v.extent(0)) == n && v.span_is_contiguous(), "an array of another length");
    return v.data();
  }
};

KOKKOS_FORCEINLINE_FUNCTION double &comp(Vec3 &a, int i) { return i == 0 ? a.x : (i == 1 ? a.y : a.z); }
KOKKOS_FORCEINLINE_FUNCTION double comp(const Vec3 &a, int i) { return i == 0 ? a.x : (i == 1 ? a.y : a.z); }

/// A node's energy terms at t(n), found by its step: the kinetic energy, and the damping and
/// reaction work over [t(n-1/2), t(n)] (close) and [t(n), t(n+1/2)] (open).
struct NodeEnergy {
  double kinetic = 0, damping_close = 0, damping_open = 0, reaction_close = 0, reaction_open = 0;
};

/// Whether a node's (or copy's) step reads its masses: its energy terms need them for the damping
/// and for reactions on prescribed translations, and `always` (energies(); the fused kernel, where
/// a load waiting on the constraint code lengthened the H100 plate's step by 3%). An undamped
/// standard update so reads 16 bytes a node less.
KOKKOS_FORCEINLINE_FUNCTION bool needs_masses(const StepParams &p, int code, bool always) {
  return always || p.alpha > 0 || (code & 7);
}

/// One node's (or copy's) step: from the net force f and moment at t(n) to v(n+1/2), w(n+1/2),
/// x(n+1), d(n+1), and its energy terms. im, ir: the inverse translational and rotary masses, mt,
/// mr: the masses, for the energy terms (the update divides by nothing: a double division is a
/// long dependent chain on a GPU; the fused kernel's branches for its owned nodes ran eight).
KOKKOS_INLINE_FUNCTION void advance(Vec3 &x, Vec3 &d, Vec3 &v, Vec3 &w, Vec3 f, Vec3 mom, double im, double ir,
                                    double mt, double mr, int code, Vec3 X, const StepParams &p, const CoordView &axes,
                                    NodeEnergy &e) {
  const double h1 = p.first_half, h2 = 0.5 * p.dt, c = p.alpha;
  // m a + c m (v(n-1/2) + h1 a) = f
  const Vec3 a = p.damp * (im * f - c * v);
  Vec3 vh = v + (h1 + h2) * a;
  mom = mom - dot(mom, d) * d;
  const Vec3 al = p.damp * (ir * mom - c * w);
  Vec3 wh = w + (h1 + h2) * al;
  if (code) {
    for (int i = 0; i < 3; ++i)
      if ((code >> i) & 1) {
        const int slot = (code >> (kSlotShift + 4 * i)) & 15;
        double target = 0;
        if (slot)
          target = p.displacement[slot - 1] ? (comp(X, i) + p.target[slot - 1][i] - comp(x, i)) * p.inv_dt
                                            : p.target[slot - 1][i];
        comp(vh, i) = target;
      }
    const int rot = (code >> 3) & 3;
    if (rot == kRotFixed) wh = Vec3{};
    if (rot == kRotAxis) {
      const Vec3 ax = load(axes, (code >> kAxisShift) & ((1 << kAxisBits) - 1));
      wh = dot(wh, ax) * ax;
    }
  }
  wh = wh - dot(wh, d) * d;
  // v(n) from the motion actually taken (it differs from the free one on prescribed dofs).
  const double r = p.blend;
  const Vec3 vn = v + r * (vh - v), wn = w + r * (wh - w);
  e.kinetic = 0.5 * (mt * dot(vn, vn) + mr * dot(wn, wn));
  // The damping force c m v(n) works over [t(n-1/2), t(n+1/2)]: the closing half ends at t(n).
  const double close = h1 > 0 ? p.dt : 0.0;
  if (c > 0) {
    e.damping_close = 0.5 * c * close * (mt * dot(vn, v) + mr * dot(wn, w));
    e.damping_open = 0.5 * c * p.dt * (mt * dot(vn, vh) + mr * dot(wn, wh));
  }
  if (code & 7) { // reactions on prescribed translations: m a + c m v(n) - f
    const Vec3 react = (mt * p.inv_step) * (vh - v) + (c * mt) * vn - f;
    for (int i = 0; i < 3; ++i)
      if ((code >> i) & 1) {
        e.reaction_close += 0.5 * close * comp(react, i) * comp(v, i);
        e.reaction_open += 0.5 * p.dt * comp(react, i) * comp(vh, i);
      }
  }
  v = vh;
  w = wh;
  x += p.dt * vh;
  d = rotate(d, p.dt * wh);
}

struct SumsReducer {
  using value_type = EnergySums;
  KOKKOS_INLINE_FUNCTION static void join(EnergySums &a, const EnergySums &b) {
    a.kinetic += b.kinetic, a.damping += b.damping, a.external += b.external;
  }
  KOKKOS_INLINE_FUNCTION static void init(EnergySums &a) { a = EnergySums{}; }
};

/// Time loop: a node's damping and reaction work over [t(n-1/2), t(n+1/2)] added to its integrals
/// (only where there is any). energies(): its terms at t(n) from the integrals to t(n-1/2).
/// damping, external: the node's two integrals (NodeWork's columns).
KOKKOS_INLINE_FUNCTION void integrate(double &damping, double &external, const NodeEnergy &e, double alpha, int code) {
  if (alpha > 0) damping += e.damping_close + e.damping_open;
  if (code & 7) external += e.reaction_close + e.reaction_open;
}
KOKKOS_INLINE_FUNCTION void measure(double damping, double external, const NodeEnergy &e, EnergySums &s) {
  s.kinetic += e.kinetic;
  s.damping += damping + e.damping_close;
  s.external += external + e.reaction_close;
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

/// The node arrays of the standard and fused schemes (raw, see Rows), and the update of one node
/// from them. Every array but the prescribed rotation axes has one entry per node.
struct NodeArrays {
  Rows nodes;
  double *X, *x, *d, *v, *w, *f, *m;                    // state and forces at t(n)
  double *unit_pressure;                                // fixed-direction pressure's force per unit pressure, or null
  double *inv_mass, *inv_rotary, *mass, *rotary, *work; // work: (node, 2), NodeWork
  int *code;
  StepParams p;
  CoordView axes; // last: read only by an axis constraint

  /// Node i's state at t(n) advanced to t(n+1) (v, w: to t(n+1/2)), and its energy terms; its
  /// masses read as needs_masses says.
  KOKKOS_INLINE_FUNCTION void advance_node(Index i, Vec3 &xi, Vec3 &di, Vec3 &vi, Vec3 &wi, NodeEnergy &e,
                                           bool always) const {
    const Rows &r = nodes;
    xi = r.load(x, i), di = r.load(d, i), vi = r.load(v, i), wi = r.load(w, i);
    const int c = code[i];
    const bool masses = needs_masses(p, c, always);
    advance(xi, di, vi, wi, r.load(f, i), r.load(m, i), inv_mass[i], inv_rotary[i], masses ? mass[i] : 0,
            masses ? rotary[i] : 0, c, r.load(X, i), p, axes, e);
  }
  KOKKOS_INLINE_FUNCTION void integrate(Index i, const NodeEnergy &e) const {
    shell::integrate(work[nodes.at<2>(i, 0)], work[nodes.at<2>(i, 1)], e, p.alpha, code[i]);
  }
  /// A fixed-direction pressure applied at the nodes (or none: zero): node i's work over the step
  /// at velocity vh = v(n+1/2), and the force `scale` * unit that a later step's forces start from.
  KOKKOS_INLINE_FUNCTION Vec3 nodal_pressure(Index i, double scale, Vec3 vh) const {
    if (!unit_pressure) return Vec3{};
    const Vec3 u = nodes.load(unit_pressure, i);
    work[nodes.at<2>(i, 1)] += 0.5 * (p.pressure_old + p.pressure_new) * p.dt * dot(u, vh);
    return scale * u;
  }
};

/// The standard scheme's node update (parallel_for) and, for energies(), the same update of every
/// node without storing it, summing its energy terms (parallel_reduce).
struct StandardNodes : SumsReducer, NodeArrays {
  KOKKOS_INLINE_FUNCTION void operator()(Index n) const {
    Vec3 xn, dn, vn, wn;
    NodeEnergy e;
    advance_node(n, xn, dn, vn, wn, e, false);
    integrate(n, e);
    const Rows &r = nodes;
    r.store(x, n, xn), r.store(d, n, dn), r.store(v, n, vn), r.store(w, n, wn);
    // The forces at t(n+1) start from the fixed pressure then.
    r.store(f, n, nodal_pressure(n, p.pressure_new, vn)), r.store(m, n, Vec3{});
  }
  KOKKOS_INLINE_FUNCTION void operator()(Index n, EnergySums &s) const {
    Vec3 xn, dn, vn, wn;
    NodeEnergy e;
    advance_node(n, xn, dn, vn, wn, e, true);
    measure(work[nodes.at<2>(n, 0)], work[nodes.at<2>(n, 1)], e, s);
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

/// Nodal loads f(t) * value added to their node (or first copy), with their work over the step.
struct NodalLoads {
  IndexView target, index;
  CoordView value, f, v;
  RealView work; // (entry)
  double scale_old[kMaxLoads] = {}, scale_new[kMaxLoads] = {};
  double dt = 0;
  bool with_work = false;
  KOKKOS_INLINE_FUNCTION void operator()(Index i) const {
    const Index t = target(i);
    const Vec3 val = load(value, i);
    const double sn = scale_new[index(i)];
    atomic_add(f, t, sn * val);
    if (with_work) work(i) += 0.5 * (scale_old[index(i)] + sn) * dt * dot(val, load(v, t));
  }
};

/// The forces a step starts summing into: f = p * unit (a fixed pressure at the nodes) or zero,
/// m = 0.
void reset_forces(const CoordView &f, const CoordView &m, const CoordView &unit, double p) {
  Kokkos::deep_copy(m, 0.0);
  if (!unit.extent(0)) return Kokkos::deep_copy(f, 0.0);
  Kokkos::parallel_for(
      "fegpu::shell::reset_forces", range(0, static_cast<Index>(f.extent(0))),
      KOKKOS_LAMBDA(Index n) { store(f, n, p * load(unit, n)); });
}

bool follower_pressure(const Config &c) {
  for (const LoadSpec &l : c.loads)
    if (l.kind == LoadSpec::Pressure) return l.follower;
  return false;
}
bool has_pressure(const Config &c) {
  for (const LoadSpec &l : c.loads)
    if (l.kind == LoadSpec::Pressure) return true;
  return false;
}

} // namespace

bool ShellModel::pressure_in_elements() const { return has_pressure(config_) && !unit_pressure_.extent(0); }

double Energies::balance_error() const {
  const double scale =
      std::max({std::abs(kinetic), std::abs(strain), std::abs(external), std::abs(damping), std::abs(initial), 1e-300});
  return std::abs(kinetic + strain + damping - external - initial) / scale;
}

ShellModel::ShellModel(const HostMesh &mesh, Config config) : host_mesh_(mesh), config_(std::move(config)) {
  if (mesh.type != ElementType::Shell4) throw InputError("explicit_shell needs a SHELL4 mesh");
  const Material &mat = config_.material;
  section_ = Section::make(mat.youngs_modulus, mat.poissons_ratio, mat.thickness, mat.shear_factor);
  mesh_ = upload(mesh);
  setup_nodes();
  setup_constraints();
  setup_loads();
  if (config_.scheme == Scheme::Standard && config_.scatter == Scatter::Coloring)
    coloring_ = color_elements(mesh_, build_node2elem(mesh_), config_.coloring);
  if (config_.scheme == Scheme::Fused) setup_fused();
  if (config_.scheme == Scheme::ElementLocal) setup_element_local();
  const bool local = config_.scheme == Scheme::ElementLocal;
  node_work_ = decltype(node_work_)("fegpu::shell::node_work", local ? 4 * mesh_.num_elems() : mesh_.num_nodes());
  element_work_ = RealView("fegpu::shell::element_work", pressure_in_elements() ? mesh_.num_elems() : 0);
  load_work_ = RealView("fegpu::shell::load_work", load_node_.extent(0));
}

void ShellModel::setup_nodes() {
  Kokkos::Profiling::ScopedRegion region("fegpu::shell::setup_nodes");
  const Index nn = mesh_.num_nodes(), ne = mesh_.num_elems();
  X_ = mesh_.coords;
  D_ = CoordView("fegpu::shell::D", nn);
  mass_ = RealView("fegpu::shell::mass", nn);
  rotary_ = RealView("fegpu::shell::rotary", nn);
  inv_mass_ = RealView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::shell::inv_mass"), nn);
  inv_rotary_ = RealView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::shell::inv_rotary"), nn);
  const auto X = X_, D = D_;
  const auto conn = mesh_.elem2node;
  const auto mass = mass_, rotary = rotary_, inv_mass = inv_mass_, inv_rotary = inv_rotary_;
  const double rho_h = config_.material.density * config_.material.thickness;
  const double h2 = config_.material.thickness * config_.material.thickness / 12.0;
  double dt_min = 0;
  const double c = std::sqrt(config_.material.youngs_modulus /
                             (config_.material.density * (1 - std::pow(config_.material.poissons_ratio, 2))));
  // Element normals summed at the nodes (directors), row-sum lumped masses, and the stable step.
  Kokkos::parallel_reduce(
      "fegpu::shell::element_setup", range(0, ne),
      KOKKOS_LAMBDA(Index e, double &dt) {
        Vec3 x[4];
        for (int k = 0; k < 4; ++k)
          x[k] = load(X, conn(e, k));
        const Vec3 d1 = x[2] - x[0], d2 = x[3] - x[1];
        const Vec3 nrm = cross(d1, d2);
        const double area = 0.5 * norm(nrm);
        const double L = area / Kokkos::max(norm(d1), norm(d2));
        dt = Kokkos::min(dt, L);
        // Rotary inertia: rho h (h^2 / 12), raised to rho h A / 8 for thin elements so that the
        // rotational modes do not limit the step (the seed's examples have h << element size).
        const double inertia = Kokkos::max(h2, area / 8.0);
        for (int q = 0; q < 4; ++q) {
          const GaussPoint gp = gauss_point(x, q);
          const double j = norm(cross(gp.a1, gp.a2));
          for (int k = 0; k < 4; ++k) {
            const double mk = rho_h * j * gp.N(k);
            Kokkos::atomic_add(&mass(conn(e, k)), mk);
            Kokkos::atomic_add(&rotary(conn(e, k)), mk * inertia);
          }
        }
        for (int k = 0; k < 4; ++k)
          for (int i = 0; i < 3; ++i)
            Kokkos::atomic_add(&D(conn(e, k), i), i == 0 ? nrm.x : (i == 1 ? nrm.y : nrm.z));
      },
      Kokkos::Min<double>(dt_min));
  dt_critical_ = dt_min / c;
  Kokkos::parallel_for(
      "fegpu::shell::normalise_directors", range(0, nn), KOKKOS_LAMBDA(Index n) {
        const Vec3 a = load(D, n);
        store(D, n, (1.0 / norm(a)) * a);
        inv_mass(n) = 1 / mass(n), inv_rotary(n) = 1 / rotary(n);
      });
  x_ = CoordView("fegpu::shell::x", nn);
  d_ = CoordView("fegpu::shell::d", nn);
  v_ = CoordView("fegpu::shell::v", nn);
  w_ = CoordView("fegpu::shell::w", nn);
  f_ = CoordView("fegpu::shell::f", nn);
  m_ = CoordView("fegpu::shell::m", nn);
  Kokkos::deep_copy(x_, X_);
  Kokkos::deep_copy(d_, D_);
  const auto v = v_;
  const Vec3 iv{config_.initial_velocity[0], config_.initial_velocity[1], config_.initial_velocity[2]};
  Kokkos::parallel_for(
      "fegpu::shell::initial_velocity", range(0, nn), KOKKOS_LAMBDA(Index n) { store(v, n, iv); });
}

void ShellModel::setup_constraints() {
  Kokkos::Profiling::ScopedRegion region("fegpu::shell::setup_constraints");
  const Index nn = mesh_.num_nodes();
  auto D = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), D_);
  std::vector<int> code(nn, 0), rot_axes(nn, 0);
  for (const ConstraintSpec &c : config_.constraints) {
    int slot = 0;
    if (c.kind != ConstraintSpec::Fixed) {
      if (prescribed_.size() >= kMaxPrescribed)
        throw InputError("explicit_shell: at most " + std::to_string(kMaxPrescribed) + " prescribed motions");
      prescribed_.push_back(static_cast<int>(&c - config_.constraints.data()));
      slot = static_cast<int>(prescribed_.size());
    }
    const auto nodes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mesh_.node_set(c.set).nodes);
    for (std::size_t i = 0; i < nodes.extent(0); ++i) {
      const Index n = nodes(i);
      for (int k = 0; k < 3; ++k) {
        if (c.translation[k]) {
          code[n] |= 1 << k;
          code[n] = (code[n] & ~(15 << (kSlotShift + 4 * k))) | (slot << (kSlotShift + 4 * k));
        }
        if (c.rotation[k]) rot_axes[n] |= 1 << k;
      }
    }
  }
  // On a symmetry plane the surface's normal lies in the plane; the averaged element normals miss
  // it by half an element's turn (one side only), which would also make the plane's rotation
  // condition clamp the node.
  bool projected = false;
  for (const ConstraintSpec &c : config_.constraints) {
    if (c.symmetry_normal < 0) continue;
    projected = true;
    const auto nodes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mesh_.node_set(c.set).nodes);
    for (std::size_t i = 0; i < nodes.extent(0); ++i) {
      const Index n = nodes(i);
      D(n, c.symmetry_normal) = 0;
      const double len = std::sqrt(D(n, 0) * D(n, 0) + D(n, 1) * D(n, 1) + D(n, 2) * D(n, 2));
      if (len < 1e-8)
        throw InputError("explicit_shell: the shell lies in the symmetry plane of node set '" + c.set + "'");
      for (int k = 0; k < 3; ++k)
        D(n, k) /= len;
    }
  }
  if (projected) {
    Kokkos::deep_copy(D_, D);
    Kokkos::deep_copy(d_, D_);
  }
  // Fixed global rotation axes -> the node's allowed rotations: the angular velocity lies in the
  // tangent plane and must be orthogonal to the tangent projections t_i of the fixed axes.
  std::vector<std::array<double, 3>> axes;
  std::map<std::array<long long, 3>, int> axis_index;
  for (Index n = 0; n < nn; ++n) {
    if (!rot_axes[n]) continue;
    const double d[3] = {D(n, 0), D(n, 1), D(n, 2)};
    std::vector<std::array<double, 3>> t;
    for (int k = 0; k < 3; ++k) {
      if (!((rot_axes[n] >> k) & 1)) continue;
      std::array<double, 3> e{};
      e[k] = 1;
      for (int i = 0; i < 3; ++i)
        e[i] -= d[k] * d[i];
      const double len = std::sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
      if (len < 1e-8) continue; // the axis is the director: a drilling rotation, not a dof
      for (double &x : e)
        x /= len;
      bool parallel = false;
      for (const auto &u : t)
        parallel = parallel || std::abs(u[0] * e[0] + u[1] * e[1] + u[2] * e[2]) > 1 - 1e-8;
      if (!parallel) t.push_back(e);
    }
    if (t.empty()) continue;
    if (t.size() >= 2) {
      code[n] |= kRotFixed << 3;
      continue;
    }
    // Allowed: d x t.
    std::array<double, 3> a = {d[1] * t[0][2] - d[2] * t[0][1], d[2] * t[0][0] - d[0] * t[0][2],
                               d[0] * t[0][1] - d[1] * t[0][0]};
    const double len = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    for (double &x : a)
      x /= len;
    const std::array<long long, 3> key = {std::llround(a[0] * 1e9), std::llround(a[1] * 1e9), std::llround(a[2] * 1e9)};
    auto it = axis_index.find(key);
    if (it == axis_index.end()) {
      if (axes.size() >= (1u << kAxisBits))
        throw InputError("explicit_shell: too many distinct single-axis rotation constraints");
      it = axis_index.emplace(key, static_cast<int>(axes.size())).first;
      axes.push_back(a);
    }
    code[n] |= (kRotAxis << 3) | (it->second << kAxisShift);
  }
  code_ = IndexView("fegpu::shell::constraint_code", nn);
  Kokkos::deep_copy(code_, Kokkos::View<const int *, Kokkos::HostSpace>(code.data(), nn));
  axes_ = CoordView("fegpu::shell::rotation_axes", std::max<std::size_t>(axes.size(), 1));
  auto ah = Kokkos::create_mirror_view(axes_);
  for (std::size_t i = 0; i < axes.size(); ++i)
    for (int k = 0; k < 3; ++k)
      ah(i, k) = axes[i][k];
  Kokkos::deep_copy(axes_, ah);
}

void ShellModel::setup_loads() {
  Kokkos::Profiling::ScopedRegion region("fegpu::shell::setup_loads");
  std::vector<Index> node;
  std::vector<double> value;
  std::vector<Index> index;
  int pressure_follower = -1;
  const HostMesh &h = host_mesh_;
  const Index nn = static_cast<Index>(h.xyz.size() / 3);
  for (std::size_t l = 0; l < config_.loads.size(); ++l) {
    const LoadSpec &s = config_.loads[l];
    const auto push = [&](Index n, double scale) {
      node.push_back(n);
      for (int i = 0; i < 3; ++i)
        value.push_back(s.value[i] * scale);
      index.push_back(static_cast<Index>(l));
    };
    switch (s.kind) {
    case LoadSpec::Pressure:
      if (pressure_follower >= 0 && pressure_follower != int(s.follower))
        throw InputError("explicit_shell: pressure loads must all be follower loads or all fixed-direction loads");
      pressure_follower = s.follower;
      break;
    case LoadSpec::Force:
      if (s.at_point) {
        push(nearest_node(mesh_.coords, s.point), 1.0);
      } else {
        for (const auto &set : h.node_sets)
          if (set.name == s.set)
            for (Index n : set.a)
              push(n, 1.0);
      }
      break;
    case LoadSpec::EdgeTraction: {
      // Traction (force per area of the edge's cross-section) times thickness times half the
      // edge length on each end node.
      for (const auto &set : h.side_sets) {
        if (set.name != s.set) continue;
        for (std::size_t i = 0; i < set.a.size(); ++i) {
          const Index e = set.a[i];
          const int f = static_cast<int>(set.b[i]);
          const Index a = h.conn[4 * e + f], b = h.conn[4 * e + (f + 1) % 4];
          double len = 0;
          for (int k = 0; k < 3; ++k)
            len += std::pow(h.xyz[3 * a + k] - h.xyz[3 * b + k], 2);
          const double w = 0.5 * std::sqrt(len) * config_.material.thickness;
          push(a, w);
          push(b, w);
        }
      }
      break;
    }
    case LoadSpec::BodyForce: {
      auto mass = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mass_);
      for (Index n = 0; n < nn; ++n)
        push(n, mass(n));
      break;
    }
    }
  }
  if (config_.loads.size() > kMaxLoads)
    throw InputError("explicit_shell: at most " + std::to_string(kMaxLoads) + " loads");
  const Index n = static_cast<Index>(node.size());
  load_node_ = IndexView("fegpu::shell::load_node", n);
  load_index_ = IndexView("fegpu::shell::load_index", n);
  load_value_ = CoordView("fegpu::shell::load_value", n);
  auto nh = Kokkos::create_mirror_view(load_node_);
  auto ih = Kokkos::create_mirror_view(load_index_);
  auto vh = Kokkos::create_mirror_view(load_value_);
  for (Index i = 0; i < n; ++i) {
    nh(i) = node[i], ih(i) = index[i];
    for (int k = 0; k < 3; ++k)
      vh(i, k) = value[3 * i + k];
  }
  Kokkos::deep_copy(load_node_, nh);
  Kokkos::deep_copy(load_index_, ih);
  Kokkos::deep_copy(load_value_, vh);
  // The standard and fused schemes apply a fixed-direction pressure at the nodes: its consistent force is
  // p(t) times a constant vector, so the element kernel does not recompute it every step.
  if (config_.scheme == Scheme::ElementLocal || pressure_follower != 0) return;
  unit_pressure_ = CoordView("fegpu::shell::unit_pressure", nn);
  const CoordView X = X_, u = unit_pressure_;
  const auto conn = mesh_.elem2node;
  Kokkos::parallel_for(
      "fegpu::shell::unit_pressure", range(0, mesh_.num_elems()), KOKKOS_LAMBDA(Index e) {
        Vec3 x[4], f[4];
        for (int k = 0; k < 4; ++k)
          x[k] = load(X, conn(e, k));
        pressure_forces(x, 1.0, f);
        for (int k = 0; k < 4; ++k)
          atomic_add(u, conn(e, k), f[k]);
      });
}

void ShellModel::setup_element_local() {
  Kokkos::Profiling::ScopedRegion region("fegpu::shell::setup_element_local");
  const Index ne = mesh_.num_elems(), nn = mesh_.num_nodes(), nc = 4 * ne;
  const Crs n2e = build_node2elem(mesh_);
  Copies &c = copies_;
  const auto conn = mesh_.elem2node;
  // The most elements at one node.
  int valence = 0;
  const auto off = n2e.offsets;
  Kokkos::parallel_reduce(
      "fegpu::shell::valence", range(0, nn),
      KOKKOS_LAMBDA(Index n, int &v) { v = Kokkos::max(v, off(n + 1) - off(n)); }, Kokkos::Max<int>(valence));
  c.peers = decltype(c.peers)("fegpu::shell::copy_peers", nc, valence);
  const auto names = std::array<const char *, 6>{"X", "D", "x", "d", "v", "w"};
  CoordView *fields[6] = {&c.X, &c.D, &c.x, &c.d, &c.v, &c.w};
  const CoordView sources[6] = {X_, D_, x_, d_, v_, w_};
  for (int i = 0; i < 6; ++i)
    *fields[i] = CoordView(std::string("fegpu::shell::copy_") + names[i], nc);
  for (int b = 0; b < 2; ++b) {
    c.f[b] = CoordView("fegpu::shell::copy_f", nc);
    c.m[b] = CoordView("fegpu::shell::copy_m", nc);
  }
  c.inv_mass = RealView("fegpu::shell::copy_inv_mass", nc);
  c.inv_rotary = RealView("fegpu::shell::copy_inv_rotary", nc);
  c.code = IndexView("fegpu::shell::copy_code", nc);
  owner_copy_ = IndexView("fegpu::shell::owner_copy", nn);
  const auto idx = n2e.indices;
  const auto peers = c.peers;
  const IndexView code = c.code, code_n = code_, owner = owner_copy_;
  const RealView cm = c.inv_mass, cr = c.inv_rotary, im = inv_mass_, ir = inv_rotary_;
  const CoordView dst[6] = {c.X, c.D, c.x, c.d, c.v, c.w};
  Kokkos::parallel_for(
      "fegpu::shell::build_copies", range(0, nc), KOKKOS_LAMBDA(Index cp) {
        const Index e = cp % ne;
        const int k = cp / ne;
        const Index n = conn(e, k);
        // Copies of n in ascending element order (node2elem is ascending).
        int j = 0;
        for (Index o = off(n); o < off(n + 1); ++o) {
          const Index e2 = idx(o);
          for (int k2 = 0; k2 < 4; ++k2)
            if (conn(e2, k2) == n) peers(cp, j++) = k2 * ne + e2;
        }
        for (; j < static_cast<int>(peers.extent(1)); ++j)
          peers(cp, j) = -1;
        if (peers(cp, 0) == cp) owner(n) = cp;
        code(cp) = code_n(n);
        cm(cp) = im(n), cr(cp) = ir(n);
        for (int i = 0; i < 6; ++i)
          for (int q = 0; q < 3; ++q)
            dst[i](cp, q) = sources[i](n, q);
      });
  // Nodal loads go to the node's first copy.
  const auto ln = load_node_;
  Kokkos::parallel_for(
      "fegpu::shell::load_copies", range(0, static_cast<Index>(ln.extent(0))),
      KOKKOS_LAMBDA(Index i) { ln(i) = owner(ln(i)); });
  // The node arrays are not used by this scheme's time loop.
  x_ = d_ = v_ = w_ = f_ = m_ = CoordView();
}

void ShellModel::setup_fused() {
  Kokkos::Profiling::ScopedRegion region("fegpu::shell::setup_fused");
  const Index ne = mesh_.num_elems(), nn = mesh_.num_nodes();
  Spare &s = spare_;
  s.owned = IndexView("fegpu::shell::owned_nodes", ne);
  const Crs n2e = build_node2elem(mesh_);
  const auto off = n2e.offsets, idx = n2e.indices;
  const auto conn = mesh_.elem2node;
  FEGPU_CHECK(conn.extent(1) == 4, "the fused scheme needs a SHELL4 mesh"); // FusedStep reads conn by Rows
  const IndexView owned = s.owned;
  Kokkos::parallel_for(
      "fegpu::shell::owned_nodes", range(0, ne), KOKKOS_LAMBDA(Index e) {
        int bits = 0;
        for (int k = 0; k < 4; ++k) // a node's first element (node2elem is ascending) stores it
          if (idx(off(conn(e, k))) == e) bits |= 1 << k;
        owned(e) = bits;
      });
  const char *names[4] = {"x", "d", "v", "w"};
  CoordView *spare[4] = {&s.x, &s.d, &s.v, &s.w};
  const CoordView current[4] = {x_, d_, v_, w_};
  for (int i = 0; i < 4; ++i) {
    *spare[i] =
        CoordView(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("fegpu::shell::spare_") + names[i]), nn);
    Kokkos::deep_copy(*spare[i], current[i]); // nodes in no element keep their state
  }
  // The elements' reference terms, computed as GeometryReference computes them every step.
  s.reference = ReferenceView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::shell::reference_terms"), ne);
  const Rows elems{ne};
  double *const ref = elems.data(s.reference);
  const CoordView X = X_, D = D_;
  Kokkos::parallel_for(
      "fegpu::shell::reference_terms", range(0, ne), KOKKOS_LAMBDA(Index e) {
        Vec3 Xe[4], De[4];
        for (int k = 0; k < 4; ++k)
          Xe[k] = load(X, conn(e, k)), De[k] = load(D, conn(e, k));
        StoredReference{ref, elems, e}.store(GeometryReference{Xe, De});
      });
  s.f_next = CoordView("fegpu::shell::f_next", nn), s.m_next = CoordView("fegpu::shell::m_next", nn);
  s.f_after = CoordView("fegpu::shell::f_after", nn), s.m_after = CoordView("fegpu::shell::m_after", nn);
}

double ShellModel::bytes_per_element() const {
  double bytes = 0;
  const auto add = [&](const auto &v) {
    bytes += static_cast<double>(v.span()) * sizeof(typename std::decay_t<decltype(v)>::value_type);
  };
  if (config_.scheme != Scheme::ElementLocal) {
    for (const CoordView *v : {&X_, &D_, &x_, &d_, &v_, &w_, &f_, &m_})
      add(*v);
    add(inv_mass_), add(inv_rotary_), add(mass_), add(rotary_), add(code_), add(mesh_.elem2node), add(unit_pressure_);
    if (config_.scheme == Scheme::Standard && config_.scatter == Scatter::Coloring) add(coloring_.color2elem.indices);
    const Spare &s = spare_;
    for (const CoordView *v : {&s.x, &s.d, &s.v, &s.w, &s.f_next, &s.m_next, &s.f_after, &s.m_after})
      add(*v);
    add(s.owned), add(s.reference);
  } else {
    const Copies &c = copies_;
    for (const CoordView *v : {&c.X, &c.D, &c.x, &c.d, &c.v, &c.w, &c.f[0], &c.f[1], &c.m[0], &c.m[1]})
      add(*v);
    add(c.inv_mass), add(c.inv_rotary), add(c.code), add(c.peers);
  }
  add(load_node_), add(load_index_), add(load_value_), add(node_work_), add(element_work_), add(load_work_);
  return bytes / mesh_.num_elems();
}

StepParams ShellModel::params() const {
  StepParams p;
  p.dt = dt_;
  p.first_half = steps_ == 0 ? 0.0 : 0.5 * dt_;
  p.alpha = config_.damping;
  p.damp = 1 / (1 + p.alpha * p.first_half);
  p.inv_dt = 1 / dt_, p.inv_step = 1 / (p.first_half + 0.5 * dt_);
  p.blend = p.first_half / (p.first_half + 0.5 * dt_);
  const double t_old = time_, t_new = time_ + dt_;
  for (const LoadSpec &l : config_.loads)
    if (l.kind == LoadSpec::Pressure) {
      p.pressure_old += l.pressure * l.function.value(t_old);
      p.pressure_new += l.pressure * l.function.value(t_new);
      p.pressure_after += l.pressure * l.function.value(t_new + dt_);
    }
  for (std::size_t s = 0; s < prescribed_.size(); ++s) {
    const ConstraintSpec &c = config_.constraints[prescribed_[s]];
    p.displacement[s] = c.kind == ConstraintSpec::Displacement;
    const double f = p.displacement[s] ? c.function.value(t_new) : c.function.value(t_old + 0.5 * dt_);
    for (int i = 0; i < 3; ++i)
      p.target[s][i] = c.value[i] * f;
  }
  return p;
}

template <class Kernel> Kernel ShellModel::kernel(const StepParams &p) const {
  Kernel k;
  k.p = p;
  if constexpr (std::is_base_of_v<NodeArrays, Kernel>) {
    const Rows r{mesh_.num_nodes()};
    k.nodes = r;
    k.X = r.data(X_), k.x = r.data(x_), k.d = r.data(d_), k.v = r.data(v_), k.w = r.data(w_);
    k.f = r.data(f_), k.m = r.data(m_), k.unit_pressure = r.data(unit_pressure_);
    k.inv_mass = r.data(inv_mass_), k.inv_rotary = r.data(inv_rotary_), k.work = r.data(node_work_);
    k.mass = r.data(mass_), k.rotary = r.data(rotary_);
    k.code = r.data(code_), k.axes = axes_;
  } else if constexpr (std::is_same_v<Kernel, LocalStep>) {
    const Copies &c = copies_;
    k.ne = mesh_.num_elems(), k.num_peers = static_cast<int>(c.peers.extent(1));
    k.X = c.X, k.D = c.D, k.x = c.x, k.d = c.d, k.v = c.v, k.w = c.w, k.axes = axes_;
    k.f_in = c.f[c.current], k.m_in = c.m[c.current], k.f_out = c.f[1 - c.current], k.m_out = c.m[1 - c.current];
    k.inv_mass = c.inv_mass, k.inv_rotary = c.inv_rotary, k.work = element_work_, k.code = c.code,
    k.node_work = node_work_;
    k.peers = c.peers;
    k.s = section_, k.follower = follower_pressure(config_), k.with_work = has_pressure(config_);
  } else {
    k.conn = mesh_.elem2node;
    k.X = X_, k.D = D_, k.x = x_, k.d = d_, k.v = v_, k.f = f_, k.m = m_, k.work = element_work_;
    k.s = section_, k.follower = follower_pressure(config_), k.with_work = has_pressure(config_);
  }
  return k;
}

template <bool Atomic, bool Pressure> void ShellModel::forces_standard(const StepParams &p, bool with_work) {
  auto k = kernel<StandardElements<Atomic, Pressure>>(p);
  k.with_work = k.with_work && with_work;
  if constexpr (Atomic) {
    step_for("fegpu::shell::element_forces", mesh_.num_elems(), k);
  } else {
    k.elems = coloring_.color2elem.indices;
    for (int c = 0; c < coloring_.num_colors; ++c) {
      k.offset = coloring_.offsets_h[c];
      step_for("fegpu::shell::element_forces", coloring_.size(c), k);
    }
  }
}

void ShellModel::forces_standard(const StepParams &p, bool with_work) {
  const bool pressure = pressure_in_elements();
  const bool atomic = config_.scatter == Scatter::Atomic || config_.scheme == Scheme::Fused;
  if (atomic && pressure) return forces_standard<true, true>(p, with_work);
  if (atomic) return forces_standard<true, false>(p, with_work);
  if (pressure) return forces_standard<false, true>(p, with_work);
  forces_standard<false, false>(p, with_work);
}

template <bool Pressure> void ShellModel::step_fused(const StepParams &p) {
  auto k = kernel<FusedStep<Pressure>>(p);
  Spare &s = spare_;
  const Rows r = k.nodes, e{mesh_.num_elems()};
  k.elems = e, k.conn = e.data(mesh_.elem2node), k.owned = e.data(s.owned);
  k.x_out = r.data(s.x), k.d_out = r.data(s.d), k.v_out = r.data(s.v), k.w_out = r.data(s.w);
  k.f_next = r.data(s.f_next), k.m_next = r.data(s.m_next), k.f_after = r.data(s.f_after);
  k.m_after = r.data(s.m_after), k.element_work = e.data(element_work_), k.reference = e.data(s.reference);
  k.s = section_, k.follower = follower_pressure(config_), k.with_work = has_pressure(config_);
  step_for("fegpu::shell::fused_step", mesh_.num_elems(), k);
  std::swap(x_, s.x), std::swap(d_, s.d), std::swap(v_, s.v), std::swap(w_, s.w);
  // Forces: those at t(n+1) become current, those reset for t(n+2) next; the ones at t(n) are
  // reset by the next step.
  std::swap(f_, s.f_next), std::swap(s.f_next, s.f_after);
  std::swap(m_, s.m_next), std::swap(s.m_next, s.m_after);
}

void ShellModel::apply_nodal_loads() {
  const Index n = static_cast<Index>(load_node_.extent(0));
  if (n == 0) return;
  NodalLoads k;
  k.target = load_node_, k.index = load_index_, k.value = load_value_, k.work = load_work_;
  const bool local = config_.scheme == Scheme::ElementLocal;
  k.f = local ? copies_.f[copies_.current] : f_;
  k.v = local ? copies_.v : v_;
  k.dt = dt_;
  k.with_work = steps_ > 0;
  for (std::size_t l = 0; l < config_.loads.size(); ++l) {
    k.scale_old[l] = config_.loads[l].function.value(time_ - (steps_ > 0 ? dt_ : 0.0));
    k.scale_new[l] = config_.loads[l].function.value(time_);
  }
  step_for("fegpu::shell::nodal_loads", n, k);
}

void ShellModel::start(double dt) {
  Kokkos::Profiling::ScopedRegion region("fegpu::shell::start");
  dt_ = dt;
  time_ = 0;
  steps_ = 0;
  Kokkos::deep_copy(node_work_, 0.0);
  Kokkos::deep_copy(element_work_, 0.0);
  Kokkos::deep_copy(load_work_, 0.0);
  StepParams p = params();
  // The fused scheme's first step sums into forces reset here, at t(1).
  if (config_.scheme == Scheme::Fused) reset_forces(spare_.f_next, spare_.m_next, unit_pressure_, p.pressure_new);
  p.pressure_old = p.pressure_new = 0;
  for (const LoadSpec &l : config_.loads)
    if (l.kind == LoadSpec::Pressure) p.pressure_new += l.pressure * l.function.value(0.0);
  if (config_.scheme != Scheme::ElementLocal) {
    reset_forces(f_, m_, unit_pressure_, p.pressure_new);
    forces_standard(p, false);
  } else {
    auto k = kernel<LocalStep>(p);
    k.f_out = copies_.f[copies_.current], k.m_out = copies_.m[copies_.current];
    k.update = false, k.with_work = false;
    step_for("fegpu::shell::initial_forces", mesh_.num_elems(), k);
  }
  apply_nodal_loads();
  initial_energy_ = 0;
  const Energies e = energies();
  initial_energy_ = e.kinetic + e.strain;
}

void ShellModel::step() {
  const StepParams p = params();
  if (config_.scheme == Scheme::Standard) {
    step_for("fegpu::shell::node_update", mesh_.num_nodes(), kernel<StandardNodes>(p));
  } else if (config_.scheme == Scheme::Fused) {
    if (pressure_in_elements())
      step_fused<true>(p);
    else
      step_fused<false>(p);
  } else {
    step_for("fegpu::shell::element_local_step", mesh_.num_elems(), kernel<LocalStep>(p));
    copies_.current = 1 - copies_.current;
  }
  time_ += dt_;
  ++steps_;
  apply_nodal_loads();
  if (config_.scheme == Scheme::Standard) forces_standard(p, true);
}

Energies ShellModel::energies() const {
  // The next node update's terms at t(n+1), as that update will find them, without taking it.
  const StepParams p = params();
  const bool local = config_.scheme == Scheme::ElementLocal;
  const Index ne = mesh_.num_elems();
  const EnergySums nodes =
      local ? sum_energies("fegpu::shell::node_energies", 4 * ne, kernel<LocalStep>(p))
            : sum_energies("fegpu::shell::node_energies", mesh_.num_nodes(), kernel<StandardNodes>(p));
  double strain = 0, pressure_work = 0, load_work = 0;
  const auto conn = mesh_.elem2node;
  const auto X = X_, D = D_, x = local ? copies_.x : x_, d = local ? copies_.d : d_;
  const Section s = section_;
  Kokkos::parallel_reduce(
      "fegpu::shell::strain_energy", range(0, ne),
      KOKKOS_LAMBDA(Index e, double &sum) {
        Vec3 xe[4], de[4], Xe[4], De[4], fx[4], fd[4];
        gather_element(e, ne, local, conn, x, d, X, D, xe, de, Xe, De);
        sum += internal_forces(xe, de, Xe, De, s, fx, fd);
      },
      strain);
  const auto sum_view = [](const RealView &v) {
    double total = 0;
    Kokkos::parallel_reduce(
        "fegpu::shell::work", range(0, static_cast<Index>(v.extent(0))),
        KOKKOS_LAMBDA(Index i, double &t) { t += v(i); }, total);
    return total;
  };
  pressure_work = sum_view(element_work_);
  load_work = sum_view(load_work_);
  Energies e;
  e.kinetic = nodes.kinetic, e.strain = strain, e.damping = nodes.damping, e.initial = initial_energy_;
  e.external = pressure_work + load_work + nodes.external;
  return e;
}

void ShellModel::nodal_state(std::vector<double> &displacement, std::vector<double> &rotation,
                             std::vector<double> &velocity) const {
  const Index nn = mesh_.num_nodes();
  CoordView x = x_, d = d_, v = v_;
  if (config_.scheme == Scheme::ElementLocal) {
    x = CoordView("fegpu::shell::out_x", nn), d = CoordView("fegpu::shell::out_d", nn),
    v = CoordView("fegpu::shell::out_v", nn);
    const IndexView owner = owner_copy_;
    const CoordView cx = copies_.x, cd = copies_.d, cv = copies_.v;
    Kokkos::parallel_for(
        "fegpu::shell::gather_owners", range(0, nn), KOKKOS_LAMBDA(Index n) {
          const Index c = owner(n);
          store(x, n, load(cx, c)), store(d, n, load(cd, c)), store(v, n, load(cv, c));
        });
  }
  auto xh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  auto dh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
  auto vh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  auto Xh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), X_);
  auto Dh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), D_);
  displacement.assign(3 * nn, 0), rotation.assign(3 * nn, 0), velocity.assign(3 * nn, 0);
  for (Index n = 0; n < nn; ++n) {
    const Vec3 D{Dh(n, 0), Dh(n, 1), Dh(n, 2)}, dn{dh(n, 0), dh(n, 1), dh(n, 2)};
    const Vec3 axis = cross(D, dn);
    const double s = norm(axis), angle = std::atan2(s, dot(D, dn));
    for (int i = 0; i < 3; ++i) {
      displacement[3 * n + i] = xh(n, i) - Xh(n, i);
      velocity[3 * n + i] = vh(n, i);
    }
    if (s > 0)
      rotation[3 * n] = angle * axis.x / s, rotation[3 * n + 1] = angle * axis.y / s,
                   rotation[3 * n + 2] = angle * axis.z / s;
  }
}

void ShellModel::element_output(std::vector<std::array<double, 6>> &membrane,
                                std::vector<std::array<double, 6>> &moment, std::vector<double> &mises_top,
                                std::vector<double> &mises_bottom) const {
  const Index ne = mesh_.num_elems();
  DeviceView<Real *[14]> out("fegpu::shell::element_output", ne);
  const bool local = config_.scheme == Scheme::ElementLocal;
  const auto conn = mesh_.elem2node;
  const auto X = X_, D = D_, x = local ? copies_.x : x_, d = local ? copies_.d : d_;
  const Section s = section_;
  const double h = config_.material.thickness;
  Kokkos::parallel_for(
      "fegpu::shell::element_resultants", range(0, ne), KOKKOS_LAMBDA(Index e) {
        Vec3 xe[4], de[4], Xe[4], De[4], fx[4], fd[4];
        gather_element(e, ne, local, conn, x, d, X, D, xe, de, Xe, De);
        Resultants r;
        internal_forces(xe, de, Xe, De, s, fx, fd, &r);
        // Push forward with the current tangents at the centre: N = n^ab a_a (x) a_b.
        const Vec3 a1 = 0.25 * ((xe[1] - xe[0]) + (xe[2] - xe[3])), a2 = 0.25 * ((xe[3] - xe[0]) + (xe[2] - xe[1]));
        double T[2][3][3];
        for (int t = 0; t < 2; ++t) {
          const double *c = t == 0 ? r.n : r.m;
          const double A[3] = {a1.x, a1.y, a1.z}, B[3] = {a2.x, a2.y, a2.z};
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
              T[t][i][j] = c[0] * A[i] * A[j] + c[1] * (A[i] * B[j] + B[i] * A[j]) + c[2] * B[i] * B[j];
        }
        const int I[6] = {0, 1, 2, 0, 1, 2}, J[6] = {0, 1, 2, 1, 2, 0};
        for (int q = 0; q < 6; ++q)
          out(e, q) = T[0][I[q]][J[q]], out(e, 6 + q) = T[1][I[q]][J[q]];
        for (int side = 0; side < 2; ++side) {
          double S[3][3];
          const double sign = side == 0 ? 1.0 : -1.0;
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
              S[i][j] = T[0][i][j] / h + sign * 6 * T[1][i][j] / (h * h);
          const double tr = (S[0][0] + S[1][1] + S[2][2]) / 3;
          double ss = 0;
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
              const double dev = S[i][j] - (i == j ? tr : 0.0);
              ss += dev * dev;
            }
          out(e, 12 + side) = Kokkos::sqrt(1.5 * ss);
        }
      });
  auto oh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  membrane.resize(ne), moment.resize(ne), mises_top.resize(ne), mises_bottom.resize(ne);
  for (Index e = 0; e < ne; ++e) {
    for (int q = 0; q < 6; ++q)
      membrane[e][q] = oh(e, q), moment[e][q] = oh(e, 6 + q);
    mises_top[e] = oh(e, 12), mises_bottom[e] = oh(e, 13);
  }
}

} // namespace fegpu::shell
