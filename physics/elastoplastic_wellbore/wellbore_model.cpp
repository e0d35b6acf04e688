#include "wellbore_model.hpp"

#include "direct.hpp"
#include "multigrid.hpp"

#include "fegpu/core/error.hpp"
#include "fegpu/mesh/topology.hpp"

#include <cmath>
#include <type_traits>

namespace fegpu::wellbore {

namespace {
constexpr int kMaxNeighbours = 128; // nodes sharing an element with one node
constexpr int kMaxDofs = 2 * kMaxQuadNodes;

/// Flat point i of the staged kernels as (element e, point q): elements fastest where the point
/// arrays are layout-left (the GPU's default), so that a warp's accesses coalesce; points fastest
/// otherwise (a CPU thread's run of i stays within its elements' rows).
KOKKOS_INLINE_FUNCTION void split_point(Index i, Index ne, int np, Index &e, int &q) {
  if constexpr (std::is_same_v<PointTensor::array_layout, Kokkos::LayoutLeft>)
    e = i % ne, q = i / ne;
  else
    e = i / np, q = i % np;
}

/// sigma += D eps for eps = (xx, yy, gamma_xy), plane strain.
KOKKOS_INLINE_FUNCTION void add_elastic(const MohrCoulomb &m, const double eps[3], double s[4]) {
  const double tr = m.lambda * (eps[0] + eps[1]);
  s[0] += tr + 2 * m.G * eps[0], s[1] += tr + 2 * m.G * eps[1], s[2] += tr, s[3] += m.G * eps[2];
}

/// sqrt(2/3 e : e) of the plastic strain e = D^-1 (trial - sigma) of a return.
KOKKOS_INLINE_FUNCTION double plastic_strain_increment(const MohrCoulomb &m, const double trial[4], const double s[4]) {
  const double d[4] = {trial[0] - s[0], trial[1] - s[1], trial[2] - s[2], trial[3] - s[3]};
  const double tr = (d[0] + d[1] + d[2]) * m.lambda / (3 * m.lambda + 2 * m.G);
  const double e0 = (d[0] - tr) / (2 * m.G), e1 = (d[1] - tr) / (2 * m.G), e2 = (d[2] - tr) / (2 * m.G);
  const double e3 = d[3] / (2 * m.G);
  return Kokkos::sqrt(2.0 / 3.0 * (e0 * e0 + e1 * e1 + e2 * e2 + 2 * e3 * e3));
}

/// The nodes sharing an element with node n, sorted and unique, into nb; their count, or -1 if
/// more than kMaxNeighbours.
KOKKOS_INLINE_FUNCTION int neighbours(Index n, const Crs &n2e, const ConnView &conn, int npe, Index nb[]) {
  int count = 0;
  for (Index i = n2e.offsets(n); i < n2e.offsets(n + 1); ++i)
    for (int k = 0; k < npe; ++k) {
      const Index m = conn(n2e.indices(i), k);
      int pos = count;
      while (pos > 0 && nb[pos - 1] > m)
        --pos;
      if (pos > 0 && nb[pos - 1] == m) continue;
      if (count == kMaxNeighbours) return -1;
      for (int j = count; j > pos; --j)
        nb[j] = nb[j - 1];
      nb[pos] = m, ++count;
    }
  return count;
}

/// The Mohr-Coulomb update of one point from the committed state by the strain increment eps;
/// stores the stress, regime and equivalent plastic strain and returns the stress in s.
struct PointUpdate {
  PointTensor sn, sig;
  DeviceView<int **> reg;
  PointScalar pn, p;
  MohrCoulomb m;
  /// With `store` false it only returns the stress (for the threads that share a point's update).
  KOKKOS_INLINE_FUNCTION void operator()(Index e, int q, const double eps[3], double s[4], bool store = true) const {
    double trial[4] = {sn(e, q, 0), sn(e, q, 1), sn(e, q, 2), sn(e, q, 3)}, dg[2];
    add_elastic(m, eps, trial);
    const Regime r = return_map(m, trial, s, dg);
    if (!store) return;
    reg(e, q) = static_cast<int>(r);
    for (int i = 0; i < 4; ++i)
      sig(e, q, i) = s[i];
    p(e, q) = pn(e, q) + (r == Regime::Elastic ? 0.0 : plastic_strain_increment(m, trial, s));
  }
};

/// The element's increment of displacement, component-interleaved (2 k + c).
KOKKOS_INLINE_FUNCTION void gather_increment(Index e, int npe, const ConnView &conn, const DofView &u,
                                             const DofView &un, double du[]) {
  for (int k = 0; k < npe; ++k) {
    const Index n = conn(e, k);
    du[2 * k] = u(n, 0) - un(n, 0), du[2 * k + 1] = u(n, 1) - un(n, 1);
  }
}

/// The fused strategy: gather, strains from the stored B, update, B^T W sigma, scatter. The
/// element's size is a template parameter so that the element vectors stay in registers (with
/// run-time sizes they lived in local memory: 1.3 ms instead of 0.55 at l = 4, p = 2 on the H100),
/// and a point's three rows of B stay in registers between its strain and its force, so B streams
/// from memory once. Q4 and Q9 run one thread per element; Q16 goes to ResidualFusedSplit.
template <int NPE> struct ResidualFused {
  static constexpr int ND = 2 * NPE;
  DeviceView<double ***> B;
  DeviceView<double **> W;
  ConnView conn;
  DofView u, un;
  PointUpdate update;

  template <class Add> KOKKOS_INLINE_FUNCTION void operator()(Index e, const Add &add) const {
    double du[ND], fe[ND];
    gather_increment(e, NPE, conn, u, un, du);
    for (int j = 0; j < ND; ++j)
      fe[j] = 0;
    for (int q = 0; q < NPE; ++q) { // Lagrange quadrilaterals: one Gauss point per node
      double b[3][ND], eps[3] = {0, 0, 0}, s[4];
      for (int r = 0; r < 3; ++r)
        for (int j = 0; j < ND; ++j) {
          b[r][j] = B(e, 3 * q + r, j);
          eps[r] += b[r][j] * du[j];
        }
      update(e, q, eps, s);
      const double w = W(e, q), ws[3] = {w * s[0], w * s[1], w * s[3]};
      for (int j = 0; j < ND; ++j)
        fe[j] += b[0][j] * ws[0] + b[1][j] * ws[1] + b[2][j] * ws[2];
    }
    for (int k = 0; k < NPE; ++k)
      add(conn(e, k), 0, fe[2 * k]), add(conn(e, k), 1, fe[2 * k + 1]);
  }
};

/// The fused strategy for Q16: P threads share an element, each holding 2 * NPE / P of its dofs
/// (du, fe and those columns of the point's rows of B in registers), so B streams once. One GPU
/// thread holding all 96 values of a Q16 point's rows beside du and fe spills 930 bytes; reading
/// the rows twice instead costs a second pass over B (H100, l = 4, p = 3: 3.49 and 2.86 ms; split
/// over two threads 1.71 ms). The threads add their partial strains through team scratch, in the
/// same order in each, so all P make the same update; the first of them stores it. On the host P
/// is 1: one thread per element.
template <int NPE, int P, class Add> struct ResidualFusedSplit {
  static constexpr int NH = 2 * NPE / P; // dofs per thread
  using Member = Kokkos::TeamPolicy<ExecSpace>::member_type;
  DeviceView<double ***> B;
  DeviceView<double **> W;
  ConnView conn;
  DofView u, un;
  PointUpdate update;
  Add add;
  IndexView elems; ///< the elements of a colour, or empty: all, in order
  Index begin = 0, end = 0;

  KOKKOS_INLINE_FUNCTION static std::size_t scratch(int team_size) { return 2 * 3 * team_size * sizeof(double); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member &team) const {
    const int t = team.team_rank(), T = team.team_size(), h = t % P, first = t - h;
    const Index i = begin + team.league_rank() * (T / P) + t / P;
    const bool active = i < end;
    const Index e = !active ? 0 : elems.extent(0) ? elems(i) : i;
    double *part = static_cast<double *>(team.team_scratch(0).get_shmem(scratch(T)));
    double du[NH], fe[NH];
    for (int k = 0; k < NH; ++k) {
      const int j = h * NH + k;
      const Index n = active ? conn(e, j / 2) : 0;
      du[k] = active ? u(n, j % 2) - un(n, j % 2) : 0.0;
      fe[k] = 0;
    }
    for (int q = 0; q < NPE; ++q) {
      double b[3][NH], eps[3] = {0, 0, 0}, s[4];
      if (active)
        for (int r = 0; r < 3; ++r)
          for (int k = 0; k < NH; ++k) {
            b[r][k] = B(e, 3 * q + r, h * NH + k);
            eps[r] += b[r][k] * du[k];
          }
      // Double-buffered by point: the barrier of point q + 1 separates the reads of point q
      // from the writes of point q + 2.
      double *mine = part + 3 * T * (q % 2);
      for (int r = 0; r < 3; ++r)
        mine[3 * t + r] = eps[r];
      team.team_barrier();
      if (!active) continue;
      for (int r = 0; r < 3; ++r) {
        eps[r] = 0;
        for (int k = 0; k < P; ++k)
          eps[r] += mine[3 * (first + k) + r];
      }
      update(e, q, eps, s, h == 0);
      const double w = W(e, q), ws[3] = {w * s[0], w * s[1], w * s[3]};
      for (int k = 0; k < NH; ++k)
        fe[k] += b[0][k] * ws[0] + b[1][k] * ws[1] + b[2][k] * ws[2];
    }
    if (active)
      for (int k = 0; k < NH; ++k) {
        const int j = h * NH + k;
        add(conn(e, j / 2), j % 2, fe[k]);
      }
  }
};

/// Threads per Q16 element in the fused residual: two on a GPU (see ResidualFusedSplit), one on
/// the host, where a thread's registers are no constraint. H100, l = 4, p = 3: 1.71 ms with two
/// (255 registers, 140 bytes spilled), 2.24 with four (200 registers), 2.77 with eight: each
/// thread repeats the point's update, so fewer threads per element do less arithmetic.
constexpr int kQ16Threads = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible ? 1 : 2;

/// Launches ResidualFusedSplit for Q16: over all elements with atomics, or colour by colour.
template <int P>
void fused_split(const Operators &ops, const ConnView &conn, const DofView &u, const DofView &un,
                 const PointUpdate &update, ScatterStrategy scatter, const Coloring &coloring, const DofView &R) {
  const int T = P == 1 ? 1 : 128; // threads per team
  const auto run = [&](auto add, const IndexView &elems, Index begin, Index end) {
    const ResidualFusedSplit<16, P, decltype(add)> k{ops.B, ops.W, conn, u, un, update, add, elems, begin, end};
    const Index per_team = T / P, league = (end - begin + per_team - 1) / per_team;
    if (league == 0) return;
    // Light-weight: the functor goes as a kernel argument, as with range() (types.hpp says why).
    const auto policy = Kokkos::Experimental::require(
        Kokkos::TeamPolicy<ExecSpace>(league, T).set_scratch_size(0, Kokkos::PerTeam(k.scratch(T))),
        Kokkos::Experimental::WorkItemProperty::HintLightWeight);
    Kokkos::parallel_for("fegpu::wellbore::residual_fused", policy, k);
  };
  if (scatter == ScatterStrategy::Atomic) {
    run(AtomicAdd{R}, IndexView(), 0, static_cast<Index>(conn.extent(0)));
    return;
  }
  for (int c = 0; c < coloring.num_colors; ++c)
    run(PlainAdd{R}, coloring.color2elem.indices, coloring.offsets_h[c], coloring.offsets_h[c + 1]);
}

/// The block strategy's last stage: B^T W sigma of the stored point stresses, scattered.
struct BlockForces {
  DeviceView<double ***> B;
  DeviceView<double **> W;
  ConnView conn;
  PointTensor sig;
  int np, npe;

