#pragma once
/// \file mesh.hpp
/// An unstructured mesh of one element type, stored on the device as structure of arrays, with
/// element blocks (contiguous element ranges), node sets and side sets. Global ids are kept beside
/// local indices for later domain decomposition.
#include "fegpu/core/types.hpp"
#include "fegpu/mesh/element.hpp"

#include <array>
#include <string>
#include <vector>

namespace fegpu {

struct ElementBlock {
  std::string name;
  int id = 1;
  Index begin = 0, end = 0; ///< element range [begin, end)
};

struct NodeSet {
  std::string name;
  int id = 1;
  IndexView nodes; // (member)
};

struct SideSet {
  std::string name;
  int id = 1;
  IndexView elems;  // (member): element
  IndexView facets; // (member): local facet of that element, 0-based
};

struct Mesh {
  ElementType type = ElementType::Tri3;
  int dim = 2;           ///< spatial dimension of the coordinates (2, or 3 for shells)
  CoordView coords;      // (node, xyz)
  ConnView elem2node;    // (element, local node)
  GlobalIdView node_gid; // (node)
  GlobalIdView elem_gid; // (element)
  std::vector<ElementBlock> blocks;
  std::vector<NodeSet> node_sets;
  std::vector<SideSet> side_sets;
  std::string source; ///< where it came from, for messages: "mesh file 'plate.exo'", "the generated mesh"

  Index num_nodes() const { return static_cast<Index>(coords.extent(0)); }
  Index num_elems() const { return static_cast<Index>(elem2node.extent(0)); }
  int nodes_per_elem() const { return element_info(type).nodes; }

  /// The named set; throws InputError listing the available names if absent.
  const NodeSet &node_set(const std::string &name) const;
  const SideSet &side_set(const std::string &name) const;
};

/// Host-side arrays a generator or reader fills before upload.
struct HostMesh {
  ElementType type = ElementType::Tri3;
  int dim = 2;
  std::vector<double> xyz;                  ///< 3 per node
  std::vector<Index> conn;                  ///< nodes_per_elem per element
  std::vector<GlobalId> node_gid, elem_gid; ///< empty: 1-based local numbering
  std::vector<ElementBlock> blocks;
  struct Set {
    std::string name;
    int id;
    std::vector<Index> a, b; ///< node sets: nodes in a; side sets: elements in a, local facets in b
  };
  std::vector<Set> node_sets, side_sets;
  /// Blocks of another element type written after the main ones (for output only: cohesive
  /// elements). Element variables run over the main elements, then these blocks in order.
  struct ExtraBlock {
    std::string name;
    int id;
    std::string exodus_type; ///< e.g. QUAD4
    int nodes_per_elem;
    std::vector<Index> conn;
    std::size_t size() const { return conn.size() / nodes_per_elem; }
  };
  std::vector<ExtraBlock> extra_blocks;
  std::string source = "the generated mesh"; ///< as Mesh::source
};

/// "mesh file 'plate.exo', element 17": where an error in element e is, by its global id (the
/// file's own numbering), for the messages of topology and geometry checks.
std::string element_place(const Mesh &m, Index e);

/// One flag per element: whether it touches a node flagged in `nodes` (one flag per node).
std::vector<char> elements_touching(const HostMesh &m, const std::vector<char> &nodes);

/// Renumbers a mesh for locality: within each block, elements along the Morton curve of their
/// centroids (in the mesh's bounding box, 21 bits an axis); nodes in the order the elements first
/// touch them (untouched ones last, as they were). Sets follow; node_gid and elem_gid keep each
/// node's and element's id of before (the file's numbering, which the output's maps then carry).
/// For meshes read from files, whose order is the mesher's: neighbours far apart in memory cost
/// the gathers their cache lines, and a CPU's atomic scatter adds atomically for every element
/// whose nodes are shared across its threads' chunks (all of them, on config/hollow_sphere.msh).
void order_for_locality(HostMesh &h);

/// Copies host arrays to the device (allocations labelled fegpu::mesh::*).
Mesh upload(const HostMesh &h);
/// Copies a mesh back to host arrays (for output and tests).
HostMesh download(const Mesh &m);

/// The current nodes (nodes_per_facet each, in facet order) and their (x, y, z) of the given element
/// facets, gathered on the device: for boundary loads on a mesh whose nodes may have split.
void facet_geometry(const Mesh &m, const std::vector<Index> &elems, const std::vector<Index> &facets,
                    std::vector<Index> &nodes, std::vector<double> &xyz);

/// The node nearest `point` (x, y, z; 2D meshes have z = 0), the lowest index among equals so that
/// every backend picks the same one: for loads and pins placed at a point. Among the first `count`
/// nodes where count >= 0 (a rank's own).
Index nearest_node(const CoordView &coords, const std::array<double, 3> &point, Index count = -1);

/// The nodes of a node set, or of every facet of a side set (sorted, unique), on the current
/// topology; InputError (listing the names) if the mesh has no such set.
IndexView set_nodes(const Mesh &m, const std::string &name, bool side_set);

/// Adds a node set holding the nodes of every facet of a side set (sorted, unique).
void add_node_set_from_side_set(HostMesh &h, const std::string &side_set, const std::string &node_set_name);

} // namespace fegpu
