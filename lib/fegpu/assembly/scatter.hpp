#pragma once
/// \file scatter.hpp
/// Element-to-node assembly through one helper with interchangeable race-free strategies:
/// colour by colour (no two elements of a launch share a node; deterministic sums) or atomic adds
/// (one launch; summation order varies between runs).
#include "fegpu/core/types.hpp"
#include "fegpu/mesh/coloring.hpp"

#include <string>

namespace fegpu {

enum class ScatterStrategy { Coloring, Atomic };

ScatterStrategy scatter_strategy_from_string(const std::string &name);
std::string to_string(ScatterStrategy s);

/// Adds into a (node, component) field without atomics: the caller guarantees exclusivity.
struct PlainAdd {
  DofView f;
  KOKKOS_INLINE_FUNCTION void operator()(Index node, int comp, Real value) const { f(node, comp) += value; }
};
struct AtomicAdd {
  DofView f;
  KOKKOS_INLINE_FUNCTION void operator()(Index node, int comp, Real value) const {
    Kokkos::atomic_add(&f(node, comp), value);
  }
};

/// Calls `kernel(e, add)` for every element, where the kernel adds its element vector through
/// `add(node, component, value)`. `target` is not cleared.
template <class Kernel>
void scatter_elements(const std::string &label, ScatterStrategy strategy, const Coloring &coloring, Index num_elems,
                      const DofView &target, const Kernel &kernel) {
  if (strategy == ScatterStrategy::Atomic) {
    const AtomicAdd add{target};
    Kokkos::parallel_for(
        label, range(0, num_elems), KOKKOS_LAMBDA(Index e) { kernel(e, add); });
    return;
  }
  const PlainAdd add{target};
  const auto elems = coloring.color2elem.indices;
  for (int c = 0; c < coloring.num_colors; ++c)
    Kokkos::parallel_for(
        label, range(coloring.offsets_h[c], coloring.offsets_h[c + 1]),
        KOKKOS_LAMBDA(Index i) { kernel(elems(i), add); });
}

} // namespace fegpu
