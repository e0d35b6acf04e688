#pragma once
/// \file coloring.hpp
/// Element colouring such that no two elements of one colour share a node, so that a kernel run
/// colour by colour may add element contributions to nodes without atomics.
#include "fegpu/mesh/mesh.hpp"

#include <string>
#include <utility>
#include <vector>

namespace fegpu {

enum class ColoringAlgorithm {
  WelshPowell,    ///< the seed's greedy colouring in decreasing-degree order, on the host
  JonesPlassmann, ///< parallel rounds of independent sets by random priority, on the device
};

struct Coloring {
  int num_colors = 0;
  IndexView color;              // (element): its colour
  Crs color2elem;               // colour -> its elements, ascending
  std::vector<Index> offsets_h; // host copy of color2elem.offsets, for per-colour launches
  /// (sweep + 1): colours [sweeps[s], sweeps[s + 1]) form sweep s. Empty: one sweep of every
  /// colour; split_coloring() makes two.
  std::vector<int> sweeps;
  /// With two sweeps: every element once, the first sweep's ascending, then the second's; sweep s
  /// at the same positions as its colours' in color2elem (an atomic scatter's launch, in the
  /// mesh's order, which keeps neighbours near in memory where the colours scatter them).
  IndexView sweep_elems;
  /// Host builds: an atomic scatter runs a launch in chunks of `size` consecutive positions, one
  /// thread a chunk, and atomic(p) = 1 where the element at position p shares a node with an
  /// element of a chunk that may run at the same time: it alone adds atomically, the others
  /// plainly (a compare-and-swap loop a value costs a CPU more than the element's arithmetic).
  /// One phase: every chunk at once; a node's elements in two chunks are marked. Two phases (where
  /// the mesh's order puts a node's elements far apart, as a 3D mesh's layers do, so that most
  /// elements would be marked): the even chunks, then the odd ones, each at least as long as that
  /// distance, so that a node's elements lie in at most two neighbouring chunks, never running
  /// together: none is marked.
  ///
  /// GPU builds: a chunk of `size` consecutive positions a team of threads (plan_blocks). Its
  /// elements keep their shares in the team's scratch memory, share (component, local node a,
  /// place t in the chunk) at (component * npe + a) * size + t; then a thread a node of the chunk
  /// sums the node's shares in a fixed order and adds the sum to the node atomically, once. Chunk
  /// c's nodes, each once and ascending, are nodes.indices[nodes.offsets(c) + k]; node k's shares
  /// are share(lo * npe + j), j from first(nodes.offsets(c) + k) to the next node's first (the
  /// chunk's last: its pairs' count), where lo is the chunk's first position: one entry a pair of
  /// an element and a local node. Kernels that add by local node use it (scatter.hpp).
  ///
  /// size = 0 (a GPU build's other elements, whose teams were slower; a colouring put together by
  /// hand): one atomic add a share.
  struct ChunkPlan {
    Index size = 0;
    int phases = 1;
    DeviceView<int *> atomic; // (position): host builds
    int npe = 0;              // GPU builds:
    Crs nodes;                // (chunk) -> its nodes
    DeviceView<uint16_t *> first, share;
  };
  ChunkPlan chunks;       ///< every element, at position = its id
  ChunkPlan sweep_chunks; ///< each sweep of a split colouring, at its positions in sweep_elems
  Index size(int c) const { return offsets_h[c + 1] - offsets_h[c]; }
  int num_sweeps() const { return sweeps.empty() ? 1 : static_cast<int>(sweeps.size()) - 1; }
  /// Sweep s's colours [first, last); s = -1: every colour.
  std::pair<int, int> sweep_colors(int s) const {
    return s < 0 || sweeps.empty() ? std::pair{0, num_colors} : std::pair{sweeps[s], sweeps[s + 1]};
  }
  Index largest() const;
  Index smallest() const;
};

Coloring color_elements(const Mesh &mesh, const Crs &node2elem, ColoringAlgorithm algorithm);

/// `c` split into two sweeps: first every colour's elements flagged in `first` (one flag per
/// element), then every colour's others; each part of a colour becomes a colour of its own (still
/// conflict-free; empty ones dropped), ascending ids within it, so that a sweep's elements are
/// contiguous in color2elem. On many ranks the elements touching a node another rank holds sweep
/// first: their nodes' sums are then exchanged while the interior elements are computed.
/// (node2elem and conn: for the sweeps' ChunkPlan.)
Coloring split_coloring(const Coloring &c, const std::vector<char> &first, const Crs &node2elem, const ConnView &conn);

/// The GPU's chunk plan (Coloring::ChunkPlan) of launches over positions [0, boundary) and
/// [boundary, n) of the elements order(p) (order empty: p), chunks of `size` positions from each
/// launch's first, in the connectivity `conn`: made on the device, the keys (node, pair) of a chunk
/// sorted in its team's scratch memory. Made by color_elements on a GPU for tetrahedra (and kept by
/// split_coloring); a host build may make one (tests), which scatter_elements then runs in teams too.
Coloring::ChunkPlan plan_blocks(const ConnView &conn, Index n, const IndexView &order, Index boundary,
                                Index size = 128);

/// A colouring's GPU chunk plans made again for a connectivity whose nodes changed (a crack's nodes
/// split): they name nodes. A host build's plans name positions and stay valid: a split node's
/// elements are some of those the plan saw around the node.
void follow_connectivity(Coloring &c, const ConnView &conn);

/// Number of pairs of same-coloured elements sharing a node (0 for a valid colouring).
Index count_coloring_conflicts(const Mesh &mesh, const Crs &node2elem, const IndexView &color);

ColoringAlgorithm coloring_algorithm_from_string(const std::string &name);
std::string to_string(ColoringAlgorithm a);

} // namespace fegpu
