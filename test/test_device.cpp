// The device compiles our code as the host does (issue 32). With nvcc 13 and C++20, Kokkos'
// mdspan-based View was laid out one way by the host compiler and another by the device pass where
// mdspan marks members [[no_unique_address]] (kokkos/mdspan issue 434): a kernel then read its
// Views at the wrong offsets, and every parallel_reduce wrote through a null pointer. Here the
// device reports the size and member offsets of the objects our kernels carry, to be equal to the
// host's, and reductions of each kind we use give their exact sums.
#include "fegpu/core/scan.hpp"
#include "fegpu/core/types.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using fegpu::DeviceView;
using fegpu::ExecSpace;
using fegpu::Index;
using fegpu::Real;

/// What a kernel of ours captures: Views of every kind it uses, between scalars.
struct Carried {
  int a;
  fegpu::RealView values;
  double b;
  fegpu::DofView dofs;
  fegpu::CoordView coords;
  Kokkos::View<Real **, Kokkos::LayoutStride, fegpu::MemSpace> strided;
  DeviceView<Real *[2][3][2]> faces;
  Index c;
};

constexpr int kFacts = 8;
KOKKOS_INLINE_FUNCTION void layout_facts(long *f) {
  const Carried c{};
  const auto at = [&](const auto &member) {
    return long(reinterpret_cast<const char *>(&member) - reinterpret_cast<const char *>(&c));
  };
  f[0] = sizeof(Carried);
  f[1] = at(c.values), f[2] = at(c.b), f[3] = at(c.dofs), f[4] = at(c.coords);
  f[5] = at(c.strided), f[6] = at(c.faces), f[7] = at(c.c);
}

Kokkos::View<long *, Kokkos::HostSpace> device_layout_facts() {
  Kokkos::View<long *, fegpu::MemSpace> d("fegpu::test::layout", kFacts);
  Kokkos::parallel_for(
      "fegpu::test::layout", Kokkos::RangePolicy<ExecSpace>(0, 1), KOKKOS_LAMBDA(int) { layout_facts(d.data()); });
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
}

/// Sum and maximum over a View the kernel reads, and a sum into a View on the device.
void reductions(Index n, double &sum, double &max, double &into_view) {
  fegpu::RealView x("fegpu::test::x", n);
  Kokkos::parallel_for(
      "fegpu::test::fill", fegpu::range(0, n), KOKKOS_LAMBDA(Index i) { x(i) = double(i % 1000); });
  Kokkos::parallel_reduce(
      "fegpu::test::sum", fegpu::range(0, n), KOKKOS_LAMBDA(Index i, double &s) { s += x(i); }, sum);
  Kokkos::parallel_reduce(
      "fegpu::test::max", fegpu::range(0, n), KOKKOS_LAMBDA(Index i, double &m) { m = x(i) > m ? x(i) : m; },
      Kokkos::Max<double>(max));
  Kokkos::View<double, fegpu::MemSpace> result("fegpu::test::result");
  Kokkos::parallel_reduce(
      "fegpu::test::sum_into_view", fegpu::range(0, n), KOKKOS_LAMBDA(Index i, double &s) { s += 2 * x(i); }, result);
  Kokkos::deep_copy(into_view, result);
}

} // namespace

TEST(Device, LaysOutWhatKernelsCarryAsTheHostDoes) {
  long host[kFacts];
  layout_facts(host);
  const auto device = device_layout_facts();
  const char *what[kFacts] = {"size", "values", "b", "dofs", "coords", "strided", "faces", "c"};
  for (int k = 0; k < kFacts; ++k)
    EXPECT_EQ(device(k), host[k]) << what[k] << " (device against host)";
}

TEST(Device, ReductionsGiveTheirExactSums) {
  // 10^6 entries i % 1000: the sum is 1000 times 0 + 1 + ... + 999, exact in doubles.
  const Index n = 1000000;
  double sum = -1, max = -1, into_view = -1;
  reductions(n, sum, max, into_view);
  EXPECT_EQ(sum, 1000.0 * 999.0 * 1000.0 / 2);
  EXPECT_EQ(max, 999.0);
  EXPECT_EQ(into_view, 2 * sum);
}

