#pragma once
/// \file element.hpp
/// Element types and their local numbering (Exodus II conventions). Usable in kernels.
/// A facet is a side of the element (Exodus' "side"): for a polygon an edge, running from corner f
/// to corner (f+1) % corners, its local nodes listed corner, corner, then the edge's interior nodes
/// from corner f onward; for a tetrahedron a triangular face, its three corners counter-clockwise
/// seen from outside, then (TETRA10) its mid-edge nodes as a TRI6 lists them.
#include <Kokkos_Core.hpp>

#include <string>

namespace fegpu {

enum class ElementType : int { Tri3, Tri6, Quad4, Quad8, Quad9, Quad16, Shell4, Tet4, Tet10 };

struct ElementInfo {
  int nodes;           ///< nodes per element
  int corners;         ///< vertices of the polygon
  int order;           ///< polynomial order along an edge
  int nodes_per_facet; ///< nodes of one facet (side)
  int facets;          ///< sides: edges of a polygon, faces of a tetrahedron
  int dim;             ///< dimension of the element itself (a shell's is 2)
};

KOKKOS_INLINE_FUNCTION constexpr ElementInfo element_info(ElementType t) {
  switch (t) {
  case ElementType::Tri3:
    return {3, 3, 1, 2, 3, 2};
  case ElementType::Tri6:
    return {6, 3, 2, 3, 3, 2};
  case ElementType::Quad4:
    return {4, 4, 1, 2, 4, 2};
  case ElementType::Quad8:
    return {8, 4, 2, 3, 4, 2};
  case ElementType::Quad9:
    return {9, 4, 2, 3, 4, 2};
  case ElementType::Quad16:
    return {16, 4, 3, 4, 4, 2};
  case ElementType::Shell4:
    return {4, 4, 1, 2, 4, 2};
  case ElementType::Tet4:
    return {4, 4, 1, 3, 4, 3};
  case ElementType::Tet10:
    return {10, 4, 2, 6, 4, 3};
  }
  return {0, 0, 0, 0, 0, 0};
}

/// Local node k (0 <= k < nodes_per_facet) of facet f. Written with the type's corners and order
/// spelled out rather than through element_info(), and without a division: a CUDA build's host
/// code (nvcc 13, g++ 13), with element_info() inlined here, divided by a corner count of zero in
/// test_fracture on a triangle mesh whose element_info() gave 3 a line before.
KOKKOS_INLINE_FUNCTION constexpr int facet_node(ElementType t, int f, int k) {
  if (t == ElementType::Tet4 || t == ElementType::Tet10) {
    // Exodus TETRA sides 1-4: (0,1,3), (1,2,3), (0,3,2), (0,2,1); TETRA10 mid-edge nodes 4-9 on
    // edges (0,1), (1,2), (2,0), (0,3), (1,3), (2,3). Each face's six nodes are the hexadecimal
    // digits of a constant, node k the k-th from the right.
    const int code = f == 0 ? 0x784310 : f == 1 ? 0x895321 : f == 2 ? 0x697230 : 0x456120;
    return (code >> (4 * k)) & 15;
  }
  const int corners = (t == ElementType::Tri3 || t == ElementType::Tri6) ? 3 : 4;
  const int order = t == ElementType::Quad16                                                         ? 3
                    : (t == ElementType::Tri6 || t == ElementType::Quad8 || t == ElementType::Quad9) ? 2
                                                                                                     : 1;
  if (k == 0) return f;
  if (k == 1) return f + 1 < corners ? f + 1 : 0;
  // Edge interior nodes follow the corners, `order - 1` of them per edge.
  return corners + f * (order - 1) + (k - 2);
}

/// Corner `end` (0 or 1) of edge k (0 <= k < 6) of a tetrahedron, the edge of TETRA10's node 4 + k:
/// (0,1), (1,2), (2,0), (0,3), (1,3), (2,3).
KOKKOS_INLINE_FUNCTION constexpr int tet_edge_corner(int k, int end) {
  if (k < 3) return end == 0 ? k : (k + 1 < 3 ? k + 1 : 0);
  return end == 0 ? k - 3 : 3;
}

/// Lattice position (a, b), 0 <= a, b <= order, of local node k of a quadrilateral on the tensor
/// lattice of its reference square [-1, 1]^2 (node at xi = -1 + 2 a / order): corners
/// counter-clockwise, each edge's interior nodes from its first corner on, then the interior row by
/// row (Exodus QUAD4, QUAD8, QUAD9, QUAD16 order; QUAD8 has no centre).
KOKKOS_INLINE_FUNCTION constexpr void quad_lattice(ElementType t, int k, int &a, int &b) {
  constexpr int q1[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  constexpr int q2[9][2] = {{0, 0}, {2, 0}, {2, 2}, {0, 2}, {1, 0}, {2, 1}, {1, 2}, {0, 1}, {1, 1}};
  constexpr int q3[16][2] = {{0, 0}, {3, 0}, {3, 3}, {0, 3}, {1, 0}, {2, 0}, {3, 1}, {3, 2},
                             {2, 3}, {1, 3}, {0, 2}, {0, 1}, {1, 1}, {2, 1}, {2, 2}, {1, 2}};
  const int order = element_info(t).order;
  const int *p = order == 1 ? q1[k] : order == 2 ? q2[k] : q3[k];
  a = p[0], b = p[1];
}

/// Exodus II element type name.
std::string exodus_name(ElementType t);
/// Parses an Exodus type name (case-insensitive, e.g. "TRI6", "QUAD4", "SHELL4"); false if unknown.
bool element_type_from_exodus(const std::string &name, int num_nodes, int num_dim, ElementType &out);
/// The name used in YAML (tri3, tri6, quad4, quad8, quad9, quad16, shell4, tet4, tet10).
std::string type_name(ElementType t);

} // namespace fegpu
