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
  /// together: none is marked. size = 0 (a GPU build, whose atomics are cheap; a colouring put
  /// together by hand): atomics throughout.
  struct ChunkPlan {
    Index size = 0;
    int phases = 1;
    DeviceView<int *> atomic; // (position)
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
/// (node2elem: for the sweeps' ChunkPlan.)
Coloring split_coloring(const Coloring &c, const std::vector<char> &first, const Crs &node2elem);

/// Number of pairs of same-coloured elements sharing a node (0 for a valid colouring).
Index count_coloring_conflicts(const Mesh &mesh, const Crs &node2elem, const IndexView &color);

ColoringAlgorithm coloring_algorithm_from_string(const std::string &name);
std::string to_string(ColoringAlgorithm a);

} // namespace fegpu
