#include "multigrid.hpp"

#include "fegpu/core/error.hpp"
#include "fegpu/mesh/generators.hpp"

#include <cmath>

namespace fegpu::wellbore {

HostMesh AnnulusSpec::generate() const { return generate_annulus(type, n_theta, n_r, r_in, r_out, grading, angle); }

namespace {

constexpr int kSweeps = 2;        // pre- and post-smoothing sweeps
constexpr Index kDenseDofs = 700; // the coarsest level has at most this many dofs: its inverse is dense

RealView inverse_diagonal(const CrsMatrix &A) {
  RealView d("fegpu::wellbore::mg_dinv", A.rows());
  inverse_diagonal(A, d);
  return d;
}

/// The Jacobi smoother's damping for A: 4 / (3 lambda_max) of D^-1 A, the textbook choice that
/// damps the upper two thirds of the spectrum. lambda_max by 20 power iterations in the D-inner
/// product (Rayleigh quotients approach it from below; 5% added). A fixed damping fails here: on
/// the thesis's N x N quarter meshes (cells 2.4 times longer radially than wide) lambda_max
/// passes 2 / 0.6 and a 0.6-damped smoother amplified the top modes, so the CG iterations grew
/// with N (24, 42, 146 for N = 16, 32, 62, p = 1).
double jacobi_damping(const CrsMatrix &A, const RealView &dinv) {
  const Index n = A.rows();
  RealView x("fegpu::wellbore::mg_power_x", n), y("fegpu::wellbore::mg_power_y", n);
  Kokkos::parallel_for(
      "fegpu::wellbore::mg_power_start", range(0, n), KOKKOS_LAMBDA(Index i) {
        x(i) = static_cast<double>((static_cast<unsigned>(i) * 2654435761u) % 1000u) / 1000.0 - 0.5;
      });
  double lambda = 0;
  for (int it = 0; it < 20; ++it) {
    spmv(A, x, y);
    double xAx = 0, xDx = 0;
    Kokkos::parallel_reduce(
        "fegpu::wellbore::mg_power_rayleigh", range(0, n),
        KOKKOS_LAMBDA(Index i, double &a, double &d) { a += x(i) * y(i), d += x(i) * x(i) / dinv(i); }, xAx, xDx);
    lambda = xAx / xDx;
    const double scale = 1 / std::sqrt(xDx);
    Kokkos::parallel_for(
        "fegpu::wellbore::mg_power_step", range(0, n), KOKKOS_LAMBDA(Index i) { x(i) = scale * dinv(i) * y(i); });
  }
  return 4 / (3 * 1.05 * lambda);
}

/// z += omega D^-1 (r - A z), `sweeps` times (t: work vector).
void jacobi(const CrsMatrix &A, const RealView &dinv, double omega, const RealView &r, const RealView &z,
            const RealView &t, int sweeps) {
  for (int s = 0; s < sweeps; ++s) {
    spmv(A, z, t);
    Kokkos::parallel_for(
        "fegpu::wellbore::jacobi", range(0, A.rows()),
        KOKKOS_LAMBDA(Index i) { z(i) += omega * dinv(i) * (r(i) - t(i)); });
  }
}

/// Where a point lies in a generated annulus: the cell (i radial, j angular) from its radius and
/// angle, refined to the element and reference coordinates by Newton on the neighbouring cells.
struct Locator {
  const AnnulusSpec &spec;
  const HostMesh &mesh;
  QuadBasis basis;

