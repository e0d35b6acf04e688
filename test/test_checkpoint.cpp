// Checkpoint files (issue 33) and the arrays in them (issue 32): a View of any layout or strides
// goes in and comes back in row-major order, exactly; a file cut short or altered anywhere is
// refused as bad input (InputError, exit 2) before any of it is believed, never read as a
// different state and never a crash.
#include "fegpu/core/error.hpp"
#include "fegpu/io/checkpoint.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

namespace fs = std::filesystem;

namespace checkpoint_test { // (named: nvcc warns of a View of a type in an anonymous namespace)
struct Pair {
  double a;
  std::int64_t b;
};
} // namespace checkpoint_test
using checkpoint_test::Pair;

namespace {

fs::path scratch(const std::string &name) {
  const fs::path d = fs::temp_directory_path() / ("fegpu_checkpoint_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d / name;
}

std::string bytes_of(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_bytes(const fs::path &p, const std::string &b) { std::ofstream(p, std::ios::binary) << b; }

using Left = Kokkos::View<double **, Kokkos::LayoutLeft, fegpu::MemSpace>;
using Right = Kokkos::View<double **, Kokkos::LayoutRight, fegpu::MemSpace>;

/// Entry (i, j) = 10 i + j in the first 4 rows of each; `big`'s rows after them -1.
void fill(const Left &left, const Right &right, const Left &big) {
  Kokkos::parallel_for(
      "fegpu::test::fill", Kokkos::RangePolicy<fegpu::ExecSpace>(0, 7), KOKKOS_LAMBDA(int i) {
        for (int j = 0; j < 3; ++j) {
          big(i, j) = i < 4 ? 10 * i + j : -1;
          if (i < 4) left(i, j) = right(i, j) = 10 * i + j;
        }
      });
}

void fill(const Kokkos::View<Pair *, fegpu::MemSpace> &pairs) {
  Kokkos::parallel_for(
      "fegpu::test::fill", Kokkos::RangePolicy<fegpu::ExecSpace>(0, 3), KOKKOS_LAMBDA(int i) {
        pairs(i) = {0.5 * i, -i};
      });
}

} // namespace

TEST(Checkpoint, ViewsOfAnyLayoutAndStrideGoInRowMajorOrder) {
  // A (4, 3) array whose entry (i, j) is 10 i + j, laid out left, right, and as the first 4 rows
  // of a (7, 3) array (a strided subview, as the fracture module's cohesive points are): every
  // one is stored as 0, 1, 2, 10, 11, 12, ... On a GPU the left and strided ones have no copy to
  // the host of their own (the fracture checkpoint failed there).
  Left left("left", 4, 3), big("big", 7, 3);
  Right right("right", 4, 3);
  fill(left, right, big);
  const auto strided = Kokkos::subview(big, std::make_pair(0, 4), Kokkos::ALL);
  fegpu::CheckpointWriter w;
  w.put_view("left", left);
  w.put_view("right", right);
  w.put_view("strided", strided);
  const fs::path file = scratch("layouts.ckpt");
  w.write(file.string());
  const fegpu::CheckpointReader r(file.string());
  std::vector<double> expected;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      expected.push_back(10 * i + j);
  EXPECT_EQ(r.reals("left"), expected);
  EXPECT_EQ(r.reals("right"), expected);
  EXPECT_EQ(r.reals("strided"), expected);
  // And back into each kind: the strided one's other rows untouched.
  Kokkos::deep_copy(left, 0.0), Kokkos::deep_copy(big, 7.0);
  r.get_view("right", left);
  r.get_view("left", strided);
  const auto hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), left);
  const auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), big);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 3; ++j) {
      if (i < 4) EXPECT_EQ(hl(i, j), 10 * i + j);
      EXPECT_EQ(hb(i, j), i < 4 ? 10 * i + j : 7.0);
    }
  // A size that does not fit is refused.
  Kokkos::View<double **, fegpu::MemSpace> wrong("wrong", 3, 4 + 1);
  EXPECT_THROW(r.get_view("left", wrong), fegpu::InputError);
}

