#pragma once
// The application run as a user runs it, for the tests of its behaviour: one input file per
// test in a folder of its own, the program's exit status, what it printed and what it wrote.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Result {
  int status;
  std::string out, err;
};

class App : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fegpu_app_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "out");
  }
  void TearDown() override { fs::remove_all(dir_); }

  Result run(const std::string &yaml, const std::string &args = "") {
    { std::ofstream(dir_ / "input.yaml") << yaml; }
    const std::string cmd = std::string(FEGPU_APP) + " " + (dir_ / "input.yaml").string() + " --output-dir " +
                            (dir_ / "out").string() + " " + args + " > " + (dir_ / "stdout").string() + " 2> " +
                            (dir_ / "stderr").string();
    const int raw = std::system(cmd.c_str());
    Result r{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(dir_ / "stdout"), slurp(dir_ / "stderr")};
    return r;
  }
  static std::string slurp(const fs::path &p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::vector<std::string> outputs() const {
    std::vector<std::string> v;
    for (const auto &e : fs::directory_iterator(dir_ / "out"))
      v.push_back(e.path().filename());
    return v;
  }
  /// Runs bad input and checks the status, that the message holds every fragment, that it is one
  /// line, and that no output was written.
  void expect_bad_input(const std::string &yaml, const std::vector<std::string> &fragments) {
    const Result r = run(yaml);
    EXPECT_EQ(r.status, 2) << r.err;
    for (const auto &f : fragments)
      EXPECT_NE(r.err.find(f), std::string::npos) << "missing '" << f << "' in: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(outputs().empty());
  }
  fs::path dir_;
};

const std::string kGood = R"(physics: elastodynamics
mesh: {generator: rectangle, element: tri6, nx: 10, ny: 2, lx: 1.0, ly: 0.1}
materials:
  steel: {density: 1.0, youngs_modulus: 1.0, poissons_ratio: 0.25}
boundary_conditions:
  - {type: displacement, node_set: left, components: [x, y], value: 0.0}
initial_conditions:
  velocity: {y: "0.01*x"}
time: {end_time: 0.5}
output: {file: good.e, every_steps: 10}
)";

std::string replace(std::string s, const std::string &from, const std::string &to) {
  const auto pos = s.find(from);
  if (pos == std::string::npos) throw std::logic_error("test input lacks " + from);
  return s.replace(pos, from.size(), to);
}

} // namespace
