// GoogleTest main that brings Kokkos up once for the whole test program, on whatever backend the
// build enabled: every test runs on every backend.
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

int main(int argc, char **argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