TEST(Checkpoint, EveryKindOfEntryComesBackExactly) {
  fegpu::CheckpointWriter w;
  const std::vector<double> reals = {1.0 / 3.0, -0.0, 1e-310, 6.02e23, std::numeric_limits<double>::max()};
  const std::vector<std::int64_t> ints = {0, -1, std::numeric_limits<std::int64_t>::min(), 1LL << 53};
  w.put("reals", reals);
  w.put("ints", ints);
  w.put("no reals", std::vector<double>{});
  w.set("pi", 3.141592653589793);
  w.set("text", std::string("odd length"));
  w.set("empty", std::string());
  Kokkos::View<Pair *, fegpu::MemSpace> pairs("pairs", 3);
  fill(pairs);
  w.put_view("pairs", pairs);
  const fs::path file = scratch("kinds.ckpt");
  w.write(file.string());
  EXPECT_FALSE(fs::exists(file.string() + ".partial"));
  const fegpu::CheckpointReader r(file.string());
  EXPECT_EQ(r.reals("reals"), reals);
  EXPECT_TRUE(std::signbit(r.reals("reals")[1]));
  EXPECT_EQ(r.integers("ints"), ints);
  EXPECT_TRUE(r.reals("no reals").empty());
  EXPECT_EQ(r.number("pi"), 3.141592653589793);
  EXPECT_EQ(r.string("text"), "odd length");
  EXPECT_EQ(r.string("empty"), "");
  Kokkos::View<Pair *, fegpu::MemSpace> back("back", 3);
  r.get_view("pairs", back);
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), back);
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(h(i).a == 0.5 * i && h(i).b == -i);
  EXPECT_THROW(r.number("absent"), fegpu::InputError);
}

TEST(Checkpoint, EveryTruncationAndAlterationIsRefused) {
  fegpu::CheckpointWriter w;
  std::vector<double> field(2000);
  for (std::size_t i = 0; i < field.size(); ++i)
    field[i] = std::sin(0.01 * double(i));
  w.put("driver.u", field);
  w.put("cracked.links", std::vector<std::int64_t>(300, 42));
  w.set("run.steps", 100.0);
  w.set("run.module", std::string("elastodynamics"));
  const fs::path good = scratch("good.ckpt"), bad = scratch("bad.ckpt");
  w.write(good.string());
  const std::string original = bytes_of(good);
  ASSERT_GT(original.size(), 18000u);
  const auto refused = [&](const std::string &damaged, const std::string &what) {
    write_bytes(bad, damaged);
    try {
      const fegpu::CheckpointReader r(bad.string());
      ADD_FAILURE() << what << ": read as a checkpoint";
    } catch (const fegpu::InputError &e) {
      EXPECT_NE(std::string(e.what()).find(bad.string()), std::string::npos) << e.what();
    } catch (...) {
      ADD_FAILURE() << what << ": another error than bad input";
    }
  };
  // Every length up to 64 bytes and around every entry's start, then every 97th.
  for (std::size_t n = 0; n < original.size(); n += n < 64 ? 1 : 97)
    refused(original.substr(0, n), "cut to " + std::to_string(n) + " bytes");
  refused(original + std::string(8, '\0'), "8 bytes added");
  // 400 alterations of 1 to 4 bytes anywhere, seeded.
  std::mt19937_64 rng(20261126);
  for (int k = 0; k < 400; ++k) {
    std::string d = original;
    const int flips = 1 + int(rng() % 4);
    for (int f = 0; f < flips; ++f)
      d[rng() % d.size()] ^= char(1 + rng() % 255);
    refused(d, "alteration " + std::to_string(k));
  }
  // The good one still reads, exactly.
  EXPECT_EQ(fegpu::CheckpointReader(good.string()).reals("driver.u"), field);
  fs::remove_all(good.parent_path());
}