  int radial_cell(double r) const {
    const double t = (r - spec.r_in) / (spec.r_out - spec.r_in), g = spec.grading;
    const double k = std::abs(g - 1) < 1e-14 ? t * spec.n_r : std::log1p(t * (std::pow(g, spec.n_r) - 1)) / std::log(g);
    return std::clamp(static_cast<int>(std::floor(k)), 0, spec.n_r - 1);
  }
  /// Element and (xi, eta) of the point (x, y).
  Index locate(double x, double y, double &xi, double &eta) const {
    double th = std::atan2(y, x);
    if (th < 0) th += 2 * M_PI;
    const bool closed = std::abs(spec.angle - 360.0) < 1e-12;
    const int jc =
        std::clamp(static_cast<int>(std::floor(th / (spec.angle * M_PI / 180) * spec.n_theta)), 0, spec.n_theta - 1);
    const int ic = radial_cell(std::hypot(x, y));
    // The predicted cell holds the point unless round-off put it on a neighbour's side.
    Index best = static_cast<Index>(jc) * spec.n_r + ic; // the generator's cell order
    inverse_map(basis, mesh, best, x, y, xi, eta);
    double best_out = std::max(std::abs(xi), std::abs(eta));
    if (best_out <= 1 + 1e-12) return best;
    for (int dj = -1; dj <= 1; ++dj)
      for (int di = -1; di <= 1; ++di) {
        int i = ic + di, j = jc + dj;
        if (i < 0 || i >= spec.n_r) continue;
        if (j < 0 || j >= spec.n_theta) {
          if (!closed) continue;
          j = (j + spec.n_theta) % spec.n_theta;
        }
        const Index e = static_cast<Index>(j) * spec.n_r + i;
        double a = 0, b = 0;
        inverse_map(basis, mesh, e, x, y, a, b);
        const double out = std::max(std::abs(a), std::abs(b));
        if (out < best_out) best_out = out, best = e, xi = a, eta = b;
      }
    return best;
  }
};

/// Prolongation from the coarse level (its mesh and fixed dofs) to the fine one.
CrsMatrix prolongation(const HostMesh &fine, const std::vector<int> &fine_fixed, const AnnulusSpec &cspec,
                       const HostMesh &coarse, const std::vector<int> &coarse_fixed) {
  const Index nf = static_cast<Index>(fine.xyz.size() / 3), nc = static_cast<Index>(coarse.xyz.size() / 3);
  const Locator loc{cspec, coarse, QuadBasis(coarse.type)};
  const int npe = loc.basis.nodes;
  std::vector<Index> row_ptr(2 * nf + 1, 0), cols;
  std::vector<double> vals;
  std::vector<std::vector<std::pair<Index, double>>> rows(2 * nf);
  for (Index n = 0; n < nf; ++n) {
    double xi = 0, eta = 0, N[kMaxQuadNodes], dN[kMaxQuadNodes][2];
    const Index e = loc.locate(fine.xyz[3 * n], fine.xyz[3 * n + 1], xi, eta);
    loc.basis.eval(xi, eta, N, dN);
    for (int c = 0; c < 2; ++c) {
      const Index row = c * nf + n;
      if (fine_fixed[row]) continue;
      for (int k = 0; k < npe; ++k) {
        const Index col = c * nc + coarse.conn[npe * e + k];
        if (!coarse_fixed[col] && std::abs(N[k]) > 1e-14) rows[row].push_back({col, N[k]});
      }
    }
  }
  for (Index r = 0; r < 2 * nf; ++r) {
    row_ptr[r + 1] = row_ptr[r] + static_cast<Index>(rows[r].size());
    for (const auto &[c, v] : rows[r])
      cols.push_back(c), vals.push_back(v);
  }
  CrsMatrix P;
  P.num_cols = 2 * nc;
  P.row_ptr = to_device("fegpu::wellbore::P_row_ptr", row_ptr);
  P.cols = to_device("fegpu::wellbore::P_cols", cols);
  P.values = to_device("fegpu::wellbore::P_values", vals);
  return P;
}

/// A^-1 of a small symmetric positive definite CRS matrix, dense, by Cholesky on the host (once,
/// at set-up): the V-cycle's bottom is then one matrix-vector product. Conjugate gradients there
/// took up to 200 steps a cycle, each waiting twice for the device: on the H100 the thesis's l = 1
/// Q4 mesh spent 1.8 ms a preconditioned iteration, most of it at the bottom.
DeviceView<double **> dense_inverse(const CrsMatrix &A) {
  const Index n = A.rows();
  const auto rp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.row_ptr);
  const auto cols = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.cols);
  const auto vals = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.values);
  std::vector<double> L(static_cast<std::size_t>(n) * n, 0.0); // row-major; the lower triangle is used
  for (Index i = 0; i < n; ++i)
    for (Index q = rp(i); q < rp(i + 1); ++q)
      L[static_cast<std::size_t>(i) * n + cols(q)] = vals(q);
  const auto at = [&](Index i, Index j) -> double & { return L[static_cast<std::size_t>(i) * n + j]; };
  for (Index j = 0; j < n; ++j) { // A = L L^T
    double d = at(j, j);
    for (Index k = 0; k < j; ++k)
      d -= at(j, k) * at(j, k);
    if (!(d > 0)) throw RunError("multigrid: the coarsest level's matrix is not positive definite");
    at(j, j) = std::sqrt(d);
    for (Index i = j + 1; i < n; ++i) {
      double s = at(i, j);
      for (Index k = 0; k < j; ++k)
        s -= at(i, k) * at(j, k);
      at(i, j) = s / at(j, j);
    }
  }
  // Column c of A^-1: L y = e_c, then L^T x = y.
  DeviceView<double **> inv(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::wellbore::mg_coarse_inverse"), n,
                            n);
  auto h = Kokkos::create_mirror_view(inv);
  std::vector<double> x(n);
  for (Index c = 0; c < n; ++c) {
    for (Index i = 0; i < n; ++i) {
      double s = i == c ? 1.0 : 0.0;
      for (Index k = c; k < i; ++k)
        s -= at(i, k) * x[k];
      x[i] = i < c ? 0.0 : s / at(i, i);
    }
    for (Index i = n - 1; i >= 0; --i) {
      double s = x[i];
      for (Index k = i + 1; k < n; ++k)
        s -= at(k, i) * x[k];
      x[i] = s / at(i, i);
    }
    for (Index i = 0; i < n; ++i)
      h(i, c) = x[i];
  }
  Kokkos::deep_copy(inv, h);
  return inv;
}

