#pragma once
/// \file checkpoint.hpp
/// Checkpoints: a run's complete state in one netCDF file (the 64-bit data format, CDF5, so arrays
/// past 4 GB stay readable; netCDF is already linked for Exodus), as named arrays of doubles or
/// 64-bit integers and named numbers and strings. A checkpoint is written whole under a temporary
/// name and renamed, so a run killed while writing leaves the earlier ones intact. A reader that
/// finds the file missing, not a checkpoint, of another format version, or lacking an entry
/// throws InputError naming the file and the entry (exit 2).
#include "fegpu/core/types.hpp"

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

namespace fegpu {

/// What a run's checkpoints name as their origin, and a restart checks: the module and the
/// fingerprint of its input (fingerprint() in input.hpp) outside its time and output sections.
struct RunIdentity {
  std::string module, fingerprint;
};

class CheckpointWriter;
class CheckpointReader;

/// Names the run in a checkpoint.
void set_identity(CheckpointWriter &w, const RunIdentity &identity);
/// InputError (exit 2) unless a checkpoint comes from this module and an input of this fingerprint.
void check_identity(const CheckpointReader &r, const RunIdentity &identity);

class CheckpointWriter {
public:
  void put(const std::string &name, std::vector<double> values);
  void put(const std::string &name, std::vector<std::int64_t> values);
  /// Any View, of any layout and strides, copied to the host in row-major order: doubles as reals,
  /// integers as integers, a struct (of 8-byte words) as its words' bits, exactly.
  template <class View> void put_view(const std::string &name, const View &v);
  void set(const std::string &name, double value) { numbers_[name] = value; }
  void set(const std::string &name, const std::string &value) { strings_[name] = value; }
  /// Writes everything to `path` (through path.partial and a rename); RunError on failure.
  void write(const std::string &path) const;

private:
  void write_file(const std::string &partial, const std::string &path) const;
  std::map<std::string, std::vector<double>> reals_;
  std::map<std::string, std::vector<std::int64_t>> integers_;
  std::map<std::string, double> numbers_;
  std::map<std::string, std::string> strings_;
};

class CheckpointReader {
public:
  /// Reads the whole file; InputError if it is not a checkpoint of this version.
  explicit CheckpointReader(const std::string &path);
  const std::string &path() const { return path_; }
  bool has(const std::string &name) const;
  const std::vector<double> &reals(const std::string &name) const;
  const std::vector<std::int64_t> &integers(const std::string &name) const;
  double number(const std::string &name) const;
  const std::string &string(const std::string &name) const;
  /// Fills a View (allocated with its final extents) from an array written by put_view; its
  /// size must match (InputError otherwise).
  template <class View> void get_view(const std::string &name, const View &v) const;
  /// InputError naming the file, for what a caller finds wrong with the contents.
  [[noreturn]] void mismatch(const std::string &what) const;

private:
  std::string path_;
  std::map<std::string, std::vector<double>> reals_;
  std::map<std::string, std::vector<std::int64_t>> integers_;
  std::map<std::string, double> numbers_;
  std::map<std::string, std::string> strings_;
};

namespace detail {

/// A View's entries in row-major order, in a contiguous View of its memory space (a copy): the
/// order a checkpoint keeps whatever the layout and strides. A GPU's arrays are column-major and a
/// subview of a capacity-sized array is strided, and neither has a copy to the host of its own.
template <class View>
using RowMajor = Kokkos::View<typename View::non_const_data_type, Kokkos::LayoutRight, typename View::memory_space>;
template <class View> RowMajor<View> row_major_like(const View &v) {
  Kokkos::LayoutRight layout;
  for (unsigned r = 0; r < View::rank(); ++r)
    layout.dimension[r] = v.extent(r);
  return RowMajor<View>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::checkpoint::staging"), layout);
}

} // namespace detail

template <class View> void CheckpointWriter::put_view(const std::string &name, const View &v) {
  const auto staging = detail::row_major_like(v);
  Kokkos::deep_copy(staging, v);
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), staging);
  using T = typename View::non_const_value_type;
  const T *p = h.data();
  if constexpr (std::is_floating_point_v<T>) {
    put(name, std::vector<double>(p, p + h.size()));
  } else if constexpr (std::is_integral_v<T>) {
    put(name, std::vector<std::int64_t>(p, p + h.size()));
  } else {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 8 == 0, "a struct of 8-byte words");
    std::vector<std::int64_t> words(h.size() * sizeof(T) / 8);
    std::memcpy(words.data(), p, words.size() * 8);
    put(name, std::move(words));
  }
}

template <class View> void CheckpointReader::get_view(const std::string &name, const View &v) const {
  using T = typename View::non_const_value_type;
  const auto staging = detail::row_major_like(v);
  const auto h = Kokkos::create_mirror_view(staging);
  const auto check = [&](std::size_t have, std::size_t want) {
    if (have != want)
      mismatch("'" + name + "' holds " + std::to_string(have) + " values where this run has " + std::to_string(want));
  };
  if constexpr (std::is_floating_point_v<T> || std::is_integral_v<T>) {
    const auto fill = [&](const auto &values) {
      check(values.size(), h.size());
      for (std::size_t i = 0; i < values.size(); ++i)
        h.data()[i] = static_cast<T>(values[i]);
    };
    if constexpr (std::is_floating_point_v<T>)
      fill(reals(name));
    else
      fill(integers(name));
  } else {
    const auto &words = integers(name);
    check(words.size(), h.size() * sizeof(T) / 8);
    std::memcpy(h.data(), words.data(), words.size() * 8);
  }
  Kokkos::deep_copy(staging, h);
  Kokkos::deep_copy(v, staging);
}

} // namespace fegpu
