#pragma once
/// \file distribute.hpp
/// A mesh divided among ranks by its elements, with shared nodes (the pattern of NimbleSM and
/// OpenRadioss): each element belongs to one rank, which holds every node of its elements; a node
/// on the border between ranks is held by each of them, each summing its own elements' part of the
/// node's forces and mass, and the exchange (halo.hpp) completes those sums. The lowest rank that
/// holds a node owns it: sums over nodes (energies, reactions, output) count the node there only.
///
/// Every rank holds the whole mesh while it is divided (each reads or generates it): cheap up to
/// some 10^7 elements (a T6 mesh of 10^7 elements takes about 1.3 GB of host memory a rank, for
/// the seconds of set-up). Files split beforehand would come in here, as another way to make a
/// LocalMesh.
#include "fegpu/mesh/mesh.hpp"

#include <array>
#include <string>
#include <vector>

namespace fegpu::parallel {

/// How good a partition is: elements per rank, nodes held by more than one rank, and the facets
/// between elements of different ranks (the edge cut of the element dual graph).
struct PartitionStats {
  std::vector<long> elements; ///< (rank)
  long shared_nodes = 0, cut_facets = 0;
  /// The largest rank's elements over the mean (1 is perfect balance).
  double imbalance() const;
  /// One line for the start of a run.
  std::string str() const;
};

/// Each element's rank: METIS k-way partition of the element dual graph (elements adjacent through
/// a facet), seeded, so that every rank computes the same one; `edge_cut`, if given, receives
/// METIS' count of dual-graph edges cut. RunError in a build without METIS (no MPI), if METIS
/// fails, or if the mesh has fewer elements than parts.
std::vector<int> partition_elements(const HostMesh &mesh, int parts, long *edge_cut = nullptr);

/// The quality of partition `part` (each element's rank, 0 <= rank < parts), counted independently
/// of METIS (the test compares the two).
PartitionStats partition_stats(const HostMesh &mesh, const std::vector<int> &part, int parts);

/// The ghost layer of a rank (cohesive fracture on many ranks, docs/parallel.md): the elements of
/// other ranks that share a node with one of its own, so that the element star of every node it
/// holds is whole there (a node splits by its star's pieces; a facet's decision needs both sides).
struct GhostLayer {
  std::vector<long> elem_index; ///< (ghost): its position in the global mesh, ascending
  std::vector<int> owner;       ///< (ghost): the rank it belongs to
  /// (ghost * nodes per element + k): local node ids, numbered after the rank's held nodes
  /// (LocalMesh::node_index) for the nodes no element of its own touches: the ghost-only nodes.
  std::vector<Index> conn;
  std::vector<long> node_index;             ///< (ghost-only node): its position in the global mesh, ascending
  std::vector<double> xyz;                  ///< (ghost-only node * 3)
  std::vector<GlobalId> elem_gid, node_gid; ///< (ghost), (ghost-only node): their global ids
  std::vector<ElementBlock> blocks;         ///< the whole mesh's blocks, as ranges of the ghosts
  /// (local element: the own ones, then the ghosts): the ranks holding it, own or as a ghost,
  /// ascending; rows of the CRS holder_offsets.
  std::vector<Index> holder_offsets;
  std::vector<int> holders;
};

/// What one rank holds of a mesh divided by partition_elements().
struct LocalMesh {
  /// The rank's elements in their global order (every block kept, possibly empty), the nodes they
  /// touch (owned ones first, each group in global order), the sets' members among those, and
  /// the global ids of both (1-based global positions where the mesh had none).
  HostMesh mesh;
  Index owned_nodes = 0;                    ///< nodes [0, owned_nodes) are this rank's own
  std::vector<long> node_index, elem_index; ///< (local node / element): its position in the global mesh
  std::vector<int> neighbors;               ///< ranks holding a node this one holds, ascending
  /// (neighbor): the local nodes that rank also holds, in global order (both ranks list the same
  /// nodes in the same order, so a buffer of them needs no ids).
  std::vector<std::vector<Index>> shared;
  GhostLayer ghosts; ///< empty unless asked for
};

/// Who holds the nodes of a rank's mesh with its ghost layer once nodes have split (cohesive
/// fracture on many ranks): the owners of the elements using a node (elements [0, own) are
/// `rank`'s own, the others' owner in `elem_owner`), and the ranks of the extra (node, rank)
/// incidences the caller adds (a cohesive element's nodes, with the rank that computes it; a row
/// of rank < 0 adds nothing). Exact for every node whose element star is whole on this rank
/// (every node one of its own elements uses).
struct HolderIncidences {
  ConnView conn;
  Index own = 0;
  int rank = 0;
  DeviceView<int *> elem_owner;
  DeviceView<Index *[2]> extra;
};

/// mine(n) = 1 where `rank` holds node n, else 0; lowest(n) the lowest other rank holding it
/// (INT_MAX: none). One pass on the device; only the ghosts' and the extra rows' incidences take
/// an atomic min (most of a rank's mesh is its own elements, whose nodes have no other holder).
void holder_marks(const HolderIncidences &h, const DeviceView<int *> &mine, const DeviceView<int *> &lowest);

/// Device storage that shared_nodes() keeps from call to call: a fracture run plans its exchange
/// again after every insertion, and on a GPU an allocation and a free (which waits for the
/// device) each time cost more than the kernels.
struct HolderStore {
  Growing<GlobalId> border_rows{"fegpu::parallel::border_rows"};
  Index expected = 0; ///< rows the last call listed (this one reads back as many and half again)
  /// (node): bit r set once rank r's row of the node is listed, so that a node a border element
  /// or cohesive element uses many times is listed once for each rank (ranks below 32); zero
  /// between calls (each call clears what it set).
  DeviceView<uint32_t *> listed;
};

/// The nodes `rank` shares with each other rank: `neighbors` the other ranks holding a node this
/// rank holds (mine(n) != 0), ascending; `shared[k]` those nodes, in the order of their global ids
/// (`ids`), which both sides of a pair list alike. Only the border's incidences come to the host,
/// and with them `carried`: the two values of `carry` (zeros without it), which a caller that
/// made them on the device reads back here rather than waiting for them on its own.
struct SharedNodes {
  std::vector<int> neighbors;
  std::vector<std::vector<Index>> shared;
  std::array<Index, 2> carried = {0, 0};
};
SharedNodes shared_nodes(const HolderIncidences &h, const DeviceView<int *> &mine, const GlobalIdView &ids,
                         HolderStore &store, const DeviceView<Index[2]> &carry = {});

/// The rank's mesh with its ghost layer: its own elements, then the ghosts, whose blocks follow the
/// own ones' (each name twice); its held nodes, then the ghost-only ones. Sets keep the own
/// elements' members only.
HostMesh with_ghosts(const LocalMesh &local);
/// (element of with_ghosts()): its position in the global mesh.
std::vector<Index> element_positions(const LocalMesh &local);

/// Rank `rank`'s part of `global` under partition `part`, with its ghost layer if `ghosts`. RunError
/// if a node belongs to no element (no rank would hold it).
LocalMesh local_part(const HostMesh &global, const std::vector<int> &part, int rank, bool ghosts = false);

} // namespace fegpu::parallel
