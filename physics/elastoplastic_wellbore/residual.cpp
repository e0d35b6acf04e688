/// \file residual.cpp
/// The residual R(u) = B^T W sigma(u) - f_ext by the four strategies of seed 002: fused (one
/// kernel: gather, strains from the stored B, the point update, B^T W sigma, scatter), block
/// (point strains staged, one thread per point, then the forces), classical (gradients
/// recomputed per point) and sparse (B and B^T as CRS matrices, strains and forces by SpMV).
#include "point_update.hpp"

#include "fegpu/core/error.hpp"
#include "fegpu/driver/progress.hpp"
#include "fegpu/mesh/topology.hpp"

namespace fegpu::wellbore {

namespace {

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

} // namespace

void WellboreModel::residual(const DofView &u, const DofView &R) {
  StepPhase phase("fegpu::wellbore::residual", "residual");
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
  const auto reaction = reaction_;
  Kokkos::parallel_for(
      "fegpu::wellbore::residual_loads", range(0, 2 * nn), KOKKOS_LAMBDA(Index d) {
        const Index n = d % nn;
        const int c = d / nn;
        const double r = R(n, c) - f(n, c);
        reaction(n, c) = fixed(d) ? r : 0.0;
        R(n, c) = fixed(d) ? 0.0 : r;
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

} // namespace fegpu::wellbore
