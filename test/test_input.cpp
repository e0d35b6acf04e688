// The input layer: locations, key paths, type and range errors, unknown keys with suggestions,
// and the expression evaluator (checked against values computed by hand).
#include "fegpu/driver/time_function.hpp"
#include "fegpu/input/expression.hpp"
#include "fegpu/input/input.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace fegpu;

namespace {
std::string error_of(const std::function<void()> &f) {
  try {
    f();
  } catch (const InputError &e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST(Input, ReportsFileLineColumnAndKeyPath) {
  const Input in = Input::from_string("physics: x\nmaterials:\n  steel:\n    density: -3\n", "case.yaml");
  const std::string msg = error_of([&] { in.root().child("materials").child("steel").get_positive("density"); });
  EXPECT_NE(msg.find("case.yaml:4:14"), std::string::npos) << msg;
  EXPECT_NE(msg.find("materials.steel.density"), std::string::npos) << msg;
  EXPECT_NE(msg.find("must be > 0"), std::string::npos) << msg;
}

TEST(Input, WrongTypes) {
  const Input in = Input::from_string("a: hello\nb: [1, 2]\nc: 2.5\nd: maybe\n", "t.yaml");
  EXPECT_NE(error_of([&] { in.root().get<double>("a"); }).find("expected a finite number, got 'hello'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { in.root().get<double>("b"); }).find("expected a number, got a list"), std::string::npos);
  EXPECT_NE(error_of([&] { in.root().get<int>("c"); }).find("expected an integer"), std::string::npos);
  EXPECT_NE(error_of([&] { in.root().get<bool>("d"); }).find("expected true or false"), std::string::npos);
  EXPECT_EQ(in.root().get<std::vector<double>>("b"), (std::vector<double>{1, 2}));
}

TEST(Input, MissingKey) {
  const Input in = Input::from_string("time: {dt: 1}\n", "t.yaml");
  const std::string msg = error_of([&] { in.root().child("time").get_positive("end_time"); });
  EXPECT_NE(msg.find("time: missing required key 'end_time'"), std::string::npos) << msg;
}

TEST(Input, UnknownKeyWithSuggestion) {
  const Input in = Input::from_string("time:\n  end_time: 1\n  safty_factor: 0.5\n", "t.yaml");
  in.root().child("time").get_positive("end_time");
  in.root().child("time").get_positive("safety_factor", 0.8);
  const std::string msg = error_of([&] { in.check_unused(); });
  EXPECT_NE(msg.find("t.yaml:3:3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown key 'safty_factor'; did you mean 'safety_factor'?"), std::string::npos) << msg;
}

TEST(Input, AllKeysReadPassesCheck) {
  const Input in = Input::from_string("a: 1\nb: {c: 2}\n", "t.yaml");
  in.root().get<double>("a");
  in.root().child("b").get<double>("c");
  EXPECT_NO_THROW(in.check_unused());
}

TEST(Input, SyntaxErrorHasLocation) {
  const std::string msg = error_of([] { Input::from_string("a: 1\nb: [1, 2\nc: 3\n", "bad.yaml"); });
  EXPECT_NE(msg.find("bad.yaml:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("YAML syntax error"), std::string::npos) << msg;
}

TEST(Input, ChoiceSuggestsClosest) {
  const Input in = Input::from_string("scatter: atomc\n", "t.yaml");
  const std::string msg = error_of([&] { in.root().get_choice("scatter", {"coloring", "atomic"}); });
  EXPECT_NE(msg.find("did you mean 'atomic'"), std::string::npos) << msg;
}

TEST(Expression, EvaluatesLikeHandWrittenCode) {
  const Expression e("0.5*sin(pi*x) + y^2 - cosh(x)/(1+abs(y)) - -2", {"x", "y"});
  for (double x : {-1.3, 0.0, 0.7})
    for (double y : {-2.0, 0.25, 3.0})
      EXPECT_DOUBLE_EQ(e({x, y}), 0.5 * std::sin(M_PI * x) + y * y - std::cosh(x) / (1 + std::fabs(y)) + 2);
  EXPECT_DOUBLE_EQ(Expression("2^3^2", {})({}), 512.0); // right associative
  EXPECT_DOUBLE_EQ(Expression("-2^2", {})({}), -4.0);
  EXPECT_THROW(Expression("sin(x", {"x"}), std::invalid_argument);
  EXPECT_THROW(Expression("z + 1", {"x"}), std::invalid_argument);
  EXPECT_THROW(Expression("1 +", {"x"}), std::invalid_argument);
}

TEST(TimeFunction, PiecewiseLinearValueSlopeIntegral) {
  const TimeFunction f({0.0, 1.0, 3.0}, {0.0, 2.0, 2.0});
  EXPECT_DOUBLE_EQ(f.value(0.5), 1.0);
  EXPECT_DOUBLE_EQ(f.value(5.0), 2.0);
  EXPECT_DOUBLE_EQ(f.slope(0.5), 2.0);
  EXPECT_DOUBLE_EQ(f.slope(2.0), 0.0);
  EXPECT_DOUBLE_EQ(f.integral(0.5), 0.25); // t^2
  EXPECT_DOUBLE_EQ(f.integral(2.0), 1.0 + 2.0);
  EXPECT_DOUBLE_EQ(f.integral(4.0), 1.0 + 4.0 + 2.0);
  EXPECT_DOUBLE_EQ(TimeFunction().integral(3.0), 3.0);
}
