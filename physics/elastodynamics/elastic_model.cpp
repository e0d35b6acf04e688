/// \file elastic_model.cpp
/// ElasticModel set-up: materials by block, colouring, the Jacobian check, lumped mass; the
/// constraints, loads and initial state it gives the integrator.
#include "elastic_model.hpp"

#include "elastic_kernels.hpp"
#include "fegpu/core/error.hpp"
#include "fegpu/input/expression.hpp"
#include "fegpu/mesh/topology.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace fegpu::elastic {

namespace {

Material make_material(const MaterialSpec &s, int dim) {
  const double E = s.youngs_modulus, nu = s.poissons_ratio;
  Material m;
  m.mu = E / (2 * (1 + nu));
  m.lambda_3d = E * nu / ((1 + nu) * (1 - 2 * nu));
  m.lambda = s.plane_stress ? 2 * m.lambda_3d * m.mu / (m.lambda_3d + 2 * m.mu) : m.lambda_3d;
  m.density = s.density;
  m.thickness = s.thickness;
  m.plane_stress = s.plane_stress;
  if (dim == 3) m.lambda = m.lambda_3d, m.thickness = 1, m.plane_stress = false;
  return m;
}

} // namespace

ElasticModel::ElasticModel(const HostMesh &mesh, Config config) : host_mesh_(mesh), config_(std::move(config)) {
  FEGPU_CHECK(mesh.type == ElementType::Tri3 || mesh.type == ElementType::Tri6 || mesh.type == ElementType::Tet4 ||
                  mesh.type == ElementType::Tet10,
              "elastodynamics needs T3, T6, TET4 or TET10");
  dim_ = element_info(mesh.type).dim;
  mesh_ = upload(mesh);
  {
    Kokkos::Profiling::ScopedRegion r("fegpu::elastic::coloring");
    const Crs n2e = build_node2elem(mesh_);
    coloring_ = color_elements(mesh_, n2e, config_.coloring);
  }
  // Materials by block.
  const Index ne = mesh_.num_elems();
  std::vector<Index> elem_mat(ne, -1);
  for (std::size_t k = 0; k < config_.materials.size(); ++k) {
    const auto &spec = config_.materials[k];
    materials_h_.push_back(make_material(spec, dim_));
    for (const auto &b : mesh.blocks) {
      const bool mine =
          spec.blocks.empty() || std::find(spec.blocks.begin(), spec.blocks.end(), b.name) != spec.blocks.end();
      if (!mine) continue;
      for (Index e = b.begin; e < b.end; ++e) {
        if (elem_mat[e] >= 0) throw InputError("block '" + b.name + "' is given two materials");
        elem_mat[e] = static_cast<Index>(k);
      }
    }
  }
  for (const auto &b : mesh.blocks)
    if (b.end > b.begin && elem_mat[b.begin] < 0) throw InputError("block '" + b.name + "' has no material");
  elem_material_h_ = elem_mat;
  materials_ = DeviceView<Material *>("fegpu::elastic::materials", materials_h_.size());
  auto mats_h = Kokkos::create_mirror_view(materials_);
  for (std::size_t k = 0; k < materials_h_.size(); ++k)
    mats_h(k) = materials_h_[k];
  Kokkos::deep_copy(materials_, mats_h);
  elem_material_ = IndexView("fegpu::elastic::elem_material", ne);
  Kokkos::deep_copy(elem_material_, Kokkos::View<Index *, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                                        elem_mat.data(), ne));

  // Validity: every element must have positive det J at its integration points.
  if (const Index e = kernels::first_inverted(mesh_); e >= 0)
    throw InputError(element_place(mesh_, e) +
                     " is inverted or degenerate (det J at an integration point <= 0, or below 1e-8 of its longest "
                     "side squared)");

  straight_ = kernels::straight_edged(mesh_);

  original_gid_ = mesh_.node_gid;
  top_gid_ = kernels::largest(original_gid_);
  for (const auto &ns : mesh_.node_sets) {
    original_node_sets_.push_back(ns.nodes);
    node_set_store_.emplace_back("fegpu::mesh::node_set");
  }
  compute_mass();
}

void ElasticModel::compute_mass() {
  mass_ = mass_store_.view<DofView>(mesh_.num_nodes(), dim_);
  Kokkos::deep_copy(ExecSpace(), mass_, 0.0);
  kernels::lumped_mass(mesh_, materials_, elem_material_, config_.scatter, coloring_, mass_);
}

