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

/// Kernels that also run a block of `lanes` elements at once on a CPU (their arithmetic on packs,
/// simd.hpp): `kernel.block(e, add)` for elements e[0..lanes), adding through
/// `add(lane, node, component, value)`.
template <class K>
concept Blocked = requires {
  K::lanes;
};

/// Host builds: the elements at positions [lo, hi) of `elems` (empty: position p is element p),
/// in blocks of the kernel's lanes where it has them (Blocked), the rest one by one; `add_at(p)`
/// is how the element at position p adds.
template <class Kernel, class AddAt>
void host_positions(const Kernel &kernel, const IndexView &elems, Index lo, Index hi, const AddAt &add_at) {
  Index p = lo;
  if constexpr (Blocked<Kernel>) {
    constexpr int L = Kernel::lanes;
    for (; p + L <= hi; p += L) {
      Index e[L];
      for (int l = 0; l < L; ++l)
        e[l] = elems.extent(0) ? elems(p + l) : p + l;
      kernel.block(e, [&](int l, Index n, int c, Real v) { add_at(p + l)(n, c, v); });
    }
  }
  for (; p < hi; ++p)
    kernel(elems.extent(0) ? elems(p) : p, add_at(p));
}

/// Calls `kernel(e, add)` for every element of `sweep` (for_each_launch), where the kernel adds
/// its element vector through `add(node, component, value)`. `target` is not cleared.
template <class Kernel>
void scatter_elements(const std::string &label, ScatterStrategy strategy, const Coloring &coloring, Index num_elems,
                      const DofView &target, const Kernel &kernel, Sweep sweep = Sweep::All) {
  for_each_launch(strategy, coloring, num_elems, sweep, [&](const IndexView &elems, Index first, Index count) {
    if constexpr (std::is_same_v<MemSpace, Kokkos::HostSpace>) {
      const Coloring::ChunkPlan &plan = elems.extent(0) ? coloring.sweep_chunks : coloring.chunks;
      const AtomicAdd atomic{target};
      const PlainAdd plain{target};
      const Index end = first + count;
      if (strategy == ScatterStrategy::Atomic && plan.size > 0) {
        // A chunk of consecutive positions a thread, in one or two phases; atomics only where a
        // node's elements lie in chunks that may run together (Coloring::ChunkPlan).
        FEGPU_CHECK(static_cast<Index>(plan.atomic.extent(0)) >= end, "a chunk plan of another mesh");
        const Index size = plan.size, chunks = (count + size - 1) / size;
        const int phases = plan.phases;
        const auto marked = plan.atomic;
        for (int phase = 0; phase < phases; ++phase)
          Kokkos::parallel_for(label,
                               Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>(
                                   0, (chunks - phase + phases - 1) / phases),
                               [=](Index j) {
                                 const Index k = j * phases + phase;
                                 host_positions(kernel, elems, first + k * size, std::min(first + (k + 1) * size, end),
                                                [&](Index p) {
                                                  return [&, p](Index n, int c, Real v) {
                                                    if (marked(p))
                                                      atomic(n, c, v);
                                                    else
                                                      plain(n, c, v);
                                                  };
                                                });
                               });
        return;
      }
      if (strategy == ScatterStrategy::Coloring) {
        constexpr Index block = 64; // positions a task: whole blocks of lanes
        Kokkos::parallel_for(label, range(0, (count + block - 1) / block), [=](Index k) {
          host_positions(kernel, elems, first + k * block, std::min(first + (k + 1) * block, end),
                         [&](Index) { return plain; });
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
