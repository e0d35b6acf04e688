#include "fegpu/input/input.hpp"
#include <gtest/gtest.h>
TEST(Input, Placeholder) { EXPECT_TRUE(true); }