  template <class Add> KOKKOS_INLINE_FUNCTION void operator()(Index e, const Add &add) const {
    for (int j = 0; j < 2 * npe; ++j) {
      double f = 0;
      for (int q = 0; q < np; ++q)
        f += W(e, q) *
             (B(e, 3 * q, j) * sig(e, q, 0) + B(e, 3 * q + 1, j) * sig(e, q, 1) + B(e, 3 * q + 2, j) * sig(e, q, 3));
      add(conn(e, j / 2), j % 2, f);
    }
  }
};

/// The classical strategy: geometry, gradients and weights recomputed at every point.
struct ResidualClassical {
  QuadBasis basis;
  CoordView X;
  ConnView conn;
  DofView u, un;
  PointUpdate update;
  int n1;

  template <class Add> KOKKOS_INLINE_FUNCTION void operator()(Index e, const Add &add) const {
    const int npe = basis.nodes;
    double du[kMaxDofs], fe[kMaxDofs];
    gather_increment(e, npe, conn, u, un, du);
    for (int j = 0; j < 2 * npe; ++j)
      fe[j] = 0;
    for (int q = 0; q < n1 * n1; ++q) {
      double xi, eta, wx, wy, N[kMaxQuadNodes], dN[kMaxQuadNodes][2];
      gauss_legendre(n1, q % n1, xi, wx);
      gauss_legendre(n1, q / n1, eta, wy);
      basis.eval(xi, eta, N, dN);
      double J[2][2] = {{0, 0}, {0, 0}};
      for (int k = 0; k < npe; ++k) {
        const Index n = conn(e, k);
        for (int d = 0; d < 2; ++d)
          J[0][d] += X(n, 0) * dN[k][d], J[1][d] += X(n, 1) * dN[k][d];
      }
      const double det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
      double g[kMaxQuadNodes][2], eps[3] = {0, 0, 0}, s[4];
      for (int k = 0; k < npe; ++k) {
        g[k][0] = (J[1][1] * dN[k][0] - J[1][0] * dN[k][1]) / det;
        g[k][1] = (-J[0][1] * dN[k][0] + J[0][0] * dN[k][1]) / det;
        eps[0] += g[k][0] * du[2 * k], eps[1] += g[k][1] * du[2 * k + 1];
        eps[2] += g[k][1] * du[2 * k] + g[k][0] * du[2 * k + 1];
      }
      update(e, q, eps, s);
      const double w = wx * wy * det;
      for (int k = 0; k < npe; ++k) {
        fe[2 * k] += w * (g[k][0] * s[0] + g[k][1] * s[3]);
        fe[2 * k + 1] += w * (g[k][1] * s[1] + g[k][0] * s[3]);
      }
    }
    for (int k = 0; k < npe; ++k)
      add(conn(e, k), 0, fe[2 * k]), add(conn(e, k), 1, fe[2 * k + 1]);
  }
};

/// Every point's stress to the hydrostatic s0 (xx, yy, zz).
void fill_hydrostatic(const PointTensor &s, double s0) {
  const int np = static_cast<int>(s.extent(1));
  Kokkos::parallel_for(
      "fegpu::wellbore::prestress", range(0, static_cast<Index>(s.extent(0))), KOKKOS_LAMBDA(Index e) {
        for (int q = 0; q < np; ++q)
          s(e, q, 0) = s(e, q, 1) = s(e, q, 2) = s0, s(e, q, 3) = 0;
      });
}
} // namespace

ResidualStrategy residual_strategy_from_string(const std::string &name) {
  if (name == "fused") return ResidualStrategy::Fused;
  if (name == "block") return ResidualStrategy::Block;
  if (name == "classical") return ResidualStrategy::Classical;
  if (name == "sparse") return ResidualStrategy::Sparse;
  throw InputError("unknown residual strategy '" + name + "'");
}

std::string to_string(ResidualStrategy s) {
  switch (s) {
  case ResidualStrategy::Fused:
    return "fused";
  case ResidualStrategy::Block:
    return "block";
  case ResidualStrategy::Classical:
    return "classical";
  case ResidualStrategy::Sparse:
    return "sparse";
  }
  return "";
}

WellboreModel::WellboreModel(const HostMesh &h, const Config &config)
    : config_(config), mesh_(upload(h)), basis_(h.type) {
  Kokkos::Profiling::ScopedRegion region("fegpu::wellbore::setup");
  if (h.type != ElementType::Quad4 && h.type != ElementType::Quad9 && h.type != ElementType::Quad16)
    throw InputError("the wellbore module needs Lagrange quadrilaterals (quad4, quad9, quad16), not " +
                     type_name(h.type));
  const int np = (basis_.order + 1) * (basis_.order + 1);
  const Index ne = mesh_.num_elems(), nn = mesh_.num_nodes();
  sigma_n_ = PointTensor("fegpu::wellbore::sigma_n", ne, np);
  sigma_ = PointTensor("fegpu::wellbore::sigma", ne, np);
  regime_ = DeviceView<int **>("fegpu::wellbore::regime", ne, np);
  eqps_n_ = PointScalar("fegpu::wellbore::eqps_n", ne, np);
  eqps_ = PointScalar("fegpu::wellbore::eqps", ne, np);
  fill_hydrostatic(sigma_n_, config_.prestress);
  Kokkos::deep_copy(sigma_, sigma_n_);
  u_n_ = DofView("fegpu::wellbore::u_n", nn, 2);
  build_operators();
  build_graph();
  build_loads();
}

void WellboreModel::build_operators() {
  const int order = basis_.order, n1 = order + 1, np = n1 * n1, npe = basis_.nodes;
  const Index ne = mesh_.num_elems();
  ops_.points = np, ops_.nodes = npe;
  ops_.B = DeviceView<double ***>("fegpu::wellbore::B", ne, 3 * np, 2 * npe);
  ops_.W = DeviceView<double **>("fegpu::wellbore::W", ne, np);
  ops_.xy = DeviceView<double **[2]>("fegpu::wellbore::point_xy", ne, np);
  const auto B = ops_.B;
  const auto W = ops_.W;
  const auto xy = ops_.xy;
  const auto conn = mesh_.elem2node;
  const auto X = mesh_.coords;
  const QuadBasis basis = basis_;
  Index bad = 0;
  Kokkos::parallel_reduce(
      "fegpu::wellbore::operators", range(0, ne),
      KOKKOS_LAMBDA(Index e, Index & nbad) {
        for (int q = 0; q < np; ++q) {
          double xi, eta, wx, wy;
          gauss_legendre(n1, q % n1, xi, wx);
          gauss_legendre(n1, q / n1, eta, wy);
          double N[kMaxQuadNodes], dN[kMaxQuadNodes][2];
          basis.eval(xi, eta, N, dN);
          double J[2][2] = {{0, 0}, {0, 0}}, px = 0, py = 0;
          for (int k = 0; k < npe; ++k) {
            const Index n = conn(e, k);
            px += N[k] * X(n, 0), py += N[k] * X(n, 1);
            for (int d = 0; d < 2; ++d)
              J[0][d] += X(n, 0) * dN[k][d], J[1][d] += X(n, 1) * dN[k][d];
          }
          const double det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
          if (!(det > 0)) ++nbad;
          W(e, q) = wx * wy * det;
          xy(e, q, 0) = px, xy(e, q, 1) = py;
          for (int k = 0; k < npe; ++k) {
            // dN/dx = J^-T dN/dxi
            const double gx = (J[1][1] * dN[k][0] - J[1][0] * dN[k][1]) / det;
            const double gy = (-J[0][1] * dN[k][0] + J[0][0] * dN[k][1]) / det;
            B(e, 3 * q + 0, 2 * k) = gx, B(e, 3 * q + 0, 2 * k + 1) = 0;
            B(e, 3 * q + 1, 2 * k) = 0, B(e, 3 * q + 1, 2 * k + 1) = gy;
            B(e, 3 * q + 2, 2 * k) = gy, B(e, 3 * q + 2, 2 * k + 1) = gx;
          }
        }
      },
      bad);
  if (bad > 0)
    throw InputError(std::to_string(bad) +
                     " integration points with a non-positive Jacobian (inverted or clockwise elements)");
}

void WellboreModel::build_graph() {
  const Index nn = mesh_.num_nodes();
  const int npe = basis_.nodes;
  const Crs n2e = build_node2elem(mesh_);
  if (config_.scatter == ScatterStrategy::Coloring)
    coloring_ = color_elements(mesh_, n2e, ColoringAlgorithm::JonesPlassmann);
  const auto conn = mesh_.elem2node;
  // Neighbour nodes of each node, sorted and unique: counted, scanned, filled.
  IndexView node_ptr("fegpu::wellbore::node_ptr", nn + 1);
  Index overflow = 0;
  Kokkos::parallel_reduce(
      "fegpu::wellbore::graph_count", range(0, nn),
      KOKKOS_LAMBDA(Index n, Index & over) {
        Index nb[kMaxNeighbours];
        const int c = neighbours(n, n2e, conn, npe, nb);
        if (c < 0) ++over;
        node_ptr(n + 1) = c < 0 ? 0 : c;
      },
      overflow);
  if (overflow > 0)
    throw InputError("a node shares elements with more than " + std::to_string(kMaxNeighbours) + " nodes");
  Kokkos::parallel_scan(
      "fegpu::wellbore::graph_scan", range(0, nn + 1), KOKKOS_LAMBDA(Index i, Index & sum, bool final) {
        sum += node_ptr(i);
        if (final) node_ptr(i) = sum;
      });
  // Row d = c * nn + n holds the columns c' * nn + m for both components c' and every neighbour
  // m, so its length is twice the node's count.
  size_dof_rows(
      K_, nn, 2 * nn, "fegpu::wellbore::K", KOKKOS_LAMBDA(Index n) { return 2 * (node_ptr(n + 1) - node_ptr(n)); });
  const auto row_ptr = K_.row_ptr;
  const auto cols = K_.cols;
  Kokkos::parallel_for(
      "fegpu::wellbore::graph_fill", range(0, nn), KOKKOS_LAMBDA(Index n) {
        Index nb[kMaxNeighbours];
        const int count = neighbours(n, n2e, conn, npe, nb);
        for (int c = 0; c < 2; ++c) {
          Index p = row_ptr(c * nn + n);
          for (int cc = 0; cc < 2; ++cc)
            for (int j = 0; j < count; ++j)
              cols(p++) = cc * nn + nb[j];
        }
      });
}

void WellboreModel::build_loads() {
  const Index nn = mesh_.num_nodes();
  f_ext_ = DofView("fegpu::wellbore::f_ext", nn, 2);
  f_initial_ = DofView("fegpu::wellbore::f_initial", nn, 2);
  f_final_ = DofView("fegpu::wellbore::f_final", nn, 2);
  fixed_ = DeviceView<int *>("fegpu::wellbore::fixed", 2 * nn);
  for (const Config::NormalStress &ns : config_.normal_stress) {
    add_normal_stress(mesh_.side_set(ns.side_set), ns.value, f_final_);
    add_normal_stress(mesh_.side_set(ns.side_set), config_.prestress, f_initial_);
  }
  Kokkos::deep_copy(f_ext_, f_final_);
  const auto fixed = fixed_;
  for (const Config::Fixed &fx : config_.fixed) {
    const int c = fx.component;
    if (fx.node_set.empty()) {
      Kokkos::deep_copy(Kokkos::subview(fixed, c * nn + nearest_node(mesh_.coords, {fx.point[0], fx.point[1], 0.0})),
                        1);
      continue;
    }
    const auto nodes = mesh_.node_set(fx.node_set).nodes;
    Kokkos::parallel_for(
        "fegpu::wellbore::fixed_dofs", range(0, static_cast<Index>(nodes.extent(0))),
        KOKKOS_LAMBDA(Index i) { fixed(c * nn + nodes(i)) = 1; });
  }
}

void WellboreModel::add_normal_stress(const SideSet &side, double value, const DofView &f) const {
  const auto conn = mesh_.elem2node;
  const auto X = mesh_.coords;
  const ElementType type = mesh_.type;
  const int order = basis_.order, nf = order + 1;
  const auto elems = side.elems;
  const auto facets = side.facets;
  // f_k += int N_k sigma_nn n ds with n ds = (dy, -dx) along a counter-clockwise edge.
  Kokkos::parallel_for(
      "fegpu::wellbore::normal_stress", range(0, static_cast<Index>(elems.extent(0))), KOKKOS_LAMBDA(Index i) {
        const Index e = elems(i);
        const int fc = facets(i);
        for (int q = 0; q < nf; ++q) {
          double s, w;
          gauss_legendre(nf, q, s, w);
          double N[4], dN[4], dx = 0, dy = 0;
          for (int k = 0; k < nf; ++k) {
            const int lattice = k == 0 ? 0 : k == 1 ? order : k - 1; // position along the edge
            lagrange_1d(order, lattice, s, N[k], dN[k]);
            const Index n = conn(e, facet_node(type, fc, k));
            dx += dN[k] * X(n, 0), dy += dN[k] * X(n, 1);
          }
          for (int k = 0; k < nf; ++k) {
            const Index n = conn(e, facet_node(type, fc, k));
            Kokkos::atomic_add(&f(n, 0), w * N[k] * value * dy);
            Kokkos::atomic_add(&f(n, 1), -w * N[k] * value * dx);
          }
        }
      });
}

void WellboreModel::residual(const DofView &u, const DofView &R) {
  Kokkos::Profiling::ScopedRegion region("fegpu::wellbore::residual");
  const int np = ops_.points, npe = ops_.nodes;
  const Index nn = mesh_.num_nodes();
  Kokkos::deep_copy(R, 0.0);
  const PointUpdate update{sigma_n_, sigma_, regime_, eqps_n_, eqps_, config_.material};
  const Index ne = mesh_.num_elems();
  if (config_.residual == ResidualStrategy::Fused) {
    FEGPU_CHECK(np == npe, "fused residual: one Gauss point per node");
    if (npe == 4)
      scatter_elements("fegpu::wellbore::residual_fused", config_.scatter, coloring_, ne, R,
                       ResidualFused<4>{ops_.B, ops_.W, mesh_.elem2node, u, u_n_, update});
    else if (npe == 9)
      scatter_elements("fegpu::wellbore::residual_fused", config_.scatter, coloring_, ne, R,
                       ResidualFused<9>{ops_.B, ops_.W, mesh_.elem2node, u, u_n_, update});
    else
      fused_split<kQ16Threads>(ops_, mesh_.elem2node, u, u_n_, update, config_.scatter, coloring_, R);
  } else if (config_.residual == ResidualStrategy::Sparse) {
    sparse_residual(u, R);
  } else if (config_.residual == ResidualStrategy::Classical) {
    scatter_elements("fegpu::wellbore::residual_classical", config_.scatter, coloring_, ne, R,
                     ResidualClassical{basis_, mesh_.coords, mesh_.elem2node, u, u_n_, update, basis_.order + 1});
  } else {
    block_strains(u);
    update_points();
    scatter_elements("fegpu::wellbore::block_forces", config_.scatter, coloring_, ne, R,
                     BlockForces{ops_.B, ops_.W, mesh_.elem2node, sigma_, np, npe});
  }
  const auto f = f_ext_;
  const auto fixed = fixed_;
  Kokkos::parallel_for(
      "fegpu::wellbore::residual_loads", range(0, 2 * nn), KOKKOS_LAMBDA(Index d) {
        const Index n = d % nn;
        const int c = d / nn;
        R(n, c) = fixed(d) ? 0.0 : R(n, c) - f(n, c);
      });
}

const PointStrain &WellboreModel::strain_stage() {
  if (strain_.extent(0) != static_cast<std::size_t>(mesh_.num_elems()))
    strain_ = PointStrain("fegpu::wellbore::strain", mesh_.num_elems(), ops_.points);
  return strain_;
}

void WellboreModel::update_points() {
  const int np = ops_.points;
  const Index ne = mesh_.num_elems();
  const PointUpdate update{sigma_n_, sigma_, regime_, eqps_n_, eqps_, config_.material};
  const auto strain = strain_;
  Kokkos::parallel_for(
      "fegpu::wellbore::point_update", range(0, ne * np), KOKKOS_LAMBDA(Index i) {
        Index e;
        int q;
        split_point(i, ne, np, e, q);
        const double eps[3] = {strain(e, q, 0), strain(e, q, 1), strain(e, q, 2)};
        double s[4];
        update(e, q, eps, s);
      });
}

void WellboreModel::block_strains(const DofView &u) {
  const int np = ops_.points, npe = ops_.nodes;
  const auto strain = strain_stage();
  const auto B = ops_.B;
  const auto conn = mesh_.elem2node;
  const auto un = u_n_;
  Kokkos::parallel_for(
      "fegpu::wellbore::block_strains", range(0, mesh_.num_elems()), KOKKOS_LAMBDA(Index e) {
        double du[kMaxDofs];
        gather_increment(e, npe, conn, u, un, du);
        for (int r = 0; r < 3 * np; ++r) {
          double v = 0;
          for (int j = 0; j < 2 * npe; ++j)
            v += B(e, r, j) * du[j];
          strain(e, r / 3, r % 3) = v;
        }
      });
}

void WellboreModel::build_sparse_operators() {
  Kokkos::Profiling::ScopedRegion region("fegpu::wellbore::sparse_operators");
  const int np = ops_.points, npe = ops_.nodes;
  const Index ne = mesh_.num_elems(), nn = mesh_.num_nodes(), N = ne * np;
  const auto B = ops_.B;
  const auto conn = mesh_.elem2node;
  // B: rows c N + p for component c (xx, yy, gamma) of point p = q ne + e, the flat order of a
  // PointStrain; xx rows hold the element's npe x-dofs, yy rows its y-dofs, gamma rows all 2 npe.
  Bs_.num_cols = 2 * nn;
  Bs_.row_ptr = IndexView("fegpu::wellbore::Bs_row_ptr", 3 * N + 1);
  Bs_.cols = IndexView("fegpu::wellbore::Bs_cols", static_cast<std::size_t>(4) * npe * N);
  Bs_.values = RealView("fegpu::wellbore::Bs_values", Bs_.cols.extent(0));
  const auto rp = Bs_.row_ptr;
  const auto c = Bs_.cols;
  const auto v = Bs_.values;
  Kokkos::parallel_for(
      "fegpu::wellbore::sparse_B", range(0, N), KOKKOS_LAMBDA(Index p) {
        const Index e = p % ne;
        const int q = p / ne;
        const Index xx = p * npe, yy = (N + p) * npe, gamma = 2 * N * npe + 2 * p * npe;
        rp(p) = xx, rp(N + p) = yy, rp(2 * N + p) = gamma;
        if (p == N - 1) rp(3 * N) = 4 * N * npe;
        for (int k = 0; k < npe; ++k) {
          const Index n = conn(e, k);
          c(xx + k) = n, v(xx + k) = B(e, 3 * q, 2 * k);
          c(yy + k) = nn + n, v(yy + k) = B(e, 3 * q + 1, 2 * k + 1);
          c(gamma + 2 * k) = n, v(gamma + 2 * k) = B(e, 3 * q + 2, 2 * k);
          c(gamma + 2 * k + 1) = nn + n, v(gamma + 2 * k + 1) = B(e, 3 * q + 2, 2 * k + 1);
        }
      });
  // B^T: dof (comp, node) collects, over the node's elements and their points, the comp row and
  // the gamma row: 2 np entries per incident element.
  const Crs n2e = build_node2elem(mesh_);
  size_dof_rows(
      BsT_, nn, 3 * N, "fegpu::wellbore::BsT",
      KOKKOS_LAMBDA(Index n) { return 2 * np * (n2e.offsets(n + 1) - n2e.offsets(n)); });
  const auto tp = BsT_.row_ptr;
  const auto tc = BsT_.cols;
  const auto tv = BsT_.values;
  Kokkos::parallel_for(
      "fegpu::wellbore::sparse_BT", range(0, 2 * nn), KOKKOS_LAMBDA(Index d) {
        const Index n = d % nn;
        const int comp = d / nn;
        Index p = tp(d);
        for (Index i = n2e.offsets(n); i < n2e.offsets(n + 1); ++i) {
          const Index e = n2e.indices(i);
          int k = 0;
          while (conn(e, k) != n)
            ++k;
          for (int q = 0; q < np; ++q) {
            tc(p) = comp * N + q * ne + e, tv(p++) = B(e, 3 * q + comp, 2 * k + comp);
            tc(p) = 2 * N + q * ne + e, tv(p++) = B(e, 3 * q + 2, 2 * k + comp);
          }
        }
      });
  du_ = RealView("fegpu::wellbore::sparse_du", 2 * nn);
  w_sigma_ = RealView("fegpu::wellbore::sparse_w_sigma", 3 * N);
}

void WellboreModel::sparse_residual(const DofView &u, const DofView &R) {
  if (Bs_.cols.extent(0) == 0) build_sparse_operators();
  const int np = ops_.points;
  const Index ne = mesh_.num_elems(), nn = mesh_.num_nodes(), N = ne * np;
  const auto strain = strain_stage();
  const auto du = du_;
  const auto un = u_n_;
  Kokkos::parallel_for(
      "fegpu::wellbore::sparse_increment", range(0, 2 * nn),
      KOKKOS_LAMBDA(Index d) { du(d) = u(d % nn, d / nn) - un(d % nn, d / nn); });
  spmv(Bs_, du, RealView(strain.data(), 3 * N));
  update_points();
  const auto W = ops_.W;
  const auto sig = sigma_;
  const auto ws = w_sigma_;
  Kokkos::parallel_for(
      "fegpu::wellbore::sparse_weighted_stress", range(0, N), KOKKOS_LAMBDA(Index p) {
        const Index e = p % ne;
        const int q = p / ne;
        const double w = W(e, q);
        ws(p) = w * sig(e, q, 0), ws(N + p) = w * sig(e, q, 1), ws(2 * N + p) = w * sig(e, q, 3);
      });
  // R = B^T (W sigma): rows are dofs, so no atomics; a DofView is flat in dof order.
  FEGPU_CHECK(R.span_is_contiguous() && R.span() == static_cast<std::size_t>(2 * nn),
              "sparse residual: R must be a whole DofView");
  spmv(BsT_, w_sigma_, RealView(R.data(), 2 * nn));
}

/// One element's consistent-tangent matrix B^T D_ep W B, added row by row into the CRS values
/// (atomically, or plainly when the launch holds one colour).
struct JacobianBlock {
  DeviceView<double ***> B;
  DeviceView<double **> W;
  ConnView conn;
  DofView u, un;
  PointTensor sn;
  IndexView row_ptr, cols;
  RealView values;
  DeviceView<int *> fixed;
  MohrCoulomb m;
  int np, npe;
  Index nn;
  bool atomic;

