#pragma once
/// \file insertion.hpp
/// Topologically exact insertion of extrinsic cohesive elements into a T3/T6 mesh (the seed's
/// chapter 6 and appendix A): a fractured facet becomes a cohesive element and its nodes are
/// duplicated where the crack makes that necessary. Colour by colour, one thread per element that
/// owns a facet to fracture (the owner is the element of smaller id) walks around each corner node
/// through the adjacency: if the walk meets the boundary or an existing crack, the node splits and
/// the walked side takes the new node; if it comes round to the other side of the facet, the node
/// stays shared. Mid-side nodes always split. New nodes record the node they were split from in
/// `new2old`, through which every nodal field is carried over (sources()). On a GPU the threads
/// sweep each colour in a window sized to the L2 cache (window() in insertion.cpp).
/// Tetrahedra (TET4, TET10) take no walk and no colour: a thread per input node of the cracked
/// faces splits its star of elements into the pieces that whole faces join (NodeStar in
/// insertion.cpp), with the same three counter strategies.
#include "fegpu/io/checkpoint.hpp"
#include "fegpu/mesh/coloring.hpp"
#include "fegpu/mesh/mesh.hpp"
#include "fegpu/mesh/topology.hpp"

#include <string>

namespace fegpu::cohesive {

/// How new node and cohesive-element indices are taken.
enum class CounterStrategy {
  Deterministic, ///< count, exclusive scan, fill: the same numbering on every run
  GlobalAtomic,  ///< one global atomic fetch-add per element
  TeamAtomic,    ///< a team-scratch counter per team, one global atomic per team (seed appendix A)
};
CounterStrategy counter_strategy_from_string(const std::string &name);
std::string to_string(CounterStrategy s);

/// An element's adjacency as the insertion's walks read it, packed into 16 aligned bytes: a walk's
/// step reads one sector instead of four scattered ones (the neighbour, the facet id and then its
/// cohesive element, the neighbour's facet index). `side[k]` holds facet k's local index in the
/// neighbour (3 on the boundary) and `kCracked` once the facet has a cohesive element; each is
/// its own byte because during a colour its owner sets that bit while other threads read the
/// element's other facets.
struct alignas(16) ElementLinks {
  static constexpr uint8_t kCracked = 4;
  Index neighbor[3]; ///< across local facet k; -1 on the boundary
  uint8_t side[3];
};

/// (colour + 1, nodes | cohesive elements): an insertion's counts on the device, a row's two
/// entries side by side (one copy brings a row to the host).
using CountBases = Kokkos::View<Index *[2], Kokkos::LayoutRight, MemSpace>;

/// The two elements of each cohesive element and the facet's local index in each, read through
/// its facet (bulk elements never change, so the topology's facet arrays hold them): side 0 is
/// the facet's owner, the element of smaller id. A face of a tetrahedron also has its turn: the
/// corner of side 1's face that is side 0's corner 0 (matched() in cohesive_facet.hpp).
struct CohesiveSides {
  IndexView coh2facet;
  DeviceView<Index *[2]> facet2elem;
  DeviceView<int *[2]> facet2local;
  DeviceView<uint8_t *> facet2turn; // (facet); empty in 2D
  DeviceView<uint8_t *> decides;    // (facet); empty on one rank (CrackedMesh::decides)
  KOKKOS_INLINE_FUNCTION Index elem(Index c, int side) const { return facet2elem(coh2facet(c), side); }
  /// Whether this rank computes cohesive element c: always on one rank.
  KOKKOS_INLINE_FUNCTION bool own(Index c) const { return decides.extent(0) == 0 || decides(coh2facet(c)); }
  KOKKOS_INLINE_FUNCTION int local(Index c, int side) const { return facet2local(coh2facet(c), side); }
  KOKKOS_INLINE_FUNCTION int turn(Index c) const { return facet2turn(coh2facet(c)); }
};

/// The growing topology: bulk connectivity (renumbered as nodes split), each node's parent, and
/// the cohesive elements. Capacities grow by amortised reallocation. Nodal fields, the
/// coordinates among them, are the caller's: sources() says where each new node takes them from.
class CrackedMesh {
public:
  /// Takes the mesh, its topology and colouring (bulk elements never change, so neither do they).
  CrackedMesh(const Mesh &mesh, const Topology &topology, const Coloring &coloring);

