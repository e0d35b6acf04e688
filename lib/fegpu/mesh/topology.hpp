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

/// Builds the topology of a 2D mesh or a shell surface. Facets are element edges, matched by
/// their two corner nodes.
Topology build_topology(const Mesh &mesh);

/// node -> element incidence alone (also used by colouring).
Crs build_node2elem(const Mesh &mesh);

} // namespace fegpu