  KOKKOS_INLINE_FUNCTION void operator()(Index e) const {
    double du[kMaxDofs], C[kMaxQuadNodes][3][3];
    gather_increment(e, npe, conn, u, un, du);
    // The tangent on (xx, yy, xy) x (xx, yy, gamma_xy), times the point's weight.
    constexpr int in_plane[3] = {0, 1, 3};
    for (int q = 0; q < np; ++q) {
      double eps[3] = {0, 0, 0};
      for (int r = 0; r < 3; ++r)
        for (int j = 0; j < 2 * npe; ++j)
          eps[r] += B(e, 3 * q + r, j) * du[j];
      double trial[4] = {sn(e, q, 0), sn(e, q, 1), sn(e, q, 2), sn(e, q, 3)}, s[4], dg[2], T[4][4];
      add_elastic(m, eps, trial);
      return_map(m, trial, s, dg, T);
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
          C[q][a][b] = W(e, q) * T[in_plane[a]][in_plane[b]];
    }
    // One row of K_e at a time, added into the global row.
    for (int i = 0; i < 2 * npe; ++i) {
      const Index row = (i % 2) * nn + conn(e, i / 2);
      if (fixed(row)) continue;
      double krow[kMaxDofs];
      for (int j = 0; j < 2 * npe; ++j)
        krow[j] = 0;
      for (int q = 0; q < np; ++q) {
        double cb[3] = {0, 0, 0}; // B_i^T C
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b)
            cb[b] += B(e, 3 * q + a, i) * C[q][a][b];
        for (int j = 0; j < 2 * npe; ++j)
          krow[j] += cb[0] * B(e, 3 * q, j) + cb[1] * B(e, 3 * q + 1, j) + cb[2] * B(e, 3 * q + 2, j);
      }
      for (int j = 0; j < 2 * npe; ++j) {
        const Index col = (j % 2) * nn + conn(e, j / 2);
        if (fixed(col)) continue;
        Index lo = row_ptr(row), hi = row_ptr(row + 1) - 1;
        while (lo < hi) {
          const Index mid = (lo + hi) / 2;
          if (cols(mid) < col)
            lo = mid + 1;
          else
            hi = mid;
        }
        if (atomic)
          Kokkos::atomic_add(&values(lo), krow[j]);
        else
          values(lo) += krow[j];
      }
    }
  }
};

