/// \file model_io.cpp
/// The host-side parts of ElasticModel: boundary conditions and initial state turned into the
/// driver's device arrays at set-up, and the output fields. No kernels here.
#include "elastic_model.hpp"
#include "fegpu/core/error.hpp"
#include "fegpu/input/expression.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace fegpu::elastic {

std::vector<Constraint> ElasticModel::constraints() const {
  std::vector<Constraint> out;
  const Index nn = mesh_.num_nodes();
  for (const auto &bc : config_.boundary) {
    if (bc.kind != BoundarySpec::Displacement && bc.kind != BoundarySpec::Velocity) continue;
    const IndexView nodes = mesh_.node_set(bc.set).nodes;
    for (int c : bc.components) {
      Constraint con;
      con.kind = bc.kind == BoundarySpec::Displacement ? Constraint::Displacement : Constraint::Velocity;
      con.value = bc.value[0];
      con.function = bc.function;
      con.dofs = kernels::node_dofs(nodes, c, nn); // on the device: re-read after every insertion
      out.push_back(con);
    }
  }
  return out;
}

std::vector<LoadPattern> ElasticModel::loads() const {
  std::vector<LoadPattern> out;
  const Index nn = mesh_.num_nodes();
  const HostMesh &h = host_mesh_;
  const ElementInfo info = element_info(h.type);
  for (const auto &bc : config_.boundary) {
    std::map<Index, double> w; // dof -> weight
    if (bc.kind == BoundarySpec::Force) {
      const auto nodes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mesh_.node_set(bc.set).nodes);
      for (std::size_t i = 0; i < nodes.extent(0); ++i)
        for (int c = 0; c < 2; ++c)
          w[c * nn + nodes(i)] += bc.value[c];
    } else if (bc.kind == BoundarySpec::Traction || bc.kind == BoundarySpec::Pressure) {
      const auto it =
          std::find_if(h.side_sets.begin(), h.side_sets.end(), [&](const auto &s) { return s.name == bc.set; });
      FEGPU_CHECK(it != h.side_sets.end(), "side set " + bc.set);
      // The facets' current nodes and coordinates (nodes may have split since the mesh was read).
      const int npf = info.nodes_per_facet;
      std::vector<Index> fnodes;
      std::vector<double> fxy;
      facet_geometry(mesh_, it->a, it->b, fnodes, fxy);
      // Consistent nodal forces: int N_k t ds along each edge, three-point Gauss-Legendre.
      const double gp[3] = {-std::sqrt(0.6), 0.0, std::sqrt(0.6)}, gw[3] = {5.0 / 9, 8.0 / 9, 5.0 / 9};
      for (std::size_t i = 0; i < it->a.size(); ++i) {
        Index nodes[3];
        double px[3], py[3];
        for (int k = 0; k < npf; ++k) {
          nodes[k] = fnodes[i * npf + k];
          px[k] = fxy[2 * (i * npf + k)];
          py[k] = fxy[2 * (i * npf + k) + 1];
        }
        const double thickness = materials_h_[elem_material_h_[it->a[i]]].thickness;
        for (int q = 0; q < 3; ++q) {
          const double s = gp[q];
          double N[3], dN[3];
          if (npf == 2) {
            N[0] = 0.5 * (1 - s), N[1] = 0.5 * (1 + s), dN[0] = -0.5, dN[1] = 0.5;
          } else {
            N[0] = 0.5 * s * (s - 1), N[1] = 0.5 * s * (s + 1), N[2] = 1 - s * s;
            dN[0] = s - 0.5, dN[1] = s + 0.5, dN[2] = -2 * s;
          }
          double tx = 0, ty = 0;
          for (int k = 0; k < npf; ++k) {
            tx += dN[k] * px[k];
            ty += dN[k] * py[k];
          }
          // Counter-clockwise elements: the outward normal is the tangent turned clockwise.
          const double len = std::hypot(tx, ty), nx = ty / len, ny = -tx / len;
          const double trac[2] = {bc.kind == BoundarySpec::Pressure ? -bc.value[0] * nx : bc.value[0],
                                  bc.kind == BoundarySpec::Pressure ? -bc.value[0] * ny : bc.value[1]};
          for (int k = 0; k < npf; ++k)
            for (int c = 0; c < 2; ++c)
              w[c * nn + nodes[k]] += gw[q] * N[k] * trac[c] * len * thickness;
        }
      }
    } else {
      continue;
    }
    LoadPattern p;
    p.function = bc.function;
    p.dofs = IndexView("fegpu::elastic::load_dofs", w.size());
    p.weights = RealView("fegpu::elastic::load_weights", w.size());
    auto d = Kokkos::create_mirror_view(p.dofs);
    auto v = Kokkos::create_mirror_view(p.weights);
    std::size_t i = 0;
    for (const auto &kv : w) {
      d(i) = kv.first;
      v(i++) = kv.second;
    }
    Kokkos::deep_copy(p.dofs, d);
    Kokkos::deep_copy(p.weights, v);
    out.push_back(p);
  }
  return out;
}