void ElasticModel::set_topology(const ConnView &elem2node, const CoordView &coords, const IndexView &origin,
                                const GlobalIdView &ids) {
  FEGPU_CHECK(elem2node.extent(0) == mesh_.elem2node.extent(0) && coords.extent(0) == origin.extent(0),
              "set_topology: one connectivity row per element and one origin per node");
  mesh_.elem2node = elem2node;
  mesh_.coords = coords;
  follow_connectivity(coloring_, elem2node);
  // Storage kept from one insertion to the next: an insertion allocates nothing here.
  const Index n = static_cast<Index>(origin.extent(0));
  mesh_.node_gid = gid_store_.view(n);
  if (ids.extent(0))
    Kokkos::deep_copy(ExecSpace(), mesh_.node_gid, ids);
  else
    split_node_ids(original_gid_, top_gid_, elem2node, IndexView(), origin, lowest_place_.view(n + original_nodes()),
                   mesh_.node_gid);
  const DeviceView<uint8_t *> member = set_member_.view(original_nodes());
  for (std::size_t k = 0; k < mesh_.node_sets.size(); ++k) {
    mesh_.node_sets[k].nodes = node_set_store_[k].view(kernels::mark_node_set(original_node_sets_[k], origin, member));
    kernels::fill_node_set(member, origin, mesh_.node_sets[k].nodes);
  }
  compute_mass();
}

std::string ElasticModel::description() const {
  char line[256];
  std::snprintf(line, sizeof line,
                "mesh: %d nodes, %d %s elements; %d colours (%s, largest %d, smallest %d%s); scatter: %s",
                mesh_.num_nodes(), mesh_.num_elems(), exodus_name(mesh_.type).c_str(), coloring_.num_colors,
                to_string(config_.coloring).c_str(), coloring_.largest(), coloring_.smallest(),
                coloring_.num_sweeps() > 1 ? "; border, then interior" : "", to_string(config_.scatter).c_str());
  return line;
}

double ElasticModel::critical_time_step() const {
  const double lambda_max = kernels::max_eigenvalue(mesh_, materials_, elem_material_);
  // The power iteration approaches lambda from below; 1% keeps the bound on the safe side.
  return 2.0 / std::sqrt(1.01 * lambda_max);
}

void ElasticModel::add_internal_force(const DofView &u, const DofView &f, Sweep sweep) {
  kernels::internal_force(mesh_, materials_, elem_material_, config_.scatter, coloring_, u, f, sweep, straight_);
}

void ElasticModel::add_internal_force(const DofView &u, const DofView &f, const DofView &stress) {
  kernels::internal_force(mesh_, materials_, elem_material_, config_.scatter, coloring_, u, f, Sweep::All, straight_,
                          stress);
}

void ElasticModel::screen_stresses(const DofView &u, const DofView &f, const kernels::ElementScreen &screen) {
  kernels::internal_force(mesh_, materials_, elem_material_, config_.scatter, coloring_, u, f, Sweep::All, straight_,
                          {}, screen);
}

void ElasticModel::nodal_measure(const DofView &out) const {
  kernels::nodal_measure(mesh_, config_.scatter, coloring_, out);
}

bool ElasticModel::split_sweeps(const std::vector<char> &border) {
  coloring_ = split_coloring(coloring_, elements_touching(host_mesh_, border), build_node2elem(mesh_), mesh_.elem2node);
  return true;
}