void WellboreModel::jacobian(const DofView &u) {
  Kokkos::Profiling::ScopedRegion region("fegpu::wellbore::jacobian");
  const Index nn = mesh_.num_nodes();
  const auto row_ptr = K_.row_ptr;
  const auto cols = K_.cols;
  const auto values = K_.values;
  const auto fixed = fixed_;
  Kokkos::deep_copy(values, 0.0);
  JacobianBlock k{ops_.B, ops_.W, mesh_.elem2node,  u,           u_n_,       sigma_n_, row_ptr, cols,
                  values, fixed_, config_.material, ops_.points, ops_.nodes, nn,       true};
  if (config_.scatter == ScatterStrategy::Atomic) {
    Kokkos::parallel_for("fegpu::wellbore::jacobian_block", range(0, mesh_.num_elems()), k);
  } else {
    // Colour by colour: no two elements of a launch share a node, so no row is added twice.
    k.atomic = false;
    const auto elems = coloring_.color2elem.indices;
    for (int c = 0; c < coloring_.num_colors; ++c)
      Kokkos::parallel_for(
          "fegpu::wellbore::jacobian_block", range(coloring_.offsets_h[c], coloring_.offsets_h[c + 1]),
          KOKKOS_LAMBDA(Index i) { k(elems(i)); });
  }
  Kokkos::parallel_for(
      "fegpu::wellbore::jacobian_fixed", range(0, 2 * nn), KOKKOS_LAMBDA(Index d) {
        if (!fixed(d)) return;
        for (Index p = row_ptr(d); p < row_ptr(d + 1); ++p)
          if (cols(p) == d) values(p) = 1.0;
      });
  if (direct_) direct_->factorize(K_);
}

int WellboreModel::solve(const DofView &b, const DofView &x, double rtol, int max_iterations) const {
  if (direct_) {
    direct_->solve(b, x);
    return 0;
  }
  Kokkos::Profiling::ScopedRegion region("fegpu::wellbore::cg");
  const Index n = K_.rows();
  return conjugate_gradients(K_, RealView(b.data(), n), RealView(x.data(), n), rtol, max_iterations, mg_.get());
}

void WellboreModel::commit(const DofView &u) {
  Kokkos::deep_copy(u_n_, u);
  Kokkos::deep_copy(sigma_n_, sigma_);
  Kokkos::deep_copy(eqps_n_, eqps_);
}

void WellboreModel::set_load_factor(double lambda) {
  const auto f = f_ext_;
  const auto f0 = f_initial_;
  const auto f1 = f_final_;
  Kokkos::parallel_for(
      "fegpu::wellbore::load_factor", range(0, mesh_.num_nodes()), KOKKOS_LAMBDA(Index n) {
        for (int c = 0; c < 2; ++c)
          f(n, c) = f0(n, c) + lambda * (f1(n, c) - f0(n, c));
      });
}

} // namespace fegpu::wellbore