std::vector<int> host_fixed(const WellboreModel &m) {
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.fixed());
  return std::vector<int>(h.data(), h.data() + h.size());
}

} // namespace

Multigrid::Multigrid(const AnnulusSpec &fine, const Config &config, int coarsest_cells) {
  Kokkos::Profiling::ScopedRegion region("fegpu::wellbore::multigrid_setup");
  Config c = config;
  c.normal_stress.clear(); // the levels need only the stiffness and the fixed dofs
  AnnulusSpec spec = fine;
  HostMesh finer = fine.generate();
  std::vector<int> finer_fixed;
  {
    WellboreModel top(finer, c);
    finer_fixed = host_fixed(top);
    // The fine level's damping from its elastic stiffness: a tangent's spectrum lies below it.
    DofView zero("fegpu::wellbore::mg_zero", top.num_nodes(), 2);
    top.jacobian(zero);
    omega0_ = jacobi_damping(top.matrix(), inverse_diagonal(top.matrix()));
  }
  const auto dofs = [&](const AnnulusSpec &a) {
    const int p = element_info(a.type).order;
    return 2 * static_cast<Index>(p * a.n_theta + 1) * (p * a.n_r + 1);
  };
  while (spec.n_theta > coarsest_cells || spec.n_r > coarsest_cells || dofs(spec) > kDenseDofs) {
    AnnulusSpec cs = spec;
    cs.n_theta = std::max(1, (spec.n_theta + 1) / 2), cs.n_r = std::max(1, (spec.n_r + 1) / 2);
    // The same overall growth of the cells outward: g_c^(n_c) = g^n.
    cs.grading = std::pow(spec.grading, double(spec.n_r) / cs.n_r);
    HostMesh coarse = cs.generate();
    Level L;
    L.model = std::make_unique<WellboreModel>(coarse, c);
    const std::vector<int> coarse_fixed = host_fixed(*L.model);
    L.P = prolongation(finer, finer_fixed, cs, coarse, coarse_fixed);
    DofView zero("fegpu::wellbore::mg_zero", L.model->num_nodes(), 2);
    L.model->jacobian(zero);
    L.dinv = inverse_diagonal(L.model->matrix());
    L.omega = jacobi_damping(L.model->matrix(), L.dinv);
    const Index n = L.model->num_dofs();
    L.r = RealView("fegpu::wellbore::mg_r", n), L.z = RealView("fegpu::wellbore::mg_z", n);
    L.t = RealView("fegpu::wellbore::mg_t", n);
    coarse_.push_back(std::move(L));
    spec = cs, finer = std::move(coarse), finer_fixed = coarse_fixed;
  }
  if (coarse_.empty())
    throw InputError("multigrid: the mesh is already at most " + std::to_string(coarsest_cells) +
                     " cells across; no coarser level");
  coarse_inverse_ = dense_inverse(coarse_.back().model->matrix());
}

Multigrid::~Multigrid() = default;

void Multigrid::apply(const CrsMatrix &A0, const RealView &dinv0, const RealView &r, const RealView &z) const {
  cycle(0, A0, dinv0, r, z);
}

void Multigrid::cycle(int level, const CrsMatrix &A, const RealView &dinv, const RealView &r, const RealView &z) const {
  Kokkos::deep_copy(z, 0.0);
  if (level == levels() - 1) { // z = A^-1 r
    const auto inv = coarse_inverse_;
    Kokkos::parallel_for(
        "fegpu::wellbore::mg_coarse_solve", range(0, A.rows()), KOKKOS_LAMBDA(Index i) {
          double s = 0;
          for (Index j = 0; j < static_cast<Index>(inv.extent(1)); ++j)
            s += inv(i, j) * r(j);
          z(i) = s;
        });
    return;
  }
  const Level &next = coarse_[level];
  if (level == 0 && fine_work_.extent(0) != static_cast<std::size_t>(A.rows()))
    fine_work_ = RealView("fegpu::wellbore::mg_work", A.rows());
  const RealView t = level == 0 ? fine_work_ : coarse_[level - 1].t;
  const double omega = level == 0 ? omega0_ : coarse_[level - 1].omega;
  jacobi(A, dinv, omega, r, z, t, kSweeps);
  // Restrict the residual: r_c = P^T (r - A z).
  spmv(A, z, t);
  const auto P = next.P;
  const auto rc = next.r;
  Kokkos::deep_copy(rc, 0.0);
  Kokkos::parallel_for(
      "fegpu::wellbore::restrict", range(0, A.rows()), KOKKOS_LAMBDA(Index i) {
        const double res = r(i) - t(i);
        for (Index q = P.row_ptr(i); q < P.row_ptr(i + 1); ++q)
          Kokkos::atomic_add(&rc(P.cols(q)), P.values(q) * res);
      });
  cycle(level + 1, next.model->matrix(), next.dinv, next.r, next.z);
  // Prolong the correction: z += P z_c.
  spmv(P, next.z, z, 1.0);
  jacobi(A, dinv, omega, r, z, t, kSweeps);
}

} // namespace fegpu::wellbore