DofView ElasticModel::element_fields(const DofView &u) const {
  const DofView out = fields_store_.view<DofView>(mesh_.num_elems(), dim_ == 2 ? 6 : 8);
  kernels::element_fields(mesh_, materials_, elem_material_, u, out);
  return out;
}

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
      // On the device, into storage kept for the next insertion, which calls this again.
      if (constraint_dofs_.size() == out.size()) constraint_dofs_.emplace_back("fegpu::elastic::constrained_dofs");
      con.dofs = constraint_dofs_[out.size()].view(static_cast<Index>(nodes.extent(0)));
      kernels::node_dofs(nodes, c, nn, con.dofs);
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
        for (int c = 0; c < dim_; ++c)
          w[c * nn + nodes(i)] += bc.value[c];
    } else if (bc.kind == BoundarySpec::BodyForce) {
      // An acceleration g: each node's lumped mass times g, the mass of this rank's elements (the
      // ranks' parts sum to the node's, as its mass does), recomputed when nodes split. Built on
      // the device: it covers every node.
      LoadPattern p;
      p.function = bc.function;
      double g[3] = {0, 0, 0};
      for (int c = 0; c < dim_; ++c)
        g[c] = bc.value[c];
      kernels::body_force(mass_, g, p.dofs, p.weights);
      out.push_back(p);
      continue;
    } else if ((bc.kind == BoundarySpec::Traction || bc.kind == BoundarySpec::Pressure) && dim_ == 3) {
      face_loads(bc, w);
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
          px[k] = fxy[3 * (i * npf + k)];
          py[k] = fxy[3 * (i * npf + k) + 1];
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
    p.whole_at_nodes = bc.kind == BoundarySpec::Force;
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

void ElasticModel::face_loads(const BoundarySpec &bc, std::map<Index, double> &w) const {
  const Index nn = mesh_.num_nodes();
  const auto it = std::find_if(host_mesh_.side_sets.begin(), host_mesh_.side_sets.end(),
                               [&](const auto &s) { return s.name == bc.set; });
  FEGPU_CHECK(it != host_mesh_.side_sets.end(), "side set " + bc.set);
  const int npf = element_info(mesh_.type).nodes_per_facet; // TRI3 or TRI6 faces
  std::vector<Index> fnodes;
  std::vector<double> fxyz;
  facet_geometry(mesh_, it->a, it->b, fnodes, fxyz);
  // Dunavant's six-point rule of degree 4 on the triangle (weights of the unit triangle's area,
  // 1/2): exact for a quadratic face's shape functions times its area element.
  constexpr double a = 0.445948490915965, b = 0.091576213509771;
  constexpr double wa = 0.223381589678011 / 2, wb = 0.109951743655322 / 2;
  const double qp[6][3] = {{a, a, wa}, {1 - 2 * a, a, wa}, {a, 1 - 2 * a, wa},
                           {b, b, wb}, {1 - 2 * b, b, wb}, {b, 1 - 2 * b, wb}};
  for (std::size_t i = 0; i < it->a.size(); ++i) {
    const double *x = &fxyz[3 * i * npf];
    for (const auto &q : qp) {
      const double r = q[0], s = q[1], L[3] = {1 - r - s, r, s};
      const double dL[2][3] = {{-1, 1, 0}, {-1, 0, 1}}; // dL_k/dr, dL_k/ds
      double N[6], dN[2][6];
      for (int k = 0; k < 3; ++k) {
        N[k] = npf == 3 ? L[k] : L[k] * (2 * L[k] - 1);
        for (int c = 0; c < 2; ++c)
          dN[c][k] = npf == 3 ? dL[c][k] : (4 * L[k] - 1) * dL[c][k];
      }
      for (int k = 0; k < npf - 3; ++k) { // TRI6 mid-side node 3 + k on edge (k, k + 1)
        const int i0 = k, i1 = (k + 1) % 3;
        N[3 + k] = 4 * L[i0] * L[i1];
        for (int c = 0; c < 2; ++c)
          dN[c][3 + k] = 4 * (dL[c][i0] * L[i1] + L[i0] * dL[c][i1]);
      }
      double t[2][3] = {};
      for (int c = 0; c < 2; ++c)
        for (int k = 0; k < npf; ++k)
          for (int d = 0; d < 3; ++d)
            t[c][d] += dN[c][k] * x[3 * k + d];
      // Corners counter-clockwise seen from outside: t_r x t_s points out, its length the area
      // element.
      const double n[3] = {t[0][1] * t[1][2] - t[0][2] * t[1][1], t[0][2] * t[1][0] - t[0][0] * t[1][2],
                           t[0][0] * t[1][1] - t[0][1] * t[1][0]};
      const double jac = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
      for (int k = 0; k < npf; ++k)
        for (int d = 0; d < 3; ++d) {
          const double traction = bc.kind == BoundarySpec::Pressure ? -bc.value[0] * n[d] / jac : bc.value[d];
          w[d * nn + fnodes[i * npf + k]] += q[2] * N[k] * traction * jac;
        }
    }
  }
}

void ElasticModel::initial_state(const DofView &u, const DofView &v) const {
  const Index nn = mesh_.num_nodes();
  const auto xyz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mesh_.coords);
  // A labelled host array (the integrator's fields may be views without a label to mirror).
  Kokkos::View<Real **, Kokkos::LayoutLeft, Kokkos::HostSpace> h(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::elastic::initial_field"), nn, dim_);
  const auto fill = [&](const std::string(&expr)[3], const DofView &target) {
    for (int c = 0; c < dim_; ++c) {
      if (expr[c].empty()) {
        for (Index i = 0; i < nn; ++i)
          h(i, c) = 0;
        continue;
      }
      if (dim_ == 2) {
        const Expression f(expr[c], {"x", "y"});
        for (Index i = 0; i < nn; ++i)
          h(i, c) = f({xyz(i, 0), xyz(i, 1)});
      } else {
        const Expression f(expr[c], {"x", "y", "z"});
        for (Index i = 0; i < nn; ++i)
          h(i, c) = f({xyz(i, 0), xyz(i, 1), xyz(i, 2)});
      }
    }
    Kokkos::deep_copy(target, h);
  };
  fill(config_.initial_displacement, u);
  fill(config_.initial_velocity, v);
}

} // namespace fegpu::elastic
