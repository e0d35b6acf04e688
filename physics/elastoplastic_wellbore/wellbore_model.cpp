/// \file wellbore_model.cpp
/// WellboreModel set-up: the integration-point operators (B and W det J per element), the
/// matrix graph, the loads and fixed dofs; the load factor and the committed state.
#include "wellbore_model.hpp"

#include "fegpu/core/error.hpp"
#include "fegpu/mesh/topology.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace fegpu::wellbore {

namespace {

constexpr int kMaxNeighbours = 128; // nodes sharing an element with one node

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
  check_supports(h);
}

void WellboreModel::check_supports(const HostMesh &h) const {
  // The fixed dofs must stop the three rigid motions of the plane, (1, 0), (0, 1) and (-y, x):
  // else the stiffness is singular and no solver can find the displacement. Each fixed dof is a
  // row (tx, ty, rotation) of the motions' values there; Gram-Schmidt on the three columns finds
  // the motions no combination of the others covers. Coordinates about the centroid of the
  // mesh's bounding box, in its size, so the rotation column is scaled like the others.
  const auto fixed = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fixed_);
  const Index nn = num_nodes();
  double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
  for (Index n = 0; n < nn; ++n)
    for (int d = 0; d < 2; ++d)
      lo[d] = std::min(lo[d], h.xyz[3 * n + d]), hi[d] = std::max(hi[d], h.xyz[3 * n + d]);
  const double c[2] = {0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1])};
  const double size = std::max({hi[0] - lo[0], hi[1] - lo[1], 1e-300});
  std::vector<double> col[3];
  for (Index d = 0; d < 2 * nn; ++d) {
    if (!fixed(d)) continue;
    const Index n = d % nn;
    const bool x = d < nn;
    col[0].push_back(x ? 1 : 0), col[1].push_back(x ? 0 : 1);
    col[2].push_back(x ? -(h.xyz[3 * n + 1] - c[1]) / size : (h.xyz[3 * n] - c[0]) / size);
  }
  static const char *motion[3] = {"a translation in x", "a translation in y", "a rotation"};
  std::string free;
  for (int k = 0; k < 3; ++k) {
    double norm0 = 0, norm = 0;
    for (double v : col[k])
      norm0 += v * v;
    for (int j = 0; j < k; ++j) { // against the earlier (orthonormal, or empty) columns
      double p = 0;
      for (std::size_t i = 0; i < col[k].size(); ++i)
        p += col[k][i] * col[j][i];
      for (std::size_t i = 0; i < col[k].size(); ++i)
        col[k][i] -= p * col[j][i];
    }
    for (double v : col[k])
      norm += v * v;
    if (norm <= 1e-20 * std::max(norm0, 1.0)) {
      free += (free.empty() ? "" : " and ") + std::string(motion[k]);
      std::fill(col[k].begin(), col[k].end(), 0.0);
    } else {
      for (double &v : col[k])
        v /= std::sqrt(norm);
    }
  }
  if (!free.empty())
    throw InputError("boundary_conditions: the fixed displacements leave the body free to move (" + free +
                     " is not prevented), so its stiffness is singular; fix more components (a node set, or pins "
                     "at points)");
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
  Index first_bad = ne;
  Kokkos::parallel_reduce(
      "fegpu::wellbore::operators", range(0, ne),
      KOKKOS_LAMBDA(Index e, Index & lo) {
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
          if (!(det > 0) && e < lo) lo = e;
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
      Kokkos::Min<Index>(first_bad));
  if (first_bad < ne)
    throw InputError(element_place(mesh_, first_bad) +
                     " has an integration point with a non-positive Jacobian (inverted or clockwise)");
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
  reaction_ = DofView("fegpu::wellbore::reaction", nn, 2);
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
  const Index ns = static_cast<Index>(elems.extent(0));
  // f_k += int N_k sigma_nn n ds with n ds = (dy, -dx) along a counter-clockwise edge: each
  // side's nodal shares on the device, summed into the nodes on the host in the side set's order
  // (atomic adds would sum a node's two sides in either order: runs differing in their last bits).
  DeviceView<double *[4][3]> share("fegpu::wellbore::normal_stress_shares", ns);
  Kokkos::parallel_for(
      "fegpu::wellbore::normal_stress", range(0, ns), KOKKOS_LAMBDA(Index i) {
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
            share(i, k, 0) = double(conn(e, facet_node(type, fc, k)));
            share(i, k, 1) += w * N[k] * value * dy;
            share(i, k, 2) += -w * N[k] * value * dx;
          }
        }
      });
  const auto sh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), share);
  const auto fh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f);
  for (Index i = 0; i < ns; ++i)
    for (int k = 0; k < nf; ++k) {
      const Index n = static_cast<Index>(sh(i, k, 0));
      fh(n, 0) += sh(i, k, 1), fh(n, 1) += sh(i, k, 2);
    }
  Kokkos::deep_copy(f, fh);
}

void WellboreModel::commit(const DofView &u) {
  Kokkos::deep_copy(u_n_, u);
  Kokkos::deep_copy(sigma_n_, sigma_);
  Kokkos::deep_copy(eqps_n_, eqps_);
}

void WellboreModel::save(CheckpointWriter &w) const {
  w.put_view("wellbore.u_n", u_n_);
  w.put_view("wellbore.sigma_n", sigma_n_);
  w.put_view("wellbore.eqps_n", eqps_n_);
  w.put_view("wellbore.regime", regime_);
  w.put_view("wellbore.reaction", reaction_);
}

void WellboreModel::restore(const CheckpointReader &r) {
  r.get_view("wellbore.u_n", u_n_);
  r.get_view("wellbore.sigma_n", sigma_n_);
  r.get_view("wellbore.eqps_n", eqps_n_);
  r.get_view("wellbore.regime", regime_);
  r.get_view("wellbore.reaction", reaction_);
  Kokkos::deep_copy(sigma_, sigma_n_);
  Kokkos::deep_copy(eqps_, eqps_n_);
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
