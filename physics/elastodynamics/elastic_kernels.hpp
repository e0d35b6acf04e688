#pragma once
/// \file elastic_kernels.hpp
/// The elastodynamics module's kernels over a T3/T6 mesh: lumped mass and internal force (added
/// to the nodes by the model's scatter strategy), element stresses and strain energy, the
/// stability bound and the Jacobian check; and for a mesh whose nodes were split (cohesive
/// fracture), the grown node sets and the new node ids. Element maths: triangle.hpp.
#include "fegpu/assembly/scatter.hpp"
#include "fegpu/mesh/mesh.hpp"
#include "triangle.hpp"

namespace fegpu::elastic::kernels {

/// The first element with det J <= 0 (inverted or degenerate), or -1 if none.
Index first_inverted(const Mesh &mesh);
/// Largest eigenvalue of the element generalized problems K v = lambda M v (power iteration).
double max_eigenvalue(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &elem_mat);
/// mass += the row-sum lumped mass of every element (both components).
void lumped_mass(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &elem_mat,
                 ScatterStrategy scatter, const Coloring &coloring, const DofView &mass);
/// f += the internal force at displacement u of the elements of `sweep`.
void internal_force(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &elem_mat,
                    ScatterStrategy scatter, const Coloring &coloring, const DofView &u, const DofView &f, Sweep sweep);
/// Area-averaged stress (xx, yy, xy) and strain energy of every element at displacement u.
void element_stress(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &elem_mat, const DofView &u,
                    const DeviceView<Real *[3]> &stress, const RealView &energy);

/// The flat dofs (component comp * num_nodes + node) of a set of nodes.
IndexView node_dofs(const IndexView &nodes, int comp, Index num_nodes);
/// The members of a grown node set: every node whose origin is in the original set.
IndexView grow_node_set(const IndexView &original, const IndexView &origin, Index original_nodes);
/// Global ids once nodes have split (origin: the input node each node descends from).
GlobalIdView split_node_ids(const GlobalIdView &input, const IndexView &origin);

} // namespace fegpu::elastic::kernels
