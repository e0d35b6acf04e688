#pragma once
/// \file elastic_model.hpp
/// Linear elastodynamics of 2D bodies meshed with T3 or T6 triangles (plane strain or stress) and
/// of 3D bodies meshed with TET4 or TET10 tetrahedra, lumped mass, integrated by central
/// differences; the dimension is the element type's, and every part below serves both. The cohesive-fracture module
/// builds on it. Set-up in elastic_model.cpp, kernels in elastic_kernels.cpp, input in input.cpp, output in output.cpp,
/// the module's registration in module.cpp.
#include "elastic_kernels.hpp"
#include "fegpu/assembly/scatter.hpp"
#include "fegpu/driver/central_difference.hpp"
#include "fegpu/input/input.hpp"
#include "fegpu/mesh/coloring.hpp"
#include "fegpu/mesh/mesh.hpp"
#include "triangle.hpp"

#include <map>
#include <string>
#include <vector>

namespace fegpu::elastic {

struct MaterialSpec {
  std::string name;
  double density = 0, youngs_modulus = 0, poissons_ratio = 0;
  bool plane_stress = false; ///< plane: stress | strain
  double thickness = 1.0;
  std::vector<std::string> blocks; ///< empty: every block
};

/// An isotropic material for every block (tests, benchmarks, programs that build a Config).
inline MaterialSpec isotropic(double density, double youngs_modulus, double poissons_ratio, bool plane_stress = false) {
  MaterialSpec m;
  m.name = "material";
  m.density = density;
  m.youngs_modulus = youngs_modulus;
  m.poissons_ratio = poissons_ratio;
  m.plane_stress = plane_stress;
  return m;
}

struct BoundarySpec {
  enum Kind { Displacement, Velocity, Traction, Pressure, Force, BodyForce } kind = Displacement;
  std::string set;             ///< node set (displacement, velocity, force) or side set; none for a body force
  std::vector<int> components; ///< 0 = x, 1 = y, 2 = z (displacement, velocity)
  std::vector<double> value;   ///< one value, or a vector of the dimension's size (traction, force, and
                               ///< the body force's acceleration)
  TimeFunction function;
};

struct Config {
  std::vector<MaterialSpec> materials;
  std::vector<BoundarySpec> boundary;
  std::string initial_velocity[3], initial_displacement[3]; ///< expressions of x, y (, z) ("" = 0)
  ScatterStrategy scatter = ScatterStrategy::Coloring;
  ColoringAlgorithm coloring = ColoringAlgorithm::JonesPlassmann;
};

/// Reads materials, boundary_conditions, initial_conditions and solver from the input (shared by
/// the modules built on this one); checks set and block names against the mesh.
Config parse_config(const InputNode &root, const HostMesh &mesh);

class ElasticModel : public ExplicitModel {
public:
  ElasticModel(const HostMesh &mesh, Config config);

  std::string description() const override;
  Index num_nodes() const override { return mesh_.num_nodes(); }
  Index num_elements() const override { return mesh_.num_elems(); }
  int num_components() const override { return dim_; }
  int dim() const { return dim_; }
  DofView lumped_mass() const override { return mass_; }
  double critical_time_step() const override;
  std::vector<Constraint> constraints() const override;
  std::vector<LoadPattern> loads() const override;
  void initial_state(const DofView &u, const DofView &v) const override;
  void add_internal_force(const DofView &u, const DofView &f, Sweep sweep) override;
  /// add_internal_force over every element, and in the same pass stress += each element's mean
  /// stress times its area or volume at its nodes (kernels::internal_force).
  void add_internal_force(const DofView &u, const DofView &f, const DofView &stress);
  /// The elements' mean stresses at u against a bound (kernels::ElementScreen): in the pass that
  /// adds the internal force to f, or alone where f is empty.
  void screen_stresses(const DofView &u, const DofView &f, const kernels::ElementScreen &screen);
  /// out(node, 0) += the areas or volumes of the node's elements.
  void nodal_measure(const DofView &out) const;
  bool split_sweeps(const std::vector<char> &border) override;
  std::string title() const override { return "fegpu-kk elastodynamics"; }
  HostMesh output_mesh() const override { return mesh_.num_nodes() == original_nodes() ? host_mesh_ : download(mesh_); }
  ExodusVariables output_variables() const override;
  void fill_output(const DofView &u, const DofView &v, const DofView &a, OutputFrame &frame) override;
  CoordView coordinates() const override { return mesh_.coords; }
  IndexView set_nodes(const std::string &name, bool side_set) const override {
    return fegpu::set_nodes(mesh_, name, side_set);
  }

