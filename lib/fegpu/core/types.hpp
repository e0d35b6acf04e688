#pragma once
/// \file types.hpp
/// The one place that names fegpu-kk's scalar and index types, execution and memory spaces and
/// the View aliases of mesh and field data. Every alias says its shape.
#include <Kokkos_Core.hpp>
#include <Kokkos_Profiling_ScopedRegion.hpp>
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace fegpu {

using Real = double;
using Index = int;        ///< local entity index (nodes, elements, facets) on one process
using GlobalId = int64_t; ///< global id, kept beside local indices for later domain decomposition

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;

template <class T> using DeviceView = Kokkos::View<T, MemSpace>;

using RealView = DeviceView<Real *>;         // (entity)
using IndexView = DeviceView<Index *>;       // (entity)
using GlobalIdView = DeviceView<GlobalId *>; // (entity)
using CoordView = DeviceView<Real *[3]>;     // (node, xyz): z is 0 for planar meshes
using ConnView = DeviceView<Index **>;       // (element, local node)
/// Nodal degrees of freedom, (node, component). Layout left on every backend: component-major,
/// so a flat index `comp * num_nodes + node` is contiguous and vector kernels see one array.
using DofView = Kokkos::View<Real **, Kokkos::LayoutLeft, MemSpace>;

/// A compressed-row map from one entity kind to another, e.g. node -> incident elements.
struct Crs {
  IndexView offsets; // (source + 1)
  IndexView indices; // (offsets(last))
};

/// A labelled device copy of a host vector (set-up and output, never a time loop).
template <class T> DeviceView<T *> to_device(const std::string &label, const std::vector<T> &v) {
  DeviceView<T *> d(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), v.size());
  Kokkos::deep_copy(
      d, Kokkos::View<const T *, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(v.data(), v.size()));
  return d;
}

/// A host vector copy of a View of rank 1.
template <class V> std::vector<typename V::non_const_value_type> to_host(const V &d) {
  std::vector<typename V::non_const_value_type> v(d.extent(0));
  Kokkos::deep_copy(
      Kokkos::View<typename V::non_const_value_type *, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
          v.data(), v.size()),
      d);
  return v;
}

/// Policy over [begin, end) on the default execution space. The light-weight hint makes CUDA
/// pass the functor as a kernel argument (up to 4 kB): Kokkos' default for functors over 512 bytes
/// copies them to constant memory and first waits on the host for the previous such kernel, which
/// serialises the host with the device on every launch (measured on an H100: the 12,500-element
/// shell plate took 46 us a step without the hint, 24 us with it).
inline auto range(Index begin, Index end) {
  return Kokkos::Experimental::require(Kokkos::RangePolicy<ExecSpace>(begin, end),
                                       Kokkos::Experimental::WorkItemProperty::HintLightWeight);
}

/// The same in blocks of at most `Block` threads on a GPU (a small launch of long per-thread work
/// then spreads over more multiprocessors than in Kokkos' own, larger blocks).
template <int Block> inline auto range_in_blocks(Index begin, Index end) {
  return Kokkos::Experimental::require(Kokkos::RangePolicy<ExecSpace, Kokkos::LaunchBounds<Block, 1>>(begin, end),
                                       Kokkos::Experimental::WorkItemProperty::HintLightWeight);
}

/// Copies row `j` of `src` to row `i` of `dst` (Views of rank 1, 2 or 4 of one shape past the
/// first extent): one thread a row, the copy kernels' body.
template <class View> KOKKOS_INLINE_FUNCTION void copy_row(const View &dst, Index i, const View &src, Index j) {
  if constexpr (View::rank() == 1) {
    dst(i) = src(j);
  } else if constexpr (View::rank() == 2) {
    for (std::size_t k = 0; k < src.extent(1); ++k)
      dst(i, k) = src(j, k);
  } else {
    static_assert(View::rank() == 4, "copy_row: rank 1, 2 or 4");
    for (std::size_t k = 0; k < src.extent(1); ++k)
      for (std::size_t l = 0; l < src.extent(2); ++l)
        for (std::size_t m = 0; m < src.extent(3); ++m)
          dst(i, k, l, m) = src(j, k, l, m);
  }
}

/// Gives a View of rank 1, 2 or 4 `n` rows (its first extent), keeping the leading ones; the new
/// rows are value-initialised when `initialize`, else left as allocated. One thread copies one
/// row: Kokkos::resize copies a rank-2 View with a multidimensional-range kernel, which on an
/// H100 took 580 us for 7.7 million rows of three doubles, five times the bandwidth's time.
template <class View> void resize_rows(View &v, Index n, bool initialize) {
  auto layout = v.layout();
  layout.dimension[0] = static_cast<std::size_t>(n);
  const View out = initialize ? View(Kokkos::view_alloc(v.label()), layout)
                              : View(Kokkos::view_alloc(Kokkos::WithoutInitializing, v.label()), layout);
  const View in = v;
  Kokkos::parallel_for(
      "fegpu::resize_rows", range(0, std::min(n, static_cast<Index>(v.extent(0)))),
      KOKKOS_LAMBDA(Index i) { copy_row(out, i, in, i); });
  v = out;
}

} // namespace fegpu
