/// \file elastic_kernels.cpp
/// The elastodynamics kernels (elastic_kernels.hpp). Launched from named functions: nvcc accepts
/// no device lambda inside a generic lambda, and none in a private member.
#include "elastic_kernels.hpp"

#include "fegpu/core/error.hpp"
#include "fegpu/core/simd.hpp"

#include <type_traits>

namespace fegpu::elastic {

namespace {

/// The solid elements by node count: T3 (3), T6 (6) in 2D; TET4 (4), TET10 (10) in 3D. Every
/// kernel below is written once over these; triangle.hpp and tetrahedron.hpp hold the maths.
template <int N> constexpr int kDim = (N == 4 || N == 10) ? 3 : 2;

template <int N> struct Solid {
  static constexpr int D = kDim<N>;
  ConnView conn;
  CoordView xyz;
  KOKKOS_INLINE_FUNCTION void coords(Index e, double x[D][N]) const {
    for (int a = 0; a < N; ++a) {
      const Index n = conn(e, a);
      for (int i = 0; i < D; ++i)
        x[i][a] = xyz(n, i);
    }
  }
  KOKKOS_INLINE_FUNCTION void field(Index e, const DofView &u, double ux[D][N]) const {
    for (int a = 0; a < N; ++a) {
      const Index n = conn(e, a);
      for (int i = 0; i < D; ++i)
        ux[i][a] = u(n, i);
    }
  }
  /// Internal force; optionally the mean stress (2D: xx, yy, xy; 3D: xx, yy, zz, xy, yz, xz), the
  /// strain energy and, with the stress, the element's measure (area or volume). T: double, or a
  /// pack of elements (simd.hpp). Straight: a tetrahedron's Jacobian from its corners
  /// (tet::straight holds for it).
  template <bool Straight = false, class T>
  KOKKOS_INLINE_FUNCTION static void force(const Material &m, const T x[D][N], const T u[D][N], T f[D][N],
                                           T *s = nullptr, std::type_identity_t<T> *w = nullptr,
                                           std::type_identity_t<T> *measure = nullptr) {
    if constexpr (D == 2)
      internal_force<N>(m, x[0], x[1], u[0], u[1], f[0], f[1], s, w, measure);
    else
      tet::internal_force<N, T, Straight>(m, x, u, f, s, w, measure);
  }
  /// The element's area (2D) or volume (3D), and its smallest det J.
  KOKKOS_INLINE_FUNCTION static double measure(const double x[D][N], double &min_det) {
    if constexpr (D == 2)
      return area<N>(x[0], x[1], min_det);
    else
      return tet::volume<N>(x, min_det);
  }
  /// The element's mass, and its smallest det J.
  KOKKOS_INLINE_FUNCTION static double mass(const Material &m, const double x[D][N], double &min_det) {
    return m.density * (D == 2 ? m.thickness : 1.0) * measure(x, min_det);
  }
  KOKKOS_INLINE_FUNCTION static double mass_fraction(int a) {
    if constexpr (D == 2)
      return elastic::mass_fraction<N>(a);
    else
      return tet::mass_fraction<N>(a);
  }
  /// The output's element fields from the mean stress s and strain energy w (2D: xx, yy, xy, zz,
  /// von Mises, energy; 3D: xx, yy, zz, xy, yz, xz, von Mises, energy); returns their number.
  /// Apart from the kernel: nvcc refuses a lambda's first capture inside `if constexpr`.
  KOKKOS_INLINE_FUNCTION static int output_fields(const Material &m, const double s[6], double w, double v[8]) {
    if constexpr (D == 2) {
      const double sxx = s[0], syy = s[1], sxy = s[2];
      // Plane strain: sigma_zz = lambda (eps_xx + eps_yy) = nu (sigma_xx + sigma_yy).
      const double nu = m.lambda_3d / (2 * (m.lambda_3d + m.mu));
      const double szz = m.plane_stress ? 0.0 : nu * (sxx + syy);
      v[0] = sxx, v[1] = syy, v[2] = sxy, v[3] = szz;
      v[4] = Kokkos::sqrt(0.5 * ((sxx - syy) * (sxx - syy) + (syy - szz) * (syy - szz) + (szz - sxx) * (szz - sxx)) +
                          3 * sxy * sxy);
      v[5] = w;
      return 6;
    } else {
      for (int k = 0; k < 6; ++k)
        v[k] = s[k];
      v[6] = Kokkos::sqrt(
          0.5 * ((s[0] - s[1]) * (s[0] - s[1]) + (s[1] - s[2]) * (s[1] - s[2]) + (s[2] - s[0]) * (s[2] - s[0])) +
          3 * (s[3] * s[3] + s[4] * s[4] + s[5] * s[5]));
      v[7] = w;
      return 8;
    }
  }
  KOKKOS_INLINE_FUNCTION static double max_eigenvalue(const Material &m, const double x[D][N]) {
    if constexpr (D == 2)
      return elastic::max_eigenvalue<N>(m, x[0], x[1]);
    else
      return tet::max_eigenvalue<N>(m, x);
  }
};

/// Straight: every element's Jacobian from its corners (a mesh of straight-edged TET10). Stress:
/// also the element's mean stress times its measure, added at its nodes as components D, D + 1, ...
/// of the target (JoinedFields: the force, then the stresses), or without Force as components 0,
/// 1, ...: the fracture module's nodal stresses, in the force's own pass or a pass of their own.
/// Screen: the element's mean stress against its nodes' bounds instead (ElementScreen).
template <int N, bool Straight = false, bool Stress = false, bool Force = true, bool Screen = false>
struct InternalForce {
  static constexpr int D = Solid<N>::D, NS = D == 2 ? 3 : 6, C = (Force ? D : 0) + (Stress ? NS : 0);
  // scatter.hpp's LocalAdds, where a team's shares fit the 48 KB of its scratch: the GPU plan's
  // chunks of 128 tetrahedra (coloring.cpp) of C components (TET10's 9 or 6 do not).
  static constexpr bool local_adds = std::size_t(128) * N * C * sizeof(double) <= 48 * 1024;
  static constexpr int npe = N, components = C;
  // TET10's teams: at least 5 a multiprocessor, so at most 102 registers a thread (128 unbounded,
  // 4 teams): 3.22 -> 3.06 ms a step at 10M on an H200; 6 teams spill and take 3.35 ms. Measured
  // with the four-point kernel, and again with the straight TET10 from its corners (a6d52e4) at
  // 2a11d44: 2.78 ms bounded against 2.96 unbounded.
  static constexpr unsigned min_teams = N == 10 ? 5 : 0;
  Solid<N> g;
  DeviceView<Material *> mats;
  IndexView elem_mat;
  DofView u;
  kernels::ElementScreen screen = {};
  /// The screen's test of element e's mean stress s (xx, yy[, zz], then the shears): its norm
  /// sqrt(sum of s_ij^2) against the least bound of its nodes, with a margin far beyond rounding.
  template <class T> KOKKOS_INLINE_FUNCTION void test(Index e, const T &q) const {
    double least = screen.least(g.conn(e, 0));
    for (int a = 1; a < N; ++a)
      least = Kokkos::min(least, screen.least(g.conn(e, a)));
    if (Kokkos::sqrt(q) * (1 + 1e-6) >= least) screen.hit(0) = 1;
  }
  template <class Add> KOKKOS_INLINE_FUNCTION void operator()(Index e, const Add &add) const {
    constexpr bool S = Stress || Screen;
    double x[D][N], ue[D][N], f[D][N], s[6], A;
    g.coords(e, x);
    g.field(e, u, ue);
    Solid<N>::template force<Straight>(mats(elem_mat(e)), x, ue, f, S ? s : nullptr, nullptr, S ? &A : nullptr);
    if constexpr (Screen) {
      double q = 0;
      for (int k = 0; k < NS; ++k)
        q += (k < D ? 1 : 2) * s[k] * s[k];
      test(e, q);
    }
    for (int a = 0; a < N; ++a) {
      const Index n = g.conn(e, a);
      if constexpr (Force)
        for (int i = 0; i < D; ++i)
          add(n, i, f[i][a], a);
      if constexpr (Stress)
        for (int k = 0; k < NS; ++k)
          add(n, C - NS + k, A * s[k], a);
    }
  }
#ifdef FEGPU_HOST_LANES
  /// The host's blocks (scatter_elements): elements e[0..lanes) at once, one a lane of a pack;
  /// lane l's nodes go to nodes[l] and its element vector to v[l][local node][component], which
  /// the caller adds (host_positions). A block of several materials runs element by element.
  static constexpr int lanes = simd::kLanes;
  void block(const Index (&e)[lanes], Index (&nodes)[lanes][N], double (&v)[lanes][N][C ? C : 1]) const {
    for (int l = 0; l < lanes; ++l)
      for (int a = 0; a < N; ++a)
        nodes[l][a] = g.conn(e[l], a);
    const Index mat = elem_mat(e[0]);
    for (int l = 1; l < lanes; ++l)
      if (elem_mat(e[l]) != mat) {
        for (int k = 0; k < lanes; ++k)
          (*this)(e[k], [&](Index, int c, double value, int a) { v[k][a][c] = value; });
        return;
      }
    simd::Pack x[D][N], ue[D][N], f[D][N];
    for (int l = 0; l < lanes; ++l)
      for (int a = 0; a < N; ++a) {
        const Index n = nodes[l][a];
        for (int i = 0; i < D; ++i)
          x[i][a].set(l, g.xyz(n, i)), ue[i][a].set(l, u(n, i));
      }
    simd::Pack s[6], A;
    constexpr bool S = Stress || Screen;
    Solid<N>::template force<Straight>(mats(mat), x, ue, f, S ? s : nullptr, nullptr, S ? &A : nullptr);
    if constexpr (Screen)
      for (int l = 0; l < lanes; ++l) {
        double q = 0;
        for (int k = 0; k < NS; ++k)
          q += (k < D ? 1 : 2) * s[k][l] * s[k][l];
        test(e[l], q);
      }
    for (int l = 0; l < lanes; ++l)
      for (int a = 0; a < N; ++a) {
        if constexpr (Force)
          for (int i = 0; i < D; ++i)
            v[l][a][i] = f[i][a][l];
        if constexpr (Stress)
          for (int k = 0; k < NS; ++k)
            v[l][a][C - NS + k] = A[l] * s[k][l];
      }
  }
#endif
};

/// Each element's area or volume, added at its nodes (one component).
template <int N> struct NodalMeasure {
  static constexpr bool local_adds = true;
  static constexpr int npe = N, components = 1;
  Solid<N> g;
  template <class Add> KOKKOS_INLINE_FUNCTION void operator()(Index e, const Add &add) const {
    double x[Solid<N>::D][N], min_det;
    g.coords(e, x);
    const double A = Solid<N>::measure(x, min_det);
    for (int a = 0; a < N; ++a)
      add(g.conn(e, a), 0, A, a);
  }
};

template <int N> struct LumpedMass {
  static constexpr bool local_adds = true;
  static constexpr int npe = N, components = Solid<N>::D;
  Solid<N> g;
  DeviceView<Material *> mats;
  IndexView elem_mat;
  template <class Add> KOKKOS_INLINE_FUNCTION void operator()(Index e, const Add &add) const {
    constexpr int D = Solid<N>::D;
    double x[D][N], min_det;
    g.coords(e, x);
    const double mass = Solid<N>::mass(mats(elem_mat(e)), x, min_det);
    for (int a = 0; a < N; ++a)
      for (int i = 0; i < D; ++i)
        add(g.conn(e, a), i, mass * Solid<N>::mass_fraction(a), a);
  }
};

template <int N> Solid<N> solid(const Mesh &m) { return {m.elem2node, m.coords}; }

} // namespace

namespace kernels {

void body_force(const DofView &mass, const double g[3], IndexView &dofs, RealView &weights) {
  const Index nn = static_cast<Index>(mass.extent(0));
  int comps[3] = {0, 0, 0}, nc = 0;
  for (int c = 0; c < static_cast<int>(mass.extent(1)); ++c)
    if (g[c] != 0) comps[nc++] = c;
  dofs = IndexView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::elastic::load_dofs"), nc * nn);
  weights = RealView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::elastic::load_weights"), nc * nn);
  const auto d = dofs;
  const auto w = weights;
  const Kokkos::Array<int, 3> comp = {comps[0], comps[1], comps[2]};
  const Kokkos::Array<double, 3> acc = {g[0], g[1], g[2]};
  Kokkos::parallel_for(
      "fegpu::elastic::body_force", range(0, nc * nn), KOKKOS_LAMBDA(Index i) {
        const int c = comp[i / nn];
        const Index n = i % nn;
        d(i) = c * nn + n;
        w(i) = mass(n, c) * acc[c];
      });
}

void node_dofs(const IndexView &nodes, int comp, Index num_nodes, const IndexView &dofs) {
  Kokkos::parallel_for(
      "fegpu::elastic::node_dofs", range(0, static_cast<Index>(nodes.extent(0))),
      KOKKOS_LAMBDA(Index i) { dofs(i) = comp * num_nodes + nodes(i); });
}

namespace {
/// Whether input node o is a member; a rank's ghost-only nodes, numbered after its own input
/// nodes, are in none of its sets.
KOKKOS_INLINE_FUNCTION bool in_set(const DeviceView<uint8_t *> &member, Index o) {
  return o < static_cast<Index>(member.extent(0)) && member(o);
}
} // namespace

Index mark_node_set(const IndexView &original, const IndexView &origin, const DeviceView<uint8_t *> &member) {
  Kokkos::deep_copy(ExecSpace(), member, 0);
  Kokkos::parallel_for(
      "fegpu::elastic::mark_node_set", range(0, static_cast<Index>(original.extent(0))),
      KOKKOS_LAMBDA(Index i) { member(original(i)) = 1; });
  Index count = 0;
  Kokkos::parallel_reduce(
      "fegpu::elastic::count_node_set", range(0, static_cast<Index>(origin.extent(0))),
      KOKKOS_LAMBDA(Index i, Index & c) { c += in_set(member, origin(i)); }, count);
  return count;
}

void fill_node_set(const DeviceView<uint8_t *> &member, const IndexView &origin, const IndexView &out) {
  Kokkos::parallel_scan(
      "fegpu::elastic::fill_node_set", range(0, static_cast<Index>(origin.extent(0))),
      KOKKOS_LAMBDA(Index i, Index & k, bool final) {
        if (!in_set(member, origin(i))) return;
        if (final) out(k) = i;
        ++k;
      });
}

GlobalId largest(const GlobalIdView &ids) {
  GlobalId top = 0;
  Kokkos::parallel_reduce(
      "fegpu::elastic::largest_id", range(0, static_cast<Index>(ids.extent(0))),
      KOKKOS_LAMBDA(Index i, GlobalId & m) { m = ids(i) > m ? ids(i) : m; }, Kokkos::Max<GlobalId>(top));
  return top;
}

namespace {

template <int N> Index first_inverted(const Mesh &mesh) {
  Index first = mesh.num_elems();
  const auto g = solid<N>(mesh);
  Kokkos::parallel_reduce(
      "fegpu::elastic::check_jacobian", range(0, mesh.num_elems()),
      KOKKOS_LAMBDA(Index e, Index & lo) {
        constexpr int D = Solid<N>::D;
        double x[D][N], md;
        g.coords(e, x);
        Solid<N>::mass(Material{}, x, md);
        // Degenerate too where det J (the corner simplex's measure times D!) is below 1e-8 of its
        // longest edge to the power D: a width under 1e-8 of that edge, lost to rounding.
        double h2 = 0;
        for (int k = 0; k < D + 1; ++k)
          for (int l = k + 1; l < D + 1; ++l) {
            double d2 = 0;
            for (int i = 0; i < D; ++i)
              d2 += (x[i][l] - x[i][k]) * (x[i][l] - x[i][k]);
            h2 = Kokkos::max(h2, d2);
          }
        const double scale = D == 2 ? h2 : h2 * Kokkos::sqrt(h2);
        if (!(md > 1e-8 * scale) && e < lo) lo = e;
      },
      Kokkos::Min<Index>(first));
  return first < mesh.num_elems() ? first : -1;
}

template <int N> bool straight_edged(const Mesh &mesh) {
  int all = 1;
  if constexpr (kDim<N> == 3) {
    const auto g = solid<N>(mesh);
    Kokkos::parallel_reduce(
        "fegpu::elastic::straight_edged", range(0, mesh.num_elems()),
        KOKKOS_LAMBDA(Index e, int &s) {
          double x[3][N];
          g.coords(e, x);
          s = s && tet::straight<N>(x);
        },
        Kokkos::LAnd<int>(all));
  }
  return kDim<N> == 3 && all;
}

template <int N> double max_eigenvalue(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &em) {
  double lambda_max = 0;
  const auto g = solid<N>(mesh);
  Kokkos::parallel_reduce(
      "fegpu::elastic::element_eigenvalue", range(0, mesh.num_elems()),
      KOKKOS_LAMBDA(Index e, double &mx) {
        double x[Solid<N>::D][N];
        g.coords(e, x);
        const double l = Solid<N>::max_eigenvalue(mats(em(e)), x);
        mx = l > mx ? l : mx;
      },
      Kokkos::Max<double>(lambda_max));
  return lambda_max;
}

template <int N>
void element_fields(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &em, const DofView &u,
                    const DofView &out) {
  const auto g = solid<N>(mesh);
  Kokkos::parallel_for(
      "fegpu::elastic::element_fields", range(0, mesh.num_elems()), KOKKOS_LAMBDA(Index e) {
        constexpr int D = Solid<N>::D;
        double x[D][N], ue[D][N], f[D][N], s[6], w;
        g.coords(e, x);
        g.field(e, u, ue);
        const Material &m = mats(em(e));
        Solid<N>::force(m, x, ue, f, s, &w);
        double v[8];
        const int nv = Solid<N>::output_fields(m, s, w, v);
        for (int k = 0; k < nv; ++k)
          out(e, k) = v[k];
      });
}

} // namespace

Index first_inverted(const Mesh &mesh) {
  return with_nodes(mesh.type, [&](auto n) { return first_inverted<decltype(n)::value>(mesh); });
}

bool straight_edged(const Mesh &mesh) {
  return with_nodes(mesh.type, [&](auto n) { return straight_edged<decltype(n)::value>(mesh); });
}

double max_eigenvalue(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &em) {
  return with_nodes(mesh.type, [&](auto n) { return max_eigenvalue<decltype(n)::value>(mesh, mats, em); });
}

void element_fields(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &em, const DofView &u,
                    const DofView &out) {
  with_nodes(mesh.type, [&](auto n) { element_fields<decltype(n)::value>(mesh, mats, em, u, out); });
}

void lumped_mass(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &em, ScatterStrategy scatter,
                 const Coloring &coloring, const DofView &mass) {
  with_nodes(mesh.type, [&](auto n) {
    constexpr int N = decltype(n)::value;
    scatter_elements("fegpu::elastic::lumped_mass", scatter, coloring, mesh.num_elems(), mass,
                     LumpedMass<N>{solid<N>(mesh), mats, em});
  });
}

void nodal_measure(const Mesh &mesh, ScatterStrategy scatter, const Coloring &coloring, const DofView &out) {
  with_nodes(mesh.type, [&](auto n) {
    constexpr int N = decltype(n)::value;
    scatter_elements("fegpu::elastic::nodal_measure", scatter, coloring, mesh.num_elems(), out,
                     NodalMeasure<N>{solid<N>(mesh)});
  });
}

namespace {
/// A pass of InternalForce<N, ..., Stress, Force, Screen> over the elements of `sweep` into `target`.
template <int N, bool Stress, bool Force, bool Screen = false, class Target>
void force_pass(const char *label, const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &em,
                ScatterStrategy scatter, const Coloring &coloring, const DofView &u, const Target &target, Sweep sweep,
                bool straight, const ElementScreen &screen = {}) {
  if constexpr (N == 10)
    if (straight)
      return scatter_elements(label, scatter, coloring, mesh.num_elems(), target,
                              InternalForce<N, true, Stress, Force, Screen>{solid<N>(mesh), mats, em, u, screen},
                              sweep);
  scatter_elements(label, scatter, coloring, mesh.num_elems(), target,
                   InternalForce<N, false, Stress, Force, Screen>{solid<N>(mesh), mats, em, u, screen}, sweep);
}

/// The screen alone: each element's mean stress, nothing added (no scatter).
template <int N, bool Straight>
void screen_pass(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &em, const DofView &u,
                 const ElementScreen &screen) {
  const InternalForce<N, Straight, false, false, true> element{solid<N>(mesh), mats, em, u, screen};
#ifdef FEGPU_HOST_LANES // (the host's packs: a thread a run of blocks)
  const Index ne = mesh.num_elems(), run = 64 * simd::kLanes;
  Kokkos::parallel_for(
      "fegpu::elastic::stress_screen", range(0, (ne + run - 1) / run), KOKKOS_LAMBDA(Index r) {
        host_positions(element, IndexView(), r * run, std::min(ne, (r + 1) * run),
                       [](Index) { return [](auto...) {}; });
      });
#else
  Kokkos::parallel_for(
      "fegpu::elastic::stress_screen", range(0, mesh.num_elems()),
      KOKKOS_LAMBDA(Index e) { element(e, [](Index, int, double, int) {}); });
#endif
}
} // namespace

void internal_force(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &em, ScatterStrategy scatter,
                    const Coloring &coloring, const DofView &u, const DofView &f, Sweep sweep, bool straight,
                    const DofView &stress, const ElementScreen &screen) {
  with_nodes(mesh.type, [&](auto n) {
    constexpr int N = decltype(n)::value;
    if (screen.hit.extent(0) && !f.extent(0)) {
      if (N == 10 && straight)
        screen_pass<N, true>(mesh, mats, em, u, screen);
      else
        screen_pass<N, false>(mesh, mats, em, u, screen);
    } else if (screen.hit.extent(0))
      force_pass<N, false, true, true>("fegpu::elastic::internal_force_and_screen", mesh, mats, em, scatter, coloring,
                                       u, f, sweep, straight, screen);
    else if (!stress.extent(0))
      force_pass<N, false, true>("fegpu::elastic::internal_force", mesh, mats, em, scatter, coloring, u, f, sweep,
                                 straight);
    else if (!f.extent(0))
      force_pass<N, true, false>("fegpu::elastic::nodal_stress", mesh, mats, em, scatter, coloring, u, stress, sweep,
                                 straight);
    else
      force_pass<N, true, true>("fegpu::elastic::internal_force_and_stress", mesh, mats, em, scatter, coloring, u,
                                JoinedFields<DofView, DofView>{f, stress}, sweep, straight);
  });
}

} // namespace kernels

} // namespace fegpu::elastic
