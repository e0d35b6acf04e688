#pragma once
/// \file elastic_kernels.hpp
/// The elastodynamics module's kernels over a T3/T6 or TET4/TET10 mesh: lumped mass and internal force (added
/// to the nodes by the model's scatter strategy), element stresses and strain energy, the
/// stability bound and the Jacobian check; and for a mesh whose nodes were split (cohesive
/// fracture), the grown node sets and the new node ids. Element maths: triangle.hpp.
#include "fegpu/assembly/scatter.hpp"
#include "fegpu/core/error.hpp"
#include "fegpu/mesh/mesh.hpp"
#include "tetrahedron.hpp"

#include <type_traits>

namespace fegpu::elastic::kernels {

/// Calls f(std::integral_constant<int, N>) for a solid element type of N nodes (T3, T6, TET4,
/// TET10): the kernels written over N, here and in the fracture module, are picked by it.
template <class F> decltype(auto) with_nodes(ElementType t, F &&f) {
  switch (t) {
  case ElementType::Tri3:
    return f(std::integral_constant<int, 3>{});
  case ElementType::Tri6:
    return f(std::integral_constant<int, 6>{});
  case ElementType::Tet4:
    return f(std::integral_constant<int, 4>{});
  case ElementType::Tet10:
    return f(std::integral_constant<int, 10>{});
  default:
    FEGPU_CHECK(false, "a solid of T3, T6, TET4 or TET10 elements");
  }
  return f(std::integral_constant<int, 3>{});
}

/// The first element with det J <= 0 (inverted or degenerate), or -1 if none.
Index first_inverted(const Mesh &mesh);
/// Largest eigenvalue of the element generalized problems K v = lambda M v (power iteration).
double max_eigenvalue(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &elem_mat);
/// mass += the row-sum lumped mass of every element (both components).
void lumped_mass(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &elem_mat,
                 ScatterStrategy scatter, const Coloring &coloring, const DofView &mass);
/// Whether every element is straight-edged (tet::straight: TET4 always, TET10 where each mid-edge
/// node is at its edge's midpoint); false in 2D.
bool straight_edged(const Mesh &mesh);
/// A bound on the elements' mean stresses (the fracture module's screen): hit(0) = 1 where an
/// element's stress norm, sqrt(sum of s_ij^2), reaches (to a margin of 1e-6) the least of its
/// nodes' `least`; nothing is written elsewhere.
struct ElementScreen {
  RealView least;
  DeviceView<int *> hit;
};
/// f += the internal force at displacement u of the elements of `sweep`. straight: the mesh is
/// (straight_edged), and a TET10's Jacobian is taken once, from its corners, not at each point.
/// With `stress` (3 or 6 components, as element_fields'): in the same pass, stress += each
/// element's mean stress times its area or volume, at its nodes (the fracture module's averages);
/// with `stress` and an empty f, the stresses alone. With `screen` (no stress): the screen in the
/// force's pass, or with an empty f in a pass of its own.
void internal_force(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &elem_mat,
                    ScatterStrategy scatter, const Coloring &coloring, const DofView &u, const DofView &f, Sweep sweep,
                    bool straight, const DofView &stress = {}, const ElementScreen &screen = {});
/// out(node, 0) += the areas (2D) or volumes (3D) of the node's elements.
void nodal_measure(const Mesh &mesh, ScatterStrategy scatter, const Coloring &coloring, const DofView &out);
/// The element fields at displacement u, (element, field): the mean stress, in 2D xx, yy, xy, zz
/// and in 3D xx, yy, zz, xy, yz, xz, then von Mises and the strain energy (output, energies and
/// tests alike).
void element_fields(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &elem_mat, const DofView &u,
                    const DofView &out);

/// The load of an acceleration g on lumped masses: the flat dofs of every node in each component
/// whose g is not zero, and their weights mass(node, c) g[c] (allocated here).
void body_force(const DofView &mass, const double g[3], IndexView &dofs, RealView &weights);
/// The flat dofs (component comp * num_nodes + node) of a set of nodes, into dofs.
void node_dofs(const IndexView &nodes, int comp, Index num_nodes, const IndexView &dofs);
/// A grown node set, in two passes (its size first, for the caller's storage): every node whose
/// origin is in the original set. mark_node_set flags the original set's nodes in `member` (one
/// entry per input node) and returns how many nodes descend from them; fill_node_set lists them.
Index mark_node_set(const IndexView &original, const IndexView &origin, const DeviceView<uint8_t *> &member);
void fill_node_set(const DeviceView<uint8_t *> &member, const IndexView &origin, const IndexView &out);
/// The largest of the ids (0 if none).
GlobalId largest(const GlobalIdView &ids);

} // namespace fegpu::elastic::kernels
