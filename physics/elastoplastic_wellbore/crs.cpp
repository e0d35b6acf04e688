#include "crs.hpp"

#ifdef FEGPU_HAVE_KOKKOSKERNELS
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#endif

#include <type_traits>

namespace fegpu::wellbore {

namespace {

/// Whether the execution space is a GPU's, where rows go to vector lanes.
constexpr bool kVectorRows = !std::is_same_v<ExecSpace, Kokkos::DefaultHostExecutionSpace>;

/// Vector lanes per row: the power of two nearest half the average row length, 4 to 32 (a warp).
int lanes(const CrsMatrix &A) {
  const double average = A.rows() > 0 ? double(A.values.extent(0)) / A.rows() : 1.0;
  int v = 4;
  while (v < 32 && 2 * v < average)
    v *= 2;
  return v;
}

/// Row i of A x, summed by the vector lanes of a team member (on the host: one lane).
template <class Member>
KOKKOS_INLINE_FUNCTION double row_times(const Member &m, const IndexView &rp, const IndexView &c, const RealView &v,
                                        const RealView &x, Index i) {
  double s = 0;
  Kokkos::parallel_reduce(
      Kokkos::ThreadVectorRange(m, rp(i), rp(i + 1)), [&](Index q, double &acc) { acc += v(q) * x(c(q)); }, s);
  return s;
}

} // namespace

void spmv(const CrsMatrix &A, const RealView &x, const RealView &y, double beta) {
#ifdef FEGPU_HAVE_KOKKOSKERNELS
  // A view of our arrays (no copy) as KokkosKernels' matrix type.
  using Matrix = KokkosSparse::CrsMatrix<Real, Index, Kokkos::Device<ExecSpace, MemSpace>, void, Index>;
  const Matrix K("fegpu::wellbore::spmv", A.rows(), A.num_cols, static_cast<Index>(A.values.extent(0)), A.values,
                 A.row_ptr, A.cols);
  KokkosSparse::spmv("N", 1.0, K, x, beta, y);
#else
  const auto rp = A.row_ptr;
  const auto c = A.cols;
  const auto v = A.values;
  const Index rows = A.rows();
  if constexpr (kVectorRows) {
    const int vector = lanes(A), team = 256 / vector;
    using Policy = Kokkos::TeamPolicy<ExecSpace>;
    Kokkos::parallel_for(
        "fegpu::wellbore::spmv", Policy((rows + team - 1) / team, team, vector),
        KOKKOS_LAMBDA(const Policy::member_type &m) {
          const Index i = m.league_rank() * m.team_size() + m.team_rank();
          if (i >= rows) return;
          const double s = row_times(m, rp, c, v, x, i);
          Kokkos::single(Kokkos::PerThread(m), [&] { y(i) = beta == 0 ? s : s + beta * y(i); });
        });
  } else {
    Kokkos::parallel_for(
        "fegpu::wellbore::spmv", range(0, rows), KOKKOS_LAMBDA(Index i) {
          double s = 0;
          for (Index q = rp(i); q < rp(i + 1); ++q)
            s += v(q) * x(c(q));
          y(i) = beta == 0 ? s : s + beta * y(i);
        });
  }
#endif
}

double spmv_dot(const CrsMatrix &A, const RealView &x, const RealView &y) {
  const auto rp = A.row_ptr;
  const auto c = A.cols;
  const auto v = A.values;
  const Index rows = A.rows();
  double xy = 0;
  if constexpr (kVectorRows) {
    const int vector = lanes(A), team = 256 / vector;
    using Policy = Kokkos::TeamPolicy<ExecSpace>;
    Kokkos::parallel_reduce(
        "fegpu::wellbore::spmv_dot", Policy((rows + team - 1) / team, team, vector),
        KOKKOS_LAMBDA(const Policy::member_type &m, double &acc) {
          const Index i = m.league_rank() * m.team_size() + m.team_rank();
          if (i >= rows) return;
          const double s = row_times(m, rp, c, v, x, i);
          Kokkos::single(Kokkos::PerThread(m), [&] {
            y(i) = s;
            acc += x(i) * s;
          });
        },
        xy);
  } else {
    Kokkos::parallel_reduce(
        "fegpu::wellbore::spmv_dot", range(0, rows),
        KOKKOS_LAMBDA(Index i, double &acc) {
          double s = 0;
          for (Index q = rp(i); q < rp(i + 1); ++q)
            s += v(q) * x(c(q));
          y(i) = s;
          acc += x(i) * s;
        },
        xy);
  }
  return xy;
}

double dot(const RealView &x, const RealView &y) {
  double s = 0;
  Kokkos::parallel_reduce(
      "fegpu::wellbore::dot", range(0, static_cast<Index>(x.extent(0))),
      KOKKOS_LAMBDA(Index i, double &acc) { acc += x(i) * y(i); }, s);
  return s;
}

void inverse_diagonal(const CrsMatrix &A, const RealView &d) {
  const auto rp = A.row_ptr;
  const auto c = A.cols;
  const auto v = A.values;
  Kokkos::parallel_for(
      "fegpu::wellbore::inverse_diagonal", range(0, A.rows()), KOKKOS_LAMBDA(Index i) {
        for (Index q = rp(i); q < rp(i + 1); ++q)
          if (c(q) == i) d(i) = 1 / v(q);
      });
}

} // namespace fegpu::wellbore
