#pragma once
/// \file types.hpp
/// The one place that names fegpu-kk's scalar and index types, execution and memory spaces and
/// the View aliases of mesh and field data. Every alias says its shape.
#include <Kokkos_Core.hpp>
#include <Kokkos_Profiling_ScopedRegion.hpp>
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
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

/// A uniform number in (0, 1) from a 64-bit state: splitmix64's finaliser, then the top 53 bits.
/// Seeded scatters (facet strengths, node perturbations) give the same numbers on every backend.
KOKKOS_INLINE_FUNCTION double hash_uniform(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double(z >> 11) + 0.5) * 0x1.0p-53;
}

/// A compressed-row map from one entity kind to another, e.g. node -> incident elements.
struct Crs {
  IndexView offsets; // (source + 1)
  IndexView indices; // (offsets(last))
};

/// A host vector into a device View of its size.
template <class T> void copy_to_device(const DeviceView<T *> &d, const std::vector<T> &v) {
  Kokkos::deep_copy(
      d, Kokkos::View<const T *, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(v.data(), v.size()));
}

/// A labelled device copy of a host vector (set-up and output, never a time loop).
template <class T> DeviceView<T *> to_device(const std::string &label, const std::vector<T> &v) {
  DeviceView<T *> d(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), v.size());
  copy_to_device(d, v);
  return d;
}

/// A View of rank 1 into host memory of its size (a frame's output array): on a GPU it must be
/// contiguous (a column of a layout-left array is); on the host any stride copies.
template <class V> void copy_to_host(const V &d, typename V::non_const_value_type *out) {
  Kokkos::deep_copy(
      Kokkos::View<typename V::non_const_value_type *, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
          out, d.extent(0)),
      d);
}

/// Row i of a View of rank 2 on the host, entry by entry: on a GPU a (node, component) row is strided
/// (layout left), and a strided View has no copy to the host.
template <class V> std::vector<typename V::non_const_value_type> row_to_host(const V &d, Index i) {
  std::vector<typename V::non_const_value_type> row(d.extent(1));
  for (std::size_t k = 0; k < row.size(); ++k)
    Kokkos::deep_copy(row[k], Kokkos::subview(d, i, k));
  return row;
}

/// A host vector copy of a View of rank 1.
template <class V> std::vector<typename V::non_const_value_type> to_host(const V &d) {
  std::vector<typename V::non_const_value_type> v(d.extent(0));
  copy_to_host(d, v.data());
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

/// Device storage kept from call to call, for arrays whose size follows a changing mesh (a
/// crack's topology grows at every insertion): view(n) gives n rows of it and allocates only when
/// they do not fit, then half as much again as before at least. On a GPU an allocation, and more
/// a free (which waits for the device), costs tens of microseconds: an array allocated afresh at
/// each insertion paid both every few steps. The views alias the storage without owning it: one
/// is valid until the next view() that grows it, and its contents are the caller's to fill.
template <class T> class Growing {
public:
  explicit Growing(std::string label) : label_(std::move(label)) {}
  /// `n` rows as a View of rank 1, or of rank 2 whose second extent is static or `c`.
  template <class View = DeviceView<T *>> View view(Index n, int c = 1) {
    static_assert(std::is_same_v<typename View::non_const_value_type, T>, "Growing<T>: a View of T");
    static_assert(View::rank() == 1 || View::rank() == 2, "Growing: rank 1 or 2");
    std::size_t per_row = 1;
    if constexpr (View::rank() == 2) per_row = View::rank_dynamic() == 2 ? std::size_t(c) : View::static_extent(1);
    const std::size_t need = static_cast<std::size_t>(n) * per_row;
    if (need > storage_.extent(0))
      storage_ = DeviceView<T *>(Kokkos::view_alloc(Kokkos::WithoutInitializing, label_),
                                 std::max(need, storage_.extent(0) + storage_.extent(0) / 2));
    if constexpr (View::rank() == 2 && View::rank_dynamic() == 2)
      return View(storage_.data(), n, c);
    else
      return View(storage_.data(), n);
  }
  std::size_t capacity_bytes() const { return storage_.span() * sizeof(T); }

private:
  std::string label_;
  DeviceView<T *> storage_;
};

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
