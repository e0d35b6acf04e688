#pragma once
/// \file scatter.hpp
/// Element-to-node assembly through one helper with interchangeable race-free strategies:
/// colour by colour (no two elements of a launch share a node; deterministic sums) or atomic adds
/// (one launch in the mesh's order; summation order varies between runs; on a CPU only the elements
/// on the borders of its threads' chunks add atomically, Coloring::ChunkPlan).
#include "fegpu/core/error.hpp"
#include "fegpu/core/types.hpp"
#include "fegpu/mesh/coloring.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

namespace fegpu {

enum class ScatterStrategy { Coloring, Atomic };

/// Which elements a pass over them covers: all, or one of the two sweeps of a split colouring
/// (split_coloring): on many ranks the border elements (touching a node another rank holds), whose
/// nodes' sums are exchanged while the interior elements are computed.
enum class Sweep { All = -1, Border = 0, Interior = 1 };

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

/// The launches of one sweep of the elements (every element, or a sweep of a split colouring): launch(elems, first,
/// count) for elements elems(first + i), i < count; colour by colour for a coloured scatter, all at once in the mesh's
/// order for an atomic one (every element: `elems` empty, element i is i).
template <class Launch>
void for_each_launch(ScatterStrategy strategy, const Coloring &coloring, Index num_elems, Sweep sweep,
                     const Launch &launch) {
  const auto [first, last] = coloring.sweep_colors(static_cast<int>(sweep));
  const IndexView &elems = coloring.color2elem.indices;
  if (strategy == ScatterStrategy::Atomic) {
    if (sweep == Sweep::All) return launch(IndexView(), 0, num_elems);
    return launch(coloring.sweep_elems, coloring.offsets_h[first],
                  coloring.offsets_h[last] - coloring.offsets_h[first]);
  }
  for (int c = first; c < last; ++c)
    launch(elems, coloring.offsets_h[c], coloring.size(c));
}

/// Calls `kernel(e, add)` for every element of `sweep` (for_each_launch), where the kernel adds
/// its element vector through `add(node, component, value)`. `target` is not cleared.
template <class Kernel>
void scatter_elements(const std::string &label, ScatterStrategy strategy, const Coloring &coloring, Index num_elems,
                      const DofView &target, const Kernel &kernel, Sweep sweep = Sweep::All) {
  for_each_launch(strategy, coloring, num_elems, sweep, [&](const IndexView &elems, Index first, Index count) {
    if constexpr (std::is_same_v<MemSpace, Kokkos::HostSpace>) {
      const Coloring::ChunkPlan &plan = elems.extent(0) ? coloring.sweep_chunks : coloring.chunks;
      if (strategy == ScatterStrategy::Atomic && plan.size > 0) {
        // A chunk of consecutive positions a thread; atomics only where a node's elements lie in
        // two chunks (Coloring::ChunkPlan).
        FEGPU_CHECK(static_cast<Index>(plan.atomic.extent(0)) >= first + count, "a chunk plan of another mesh");
        const AtomicAdd atomic{target};
        const PlainAdd plain{target};
        const Index size = plan.size, end = first + count;
        const auto marked = plan.atomic;
        Kokkos::parallel_for(
            label, Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>(0, (count + size - 1) / size),
            [=](Index k) {
              for (Index i = first + k * size; i < std::min(first + (k + 1) * size, end); ++i) {
                const Index e = elems.extent(0) ? elems(i) : i;
                if (marked(i))
                  kernel(e, atomic);
                else
                  kernel(e, plain);
              }
            });
        return;
      }
    }
    if (strategy == ScatterStrategy::Atomic) {
      const AtomicAdd add{target};
      if (!elems.extent(0))
        Kokkos::parallel_for(
            label, range(0, count), KOKKOS_LAMBDA(Index e) { kernel(e, add); });
      else
        Kokkos::parallel_for(
            label, range(first, first + count), KOKKOS_LAMBDA(Index i) { kernel(elems(i), add); });
    } else {
      const PlainAdd add{target};
      Kokkos::parallel_for(
          label, range(first, first + count), KOKKOS_LAMBDA(Index i) { kernel(elems(i), add); });
    }
  });
}

} // namespace fegpu