void ElasticModel::initial_state(const DofView &u, const DofView &v) const {
  const Index nn = mesh_.num_nodes();
  const auto xyz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mesh_.coords);
  const auto fill = [&](const std::string(&expr)[2], const DofView &target) {
    auto h = Kokkos::create_mirror_view(target);
    for (int c = 0; c < 2; ++c) {
      if (expr[c].empty()) {
        for (Index i = 0; i < nn; ++i)
          h(i, c) = 0;
        continue;
      }
      const Expression f(expr[c], {"x", "y"});
      for (Index i = 0; i < nn; ++i)
        h(i, c) = f({xyz(i, 0), xyz(i, 1)});
    }
    Kokkos::deep_copy(target, h);
  };
  fill(config_.initial_displacement, u);
  fill(config_.initial_velocity, v);
}

ExodusVariables ElasticModel::output_variables() const {
  return {{"displacement_x", "displacement_y", "velocity_x", "velocity_y", "acceleration_x", "acceleration_y"},
          {"stress_xx", "stress_yy", "stress_xy", "stress_zz", "von_mises", "strain_energy"},
          {}};
}

void ElasticModel::fill_output(const DofView &u, const DofView &v, const DofView &a,
                               std::vector<std::vector<double>> &nodal, std::vector<std::vector<double>> &element,
                               std::vector<double> & /*global*/) {
  const Index nn = mesh_.num_nodes(), ne = mesh_.num_elems();
  DeviceView<Real *[3]> stress(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::elastic::stress"), ne);
  RealView energy(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::elastic::energy"), ne);
  element_stress(u, stress, energy);
  nodal.assign(6, std::vector<double>(nn));
  for (int f = 0; f < 3; ++f) {
    const DofView &src = f == 0 ? u : f == 1 ? v : a;
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), src);
    for (Index i = 0; i < nn; ++i) {
      nodal[2 * f][i] = h(i, 0);
      nodal[2 * f + 1][i] = h(i, 1);
    }
  }
  auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), stress);
  auto w = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), energy);
  auto em = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), elem_material_);
  element.assign(6, std::vector<double>(ne));
  for (Index e = 0; e < ne; ++e) {
    const Material &m = materials_h_[em(e)];
    const double sxx = s(e, 0), syy = s(e, 1), sxy = s(e, 2);
    // Plane strain: sigma_zz = lambda (eps_xx + eps_yy) = nu (sigma_xx + sigma_yy).
    const double nu = m.lambda_3d / (2 * (m.lambda_3d + m.mu));
    const double szz = m.plane_stress ? 0.0 : nu * (sxx + syy);
    element[0][e] = sxx;
    element[1][e] = syy;
    element[2][e] = sxy;
    element[3][e] = szz;
    element[4][e] = std::sqrt(
        0.5 * ((sxx - syy) * (sxx - syy) + (syy - szz) * (syy - szz) + (szz - sxx) * (szz - sxx)) + 3 * sxy * sxy);
    element[5][e] = w(e);
  }
}

} // namespace fegpu::elastic
