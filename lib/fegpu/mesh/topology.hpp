#pragma once
/// \file topology.hpp
/// Mesh topology built in parallel on the device: node-to-element incidence, element-to-element
/// adjacency through facets with the facet's local index on the other side (TopS style), and the
/// facet list. Deterministic: the same mesh gives the same numbering on every backend.
#include "fegpu/mesh/mesh.hpp"

namespace fegpu {

struct Topology {
  Crs node2elem;                      // node -> incident elements, ascending
  DeviceView<Index **> elem2elem;     // (element, local facet): neighbour element, -1 on the boundary
  DeviceView<int **> elem2elem_facet; // (element, local facet): the facet's local index in the neighbour, -1
  DeviceView<Index **> elem2facet;    // (element, local facet): facet id
  DeviceView<Index *[2]> facet2elem;  // (facet, side): element on each side; side 1 is -1 on the boundary
  DeviceView<int *[2]> facet2local;   // (facet, side): local facet index in that element
  Index num_facets = 0;
  Index num_boundary_facets = 0;
};

/// Builds the topology of a 2D mesh, a shell surface or a tetrahedral mesh. Facets are element
/// edges in 2D, matched by their two corner nodes, and triangular faces in 3D, by their three.
Topology build_topology(const Mesh &mesh);

/// node -> element incidence alone (also used by colouring).
Crs build_node2elem(const Mesh &mesh);

/// Global ids of a mesh whose nodes have split (cohesive insertion), which follow from the
/// topology alone, not from the order in which nodes were made or numbered, so that a mesh
/// divided among ranks names its nodes as the whole one does. A node is a piece of its input
/// node's element star (origin: the input node each node descends from); its place is the
/// smallest position(e) * nodes per element + corner among the corners it occupies, position(e)
/// being element e's index in the whole mesh (an empty `position`: e itself, a mesh not divided).
/// The piece holding the input node's smallest place keeps the input id (`input`); every other
/// takes top + 1 + its place, above `top`, the whole mesh's largest input id. Ids stay unique (a
/// corner is one node's) and name their input node (through the place). A node whose star is not
/// all in `conn` (a ghost layer's outer nodes) gets an id of no meaning. `lowest`: scratch, one
/// entry per node and per input node.
void split_node_ids(const GlobalIdView &input, GlobalId top, const ConnView &conn, const IndexView &position,
                    const IndexView &origin, const GlobalIdView &lowest, const GlobalIdView &ids);

} // namespace fegpu

namespace fegpu {

namespace components_detail {

/// The root of x's tree, halving the path on the way (each parent set to its grandparent: still an
/// ancestor whatever other threads do, since a root only ever hooks under a smaller one).
KOKKOS_INLINE_FUNCTION Index find_root(const IndexView &parent, Index x) {
  Index p = Kokkos::atomic_load(&parent(x));
  while (p != x) {
    const Index g = Kokkos::atomic_load(&parent(p));
    if (g != p) Kokkos::atomic_store(&parent(x), g);
    x = p;
    p = g;
  }
  return x;
}

} // namespace components_detail

/// The number of groups of elements that facets join: facet f joins its two elements
/// (facet2elem(f, 0) and (f, 1); -1 on the boundary) where joined(f) is true, and the groups are
/// the connected components. A union-find on the device: every joining facet hooks the larger of
/// its elements' roots under the smaller by compare-and-swap, retrying where another thread
/// hooked first, then the roots are counted, so the count does not depend on the order in which
/// threads run. `parent` has one entry per element (scratch, overwritten).
template <class Joined>
Index count_components(const DeviceView<Index *[2]> &facet2elem, const Joined &joined, const IndexView &parent) {
  const Index ne = static_cast<Index>(parent.extent(0)), nf = static_cast<Index>(facet2elem.extent(0));
  Kokkos::parallel_for(
      "fegpu::components::init", range(0, ne), KOKKOS_LAMBDA(Index e) { parent(e) = e; });
  Kokkos::parallel_for(
      "fegpu::components::join", range(0, nf), KOKKOS_LAMBDA(Index f) {
        const Index a = facet2elem(f, 0), b = facet2elem(f, 1);
        if (b < 0 || !joined(f)) return;
        Index ra = components_detail::find_root(parent, a), rb = components_detail::find_root(parent, b);
        while (ra != rb) {
          const Index hi = ra > rb ? ra : rb, lo = ra > rb ? rb : ra;
          if (Kokkos::atomic_compare_exchange(&parent(hi), hi, lo) == hi) break;
          ra = components_detail::find_root(parent, hi); // hi gained a parent meanwhile
          rb = components_detail::find_root(parent, lo);
        }
      });
  Index roots = 0;
  Kokkos::parallel_reduce(
      "fegpu::components::count", range(0, ne), KOKKOS_LAMBDA(Index e, Index & n) { n += parent(e) == e; }, roots);
  return roots;
}

} // namespace fegpu