  /// Continues on a mesh whose nodes were split (cohesive fracture): new connectivity and
  /// coordinates (one row per node), and origin(n), the node of the original mesh that n came
  /// from. Node sets grow to hold every node split from a member, the nodes' global ids follow
  /// (split_node_ids; `ids` where the caller has them: a rank's part, whose stars go beyond its
  /// elements), and the lumped mass is recomputed. The colouring stays valid: splitting nodes only
  /// removes sharing.
  void set_topology(const ConnView &elem2node, const CoordView &coords, const IndexView &origin,
                    const GlobalIdView &ids = {});

  /// Element fields at displacement u, (element, field): the mean stress (2D: xx, yy, xy, zz; 3D:
  /// xx, yy, zz, xy, yz, xz), von Mises, strain energy (the output's element variables, in order). In the model's
  /// storage, valid until the next call: frames and energies alike reuse it.
  DofView element_fields(const DofView &u) const;
  void set_scatter(ScatterStrategy s) { config_.scatter = s; }
  const Mesh &mesh() const { return mesh_; }
  const Coloring &coloring() const { return coloring_; }
  /// Every element straight-edged (kernels::straight_edged): TET10 forces from the corners' Jacobian.
  bool straight_edged() const { return straight_; }
  const Config &config() const { return config_; }
  const DeviceView<Material *> &materials() const { return materials_; }
  const IndexView &element_material() const { return elem_material_; } // (element): index into materials()

private:
  HostMesh host_mesh_;
  Mesh mesh_;
  int dim_ = 2;           ///< of the elements: 2 (triangles) or 3 (tetrahedra)
  bool straight_ = false; ///< straight_edged(): set once, as node splitting moves no node
  Config config_;
  Coloring coloring_;
  DeviceView<Material *> materials_; // (material)
  IndexView elem_material_;          // (element): material index
  std::vector<Material> materials_h_;
  std::vector<Index> elem_material_h_;
  DofView mass_;
  std::vector<IndexView> original_node_sets_;
  GlobalIdView original_gid_; // (input node): its global id
  GlobalId top_gid_ = 0;      // the largest input id
  // Storage that follows a cracked topology without reallocating (set_topology, constraints()):
  // the views handed out stay valid until the next topology change.
  Growing<Real> mass_store_{"fegpu::elastic::mass"};
  Growing<GlobalId> gid_store_{"fegpu::mesh::node_gid"};
  Growing<GlobalId> lowest_place_{"fegpu::elastic::lowest_place"}; // split_node_ids' scratch
  Growing<uint8_t> set_member_{"fegpu::elastic::node_set_member"};
  std::vector<Growing<Index>> node_set_store_;                           // one per node set
  mutable std::vector<Growing<Index>> constraint_dofs_;                  // one per constraint
  mutable Growing<Real> fields_store_{"fegpu::elastic::element_fields"}; // element_fields()
  /// The consistent nodal forces of a traction or pressure on a side set of triangular faces, into w
  /// (flat dof -> force).
  void face_loads(const BoundarySpec &bc, std::map<Index, double> &w) const;
  Index original_nodes() const { return static_cast<Index>(original_gid_.extent(0)); }
  void compute_mass();
};

} // namespace fegpu::elastic
