/// \file elastic_model.cpp
/// ElasticModel set-up and its kernels: lumped mass, internal force, element stress, stability.
#include "elastic_model.hpp"

#include "fegpu/core/error.hpp"
#include "fegpu/mesh/topology.hpp"

#include <algorithm>
#include <cmath>

namespace fegpu::elastic {

namespace {

/// Gathers an element's coordinates and displacements.
template <int NPE> struct Gather {
  ConnView conn;
  CoordView xyz;
  KOKKOS_INLINE_FUNCTION void coords(Index e, double x[NPE], double y[NPE]) const {
    for (int a = 0; a < NPE; ++a) {
      const Index n = conn(e, a);
      x[a] = xyz(n, 0);
      y[a] = xyz(n, 1);
    }
  }
  KOKKOS_INLINE_FUNCTION void field(Index e, const DofView &u, double ux[NPE], double uy[NPE]) const {
    for (int a = 0; a < NPE; ++a) {
      const Index n = conn(e, a);
      ux[a] = u(n, 0);
      uy[a] = u(n, 1);
    }
  }
};

template <int NPE> struct InternalForce {
  Gather<NPE> g;
  DeviceView<Material *> mats;
  IndexView elem_mat;
  DofView u;
  template <class Add> KOKKOS_INLINE_FUNCTION void operator()(Index e, const Add &add) const {
    double x[NPE], y[NPE], ux[NPE], uy[NPE], fx[NPE], fy[NPE];
    g.coords(e, x, y);
    g.field(e, u, ux, uy);
    internal_force<NPE>(mats(elem_mat(e)), x, y, ux, uy, fx, fy);
    for (int a = 0; a < NPE; ++a) {
      const Index n = g.conn(e, a);
      add(n, 0, fx[a]);
      add(n, 1, fy[a]);
    }
  }
};

template <int NPE> struct LumpedMass {
  Gather<NPE> g;
  DeviceView<Material *> mats;
  IndexView elem_mat;
  template <class Add> KOKKOS_INLINE_FUNCTION void operator()(Index e, const Add &add) const {
    double x[NPE], y[NPE], min_det;
    g.coords(e, x, y);
    const Material m = mats(elem_mat(e));
    const double mass = m.density * m.thickness * area<NPE>(x, y, min_det);
    for (int a = 0; a < NPE; ++a) {
      add(g.conn(e, a), 0, mass * mass_fraction<NPE>(a));
      add(g.conn(e, a), 1, mass * mass_fraction<NPE>(a));
    }
  }
};

template <int NPE> Gather<NPE> gather(const Mesh &m) { return {m.elem2node, m.coords}; }

Material make_material(const MaterialSpec &s) {
  const double E = s.youngs_modulus, nu = s.poissons_ratio;
  Material m;
  m.mu = E / (2 * (1 + nu));
  m.lambda_3d = E * nu / ((1 + nu) * (1 - 2 * nu));
  m.lambda = s.plane_stress ? 2 * m.lambda_3d * m.mu / (m.lambda_3d + 2 * m.mu) : m.lambda_3d;
  m.density = s.density;
  m.thickness = s.thickness;
  m.plane_stress = s.plane_stress;
  return m;
}

} // namespace

// Kernels launched from named function templates: nvcc accepts no device lambda inside a
// generic lambda, and none in a private member.
namespace kernels {

IndexView node_dofs(const IndexView &nodes, int comp, Index num_nodes) {
  IndexView dofs(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::elastic::constrained_dofs"), nodes.extent(0));
  Kokkos::parallel_for(
      "fegpu::elastic::node_dofs", range(0, static_cast<Index>(nodes.extent(0))),
      KOKKOS_LAMBDA(Index i) { dofs(i) = comp * num_nodes + nodes(i); });
  return dofs;
}

/// The members of a grown node set: every node whose origin is in the original set.
IndexView grow_node_set(const IndexView &original, const IndexView &origin, Index original_nodes) {
  DeviceView<uint8_t *> member("fegpu::elastic::node_set_member", original_nodes);
  Kokkos::parallel_for(
      "fegpu::elastic::mark_node_set", range(0, static_cast<Index>(original.extent(0))),
      KOKKOS_LAMBDA(Index i) { member(original(i)) = 1; });
  const Index n = static_cast<Index>(origin.extent(0));
  Index count = 0;
  Kokkos::parallel_reduce(
      "fegpu::elastic::count_node_set", range(0, n), KOKKOS_LAMBDA(Index i, Index & c) { c += member(origin(i)); },
      count);
  IndexView out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::mesh::node_set"), count);
  Kokkos::parallel_scan(
      "fegpu::elastic::fill_node_set", range(0, n), KOKKOS_LAMBDA(Index i, Index & k, bool final) {
        if (!member(origin(i))) return;
        if (final) out(k) = i;
        ++k;
      });
  return out;
}

/// Global ids once nodes have split (origin: the input node each node descends from). Each input
/// node's id stays with its lowest-numbered copy; the other copies take new ids above the largest
/// input id, in index order. So ids stay unique, and an output node still names its input node.
GlobalIdView split_node_ids(const GlobalIdView &input, const IndexView &origin) {
  const Index n = static_cast<Index>(origin.extent(0)), n0 = static_cast<Index>(input.extent(0));
  IndexView first(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::elastic::first_copy"), n0);
  Kokkos::deep_copy(first, n);
  Kokkos::parallel_for(
      "fegpu::elastic::first_copy", range(0, n), KOKKOS_LAMBDA(Index i) { Kokkos::atomic_min(&first(origin(i)), i); });
  GlobalId top = 0;
  Kokkos::parallel_reduce(
      "fegpu::elastic::largest_id", range(0, n0),
      KOKKOS_LAMBDA(Index i, GlobalId & m) { m = input(i) > m ? input(i) : m; }, Kokkos::Max<GlobalId>(top));
  GlobalIdView ids(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::mesh::node_gid"), n);
  Kokkos::parallel_scan(
      "fegpu::elastic::split_node_ids", range(0, n), KOKKOS_LAMBDA(Index i, GlobalId & k, bool final) {
        const bool kept = first(origin(i)) == i;
        if (final) ids(i) = kept ? input(origin(i)) : top + 1 + k;
        if (!kept) ++k;
      });
  return ids;
}

template <int N> double min_jacobian(const Mesh &mesh) {
  double min_det = 0;
  const auto g = gather<N>(mesh);
  Kokkos::parallel_reduce(
      "fegpu::elastic::check_jacobian", range(0, mesh.num_elems()),
      KOKKOS_LAMBDA(Index e, double &mn) {
        double x[N], y[N], md;
        g.coords(e, x, y);
        area<N>(x, y, md);
        mn = md < mn ? md : mn;
      },
      Kokkos::Min<double>(min_det));
  return min_det;
}

template <int N> double max_eigenvalue(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &em) {
  double lambda_max = 0;
  const auto g = gather<N>(mesh);
  Kokkos::parallel_reduce(
      "fegpu::elastic::element_eigenvalue", range(0, mesh.num_elems()),
      KOKKOS_LAMBDA(Index e, double &mx) {
        double x[N], y[N];
        g.coords(e, x, y);
        const double l = elastic::max_eigenvalue<N>(mats(em(e)), x, y);
        mx = l > mx ? l : mx;
      },
      Kokkos::Max<double>(lambda_max));
  return lambda_max;
}

template <int N>
void element_stress(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &em, const DofView &u,
                    const DeviceView<Real *[3]> &stress, const RealView &energy) {
  const auto g = gather<N>(mesh);
  Kokkos::parallel_for(
      "fegpu::elastic::element_stress", range(0, mesh.num_elems()), KOKKOS_LAMBDA(Index e) {
        double x[N], y[N], ux[N], uy[N], fx[N], fy[N], s[3], w;
        g.coords(e, x, y);
        g.field(e, u, ux, uy);
        internal_force<N>(mats(em(e)), x, y, ux, uy, fx, fy, s, &w);
        for (int k = 0; k < 3; ++k)
          stress(e, k) = s[k];
        energy(e) = w;
      });
}

} // namespace kernels

ElasticModel::ElasticModel(const HostMesh &mesh, Config config) : host_mesh_(mesh), config_(std::move(config)) {
  FEGPU_CHECK(mesh.type == ElementType::Tri3 || mesh.type == ElementType::Tri6, "elastodynamics needs T3 or T6");
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
    materials_h_.push_back(make_material(spec));
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
  const double min_det =
      mesh_.type == ElementType::Tri3 ? kernels::min_jacobian<3>(mesh_) : kernels::min_jacobian<6>(mesh_);
  if (!(min_det > 0)) throw InputError("the mesh has an inverted or degenerate element (det J <= 0)");

  original_gid_ = mesh_.node_gid;
  for (const auto &ns : mesh_.node_sets)
    original_node_sets_.push_back(ns.nodes);
  compute_mass();
}

void ElasticModel::compute_mass() {
  const Index ne = mesh_.num_elems();
  mass_ = DofView("fegpu::elastic::mass", mesh_.num_nodes(), 2);
  if (mesh_.type == ElementType::Tri3)
    scatter_elements("fegpu::elastic::lumped_mass", config_.scatter, coloring_, ne, mass_,
                     LumpedMass<3>{gather<3>(mesh_), materials_, elem_material_});
  else
    scatter_elements("fegpu::elastic::lumped_mass", config_.scatter, coloring_, ne, mass_,
                     LumpedMass<6>{gather<6>(mesh_), materials_, elem_material_});
}

void ElasticModel::set_topology(const ConnView &elem2node, const CoordView &coords, const IndexView &origin) {
  FEGPU_CHECK(elem2node.extent(0) == mesh_.elem2node.extent(0) && coords.extent(0) == origin.extent(0),
              "set_topology: one connectivity row per element and one origin per node");
  mesh_.elem2node = elem2node;
  mesh_.coords = coords;
  mesh_.node_gid = kernels::split_node_ids(original_gid_, origin);
  for (std::size_t k = 0; k < mesh_.node_sets.size(); ++k)
    mesh_.node_sets[k].nodes = kernels::grow_node_set(original_node_sets_[k], origin, original_nodes());
  compute_mass();
}

double ElasticModel::critical_time_step() const {
  const double lambda_max = mesh_.type == ElementType::Tri3
                                ? kernels::max_eigenvalue<3>(mesh_, materials_, elem_material_)
                                : kernels::max_eigenvalue<6>(mesh_, materials_, elem_material_);
  // The power iteration approaches lambda from below; 1% keeps the bound on the safe side.
  return 2.0 / std::sqrt(1.01 * lambda_max);
}

void ElasticModel::add_internal_force(const DofView &u, const DofView &f) {
  if (mesh_.type == ElementType::Tri3)
    scatter_elements("fegpu::elastic::internal_force", config_.scatter, coloring_, mesh_.num_elems(), f,
                     InternalForce<3>{gather<3>(mesh_), materials_, elem_material_, u});
  else
    scatter_elements("fegpu::elastic::internal_force", config_.scatter, coloring_, mesh_.num_elems(), f,
                     InternalForce<6>{gather<6>(mesh_), materials_, elem_material_, u});
}

void ElasticModel::element_stress(const DofView &u, const DeviceView<Real *[3]> &stress, const RealView &energy) const {
  if (mesh_.type == ElementType::Tri3)
    kernels::element_stress<3>(mesh_, materials_, elem_material_, u, stress, energy);
  else
    kernels::element_stress<6>(mesh_, materials_, elem_material_, u, stress, energy);
}

} // namespace fegpu::elastic
