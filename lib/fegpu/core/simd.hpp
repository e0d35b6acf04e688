#pragma once
/// \file simd.hpp
/// A pack of doubles, one element a lane, for element kernels that run a block of elements at once
/// on a CPU. Written once over a value type T, an element's maths runs on double (one element, the
/// GPU) or on Pack (kLanes elements, the host): the gather and the scatter stay per lane, the
/// arithmetic between them becomes vector instructions, which a compiler cannot find itself across
/// elements whose nodes are gathered. GCC's and Clang's vector extensions give the widest
/// instructions the target has (SSE2 by default, AVX2 or AVX-512 with -march=native, FEGPU_NATIVE),
/// where Kokkos' SIMD types give one lane unless Kokkos itself was built for the CPU (Debian's is
/// not). Host-only builds with GCC or Clang define FEGPU_HOST_LANES; others run element by element.
#include <Kokkos_Core.hpp>

#if defined(__GNUC__) && !defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_HIP) && !defined(KOKKOS_ENABLE_SYCL)
#define FEGPU_HOST_LANES 1

namespace fegpu::simd {

#if defined(__AVX512F__)
inline constexpr int kLanes = 8;
#elif defined(__AVX__)
inline constexpr int kLanes = 4;
#else
inline constexpr int kLanes = 2;
#endif

/// kLanes doubles with the arithmetic of double, lane by lane (IEEE, no reordering): each lane
/// gives the bits the scalar code gives, up to the compiler's contraction of a * b + c into one
/// rounding, which may differ between the vector and the scalar code where the target has FMA.
struct Pack {
  using Vector = double __attribute__((vector_size(kLanes * sizeof(double))));
  Vector v;
  Pack() = default;
  Pack(double s) : v(Vector{} + s) {} // NOLINT(google-explicit-constructor): a double broadcasts
  explicit Pack(Vector w) : v(w) {}
  double operator[](int lane) const { return v[lane]; }
  void set(int lane, double s) { v[lane] = s; }
  friend Pack operator+(Pack a, Pack b) { return Pack(a.v + b.v); }
  friend Pack operator-(Pack a, Pack b) { return Pack(a.v - b.v); }
  friend Pack operator*(Pack a, Pack b) { return Pack(a.v * b.v); }
  friend Pack operator/(Pack a, Pack b) { return Pack(a.v / b.v); }
  friend Pack operator-(Pack a) { return Pack(-a.v); }
  Pack &operator+=(Pack b) { return v += b.v, *this; }
  Pack &operator-=(Pack b) { return v -= b.v, *this; }
  Pack &operator*=(Pack b) { return v *= b.v, *this; }
};

} // namespace fegpu::simd
#endif
