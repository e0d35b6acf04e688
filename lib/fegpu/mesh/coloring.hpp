#pragma once
/// \file coloring.hpp
/// Element colouring such that no two elements of one colour share a node, so that a kernel run
/// colour by colour may add element contributions to nodes without atomics.
#include "fegpu/mesh/mesh.hpp"

#include <string>
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
  Index size(int c) const { return offsets_h[c + 1] - offsets_h[c]; }
  Index largest() const;
  Index smallest() const;
};

Coloring color_elements(const Mesh &mesh, const Crs &node2elem, ColoringAlgorithm algorithm);

/// Number of pairs of same-coloured elements sharing a node (0 for a valid colouring).
Index count_coloring_conflicts(const Mesh &mesh, const Crs &node2elem, const IndexView &color);

ColoringAlgorithm coloring_algorithm_from_string(const std::string &name);
std::string to_string(ColoringAlgorithm a);

} // namespace fegpu
