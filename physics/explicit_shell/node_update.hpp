#pragma once
/// \file node_update.hpp
/// The shells' node update as device code (the standard scheme's node kernel; the fused and
/// element-local schemes run the same update inside their element kernels): the half-station
/// central difference of positions, directors and angular velocities, the constraint codes, the
/// energy terms each node integrates in place, and the nodal loads.
#include "shell_model.hpp"

#include <type_traits>

namespace fegpu::shell {

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

/// The node arrays of the standard and fused schemes (raw, see Rows), and the update of one node
/// from them. Every array but the prescribed rotation axes has one entry per node.
struct NodeArrays {
  Rows nodes;
  Index owned_count;                 // nodes [0, owned_count) are this rank's: the others' forces start from zero
  double *X, *x, *d, *v, *w, *f, *m; // state and forces at t(n)
  double *unit_pressure;             // fixed-direction pressure's force per unit pressure, or null
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
    // The forces at t(n+1) start from the fixed pressure then (on the owner: the exchange sums).
    const Vec3 start = nodal_pressure(n, p.pressure_new, vn);
    r.store(f, n, n < owned_count ? start : Vec3{}), r.store(m, n, Vec3{});
  }
  KOKKOS_INLINE_FUNCTION void operator()(Index n, EnergySums &s) const {
    Vec3 xn, dn, vn, wn;
    NodeEnergy e;
    advance_node(n, xn, dn, vn, wn, e, true);
    measure(work[nodes.at<2>(n, 0)], work[nodes.at<2>(n, 1)], e, s);
  }
};

/// Nodal loads f(t) * value added to their node (or first copy), with their work over the step:
/// one thread a node, its entries summed in their order, then added (no atomics: repeatable).
struct NodalLoads {
  IndexView start, target, index; // start: (node with loads + 1); the others (entry)
  CoordView value, f, v;
  RealView work; // (entry)
  double scale_old[kMaxLoads] = {}, scale_new[kMaxLoads] = {};
  double dt = 0;
  bool with_work = false;
  KOKKOS_INLINE_FUNCTION void operator()(Index g) const {
    const Index t = target(start(g));
    const Vec3 vt = load(v, t);
    Vec3 sum{0, 0, 0};
    for (Index i = start(g); i < start(g + 1); ++i) {
      const Vec3 val = load(value, i);
      const double sn = scale_new[index(i)];
      sum = sum + sn * val;
      if (with_work) work(i) += 0.5 * (scale_old[index(i)] + sn) * dt * dot(val, vt);
    }
    store(f, t, load(f, t) + sum);
  }
};

} // namespace fegpu::shell