namespace {

// Item i's value in the scan test: two counts in one 64-bit value, as the ranks' node order packs them.
KOKKOS_INLINE_FUNCTION int64_t packed(Index i) { return int64_t(i % 7) + (int64_t(i % 3 == 0) << 32); }

/// scan_on_device() over [0, n) of packed(), each item's prefix and total written out; the total
/// it leaves on the device, read back.
int64_t scan_packed(Index n, const DeviceView<int64_t *> &before, const DeviceView<int64_t *> &total,
                    fegpu::Growing<int64_t> &sums) {
  int64_t whole = 0;
  Kokkos::deep_copy(whole, fegpu::scan_on_device(
                               "fegpu::test::scan", n, KOKKOS_LAMBDA(Index i) { return packed(i); },
                               KOKKOS_LAMBDA(Index i, int64_t p, int64_t t) { before(i) = p, total(i) = t; }, sums));
  return whole;
}

/// Item i's group in the group order test (0, 1 or 2).
KOKKOS_INLINE_FUNCTION int group_of_item(Index i) { return i % 5 == 0 ? 1 : (i % 3 == 0 ? 2 : 0); }

/// group_order() over [0, n) of group_of_item().
void order_groups(Index n, const fegpu::IndexView &id, const DeviceView<Index[2]> &sizes,
                  fegpu::Growing<int64_t> &sums) {
  fegpu::group_order(
      "fegpu::test::group_order", n, KOKKOS_LAMBDA(Index i) { return group_of_item(i); }, id, sizes, sums);
}

} // namespace

// group_order() (core/scan.hpp) against a stable partition on the host: each item's new number
// (group 0's items first, then group 1's, then group 2's, each in its order), and the sizes it
// leaves on the device, across a block's edge and for the empty range after a full one.
TEST(Device, GroupOrderNumbersThreeGroupsInTheirOrderAndLeavesTheirSizes) {
  fegpu::Growing<int64_t> sums("sums");
  const DeviceView<Index[2]> sizes("sizes");
  for (Index n : {Index(1), fegpu::kScanBlock + 5, Index(0), Index(100000)}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    fegpu::IndexView id("id", n);
    order_groups(n, id, sizes, sums);
    const auto ih = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), id);
    const auto sh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sizes);
    std::vector<Index> expected(n);
    Index next = 0;
    for (int g = 0; g < 3; ++g) {
      for (Index i = 0; i < n; ++i)
        if (group_of_item(i) == g) expected[i] = next++;
      if (g < 2) EXPECT_EQ(sh(g), next) << "groups up to " << g;
    }
    Index wrong = 0;
    for (Index i = 0; i < n; ++i)
      wrong += ih(i) != expected[i];
    EXPECT_EQ(wrong, 0);
  }
}

// scan_on_device() (core/scan.hpp) against a running sum on the host: each item's prefix and the
// total, at sizes around its blocks' (kScanBlock) edges, the empty range included, the values
// 64-bit, and later calls reusing the sums.
TEST(Device, ScanOnDeviceGivesEachItemItsPrefixAndTheTotal) {
  fegpu::Growing<int64_t> sums("sums");
  const Index b = fegpu::kScanBlock;
  for (Index n : {Index(0), Index(1), b - 1, b, b + 1, 3 * b + 17, Index(250000), Index(7)}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    DeviceView<int64_t *> before("before", n), total("total", n);
    const int64_t got = scan_packed(n, before, total, sums);
    const auto bh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), before);
    const auto th = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), total);
    int64_t sum = 0;
    for (Index i = 0; i < n; ++i)
      sum += packed(i);
    int64_t run = 0;
    Index wrong = 0;
    for (Index i = 0; i < n; ++i) {
      wrong += bh(i) != run || th(i) != sum;
      run += packed(i);
    }
    EXPECT_EQ(wrong, 0);
    EXPECT_EQ(got, sum);
  }
}