  /// Fractures the facets flagged in `facets` (facet id -> 1), which must be interior and not yet
  /// cracked. Returns the number of cohesive elements inserted. A caller that knows how many it
  /// flagged, of facets it checked, gives `count`; else they are counted and checked here.
  Index fracture(const DeviceView<uint8_t *> &facets, CounterStrategy strategy, Index count = -1);

  /// Makes room for this many nodes and cohesive elements: at least half as much again as
  /// allocated before (fracture() grows the arrays itself; this is for callers that know the
  /// final size).
  void reserve(Index nodes, Index cohesive);

  /// For every node, the node among the first `old_count` whose values it takes: itself below
  /// old_count, else the node it was split from (climbing through nodes split twice). Valid
  /// until the next call.
  IndexView sources(Index old_count);

  /// Renumbers the nodes: node n becomes new_id(n) (a permutation of [0, num_nodes())) in the
  /// connectivity. new2old restarts from here (each node its own source).
  void renumber_nodes(const IndexView &new_id);

  /// Renumbers the cohesive elements in the order of their facets, which follows the elements:
  /// consecutive cohesive elements then share elements and nodes, so their gathers and scatters
  /// share cache lines, and the numbering is the same for every counter strategy. Returns, for
  /// each new index, the old one (for the caller's per-cohesive arrays), valid until the next call.
  IndexView order_cohesive();

  Index num_nodes() const { return num_nodes_; }
  Index num_cohesive() const { return num_cohesive_; }
  /// Restart: the live state (connectivity, parents, cohesive elements, the walks' links and the
  /// counts) into a checkpoint, and back on a CrackedMesh of the same input mesh.
  void save(CheckpointWriter &w) const;
  void restore(const CheckpointReader &r);
  CohesiveSides sides() const { return {coh2facet, topology.facet2elem, topology.facet2local, facet2turn, decides}; }

  /// Deterministic insertions of at most this many facets take one thread in colour order instead
  /// of three launches a colour (the same numbering; tests set 0 to compare the two).
  Index sequential_limit = 32;
  const ElementType type;
  ConnView elem2node;               // (element, local node): current node ids
  IndexView new2old;                // (node capacity): the node each node was split from
  IndexView facet2coh;              // (facet): its cohesive element, -1 while intact
  IndexView coh2facet;              // (cohesive capacity): facet id
  DeviceView<ElementLinks *> links; // (element): adjacency and crack state, for the walks
  DeviceView<uint8_t *> facet2turn; // (facet): a face's turn between its sides (tetrahedra)
  /// (facet): on many ranks, whether this rank decides the facet and computes its cohesive
  /// element (the rank of its element of lower position in the whole mesh); empty on one rank.
  DeviceView<uint8_t *> decides;
  Topology topology;
  Coloring coloring;

private:
  /// Makes room as reserve() does, filling the new room only with `touch`.
  void grow(Index nodes, Index cohesive, bool touch);
  Index num_nodes_, num_cohesive_;
  Index unused_nodes_ = 0;       ///< input nodes no element uses
  DeviceView<Index *[3]> local_; // (element of a colour): its offsets and splits
  CountBases bases_;             // (colour + 1): first new node and cohesive element; the atomic
                                 // strategies' counters in row 0
  Growing<Index> old_of_{"fegpu::cohesive::old_of"}, sources_{"fegpu::cohesive::sources"};
  // Tetrahedra (node stars): the input connectivity, the input nodes of an insertion's faces
  // (flags, then their list), and the count of stars too large to split.
  ConnView original_;
  IndexView touched_, touched_list_, too_large_;
};

} // namespace fegpu::cohesive
