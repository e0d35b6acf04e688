// Bad input and faults that used to crash, hang, succeed silently or lose data: each now ends with
// its exit status (1 usage, 2 bad input, 3 the run failed, 128 + N a signal) and one clear line.
#include "app_fixture.hpp"
#include "fegpu/io/exodus.hpp"
#include "fegpu/mesh/generators.hpp"

#include <csignal>
#include <sys/resource.h>
#include <thread>

namespace {

/// An Exodus mesh file beside the input, written through the Exodus API as given.
void write_mesh(const fs::path &path, const fegpu::HostMesh &h) { fegpu::ExodusWriter w(path.string(), h, {}); }

const std::string kMeshFromFile = "{file: plate.exo}";

std::string on_file_mesh(const std::string &yaml) {
  return replace(yaml, "{generator: rectangle, element: tri6, nx: 10, ny: 2, lx: 1.0, ly: 0.1}", kMeshFromFile);
}

} // namespace

TEST_F(App, ASetNamingAMissingNodeOrSideIsBadInput) {
  fegpu::HostMesh h = fegpu::generate_rectangle(fegpu::ElementType::Tri6, 4, 2, 1.0, 0.1);
  for (auto &set : h.node_sets)
    if (set.name == "left") set.a.push_back(10000); // a node the mesh does not have
  write_mesh(dir_ / "plate.exo", h);
  expect_bad_input(on_file_mesh(kGood), {"plate.exo", "node set 'left'", "node 10001"});
  h = fegpu::generate_rectangle(fegpu::ElementType::Tri6, 4, 2, 1.0, 0.1);
  h.side_sets[0].b[0] = 7; // a triangle has three sides
  write_mesh(dir_ / "plate.exo", h);
  expect_bad_input(on_file_mesh(kGood), {"plate.exo", "side set", "no such side"});
  h = fegpu::generate_rectangle(fegpu::ElementType::Tri6, 4, 2, 1.0, 0.1);
  h.xyz[4] = std::nan("");
  write_mesh(dir_ / "plate.exo", h);
  expect_bad_input(on_file_mesh(kGood), {"plate.exo", "node 2", "not a number"});
  // --check says the same.
  const Result r = run(on_file_mesh(kGood), "--check");
  EXPECT_EQ(r.status, 2) << r.out;
}

TEST_F(App, ExpressionsTooDeepOrTooLongAreBadInput) {
  const std::string deep = std::string(300, '(') + "x" + std::string(300, ')');
  expect_bad_input(replace(kGood, "0.01*x", deep), {"initial_conditions.velocity.y", "nested more than 200 deep"});
  const std::string deeper = std::string(20000, '(') + "x" + std::string(20000, ')');
  expect_bad_input(replace(kGood, "0.01*x", deeper), {"initial_conditions.velocity.y", "at most 4096"});
  std::string sum = "x";
  while (sum.size() < 1000000)
    sum += "+x";
  expect_bad_input(replace(kGood, "0.01*x", sum), {"initial_conditions.velocity.y", "at most 4096"});
}

TEST_F(App, NonFiniteInitialValuesAreBadInput) {
  // 1/x at the clamped end, log of a negative number, an overflow: named with the node where.
  for (const char *e : {"1/x", "log(-1 - x)", "exp(1000 + x)"})
    expect_bad_input(replace(kGood, "0.01*x", e), {"initial_conditions.velocity.y", "evaluates to", "at node"});
  // A tiny finite value is fine.
  EXPECT_EQ(run(replace(kGood, "0.01*x", "1e-308*x")).status, 0);
}

TEST_F(App, StepCountsAndMeshesTooLargeAreRefusedBeforeAnythingIsAllocated) {
  expect_bad_input(replace(kGood, "end_time: 0.5", "end_time: 1.0e13, dt: 1.0e-6"),
                   {"steps", "more than a run can count"});
  expect_bad_input(replace(kGood, "end_time: 0.5", "end_time: 0.5, dt: 1.0e-30"), {"steps"});
  expect_bad_input(replace(kGood, "nx: 10, ny: 2", "nx: 100000, ny: 100000"), {"mesh", "32-bit"});
  // More elements than this machine's memory holds, where the 32-bit indices allow that many.
  const double memory = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  const long side = long(std::sqrt(memory / (2 * (12.0 * 6 + 200))) * 1.2) + 1;
  if (2.0 * side * side * 6 < 2147483647.0)
    expect_bad_input(replace(kGood, "nx: 10, ny: 2", "nx: " + std::to_string(side) + ", ny: " + std::to_string(side)),
                     {"mesh", "GB of host memory"});
  // A run of more than 1e9 steps is allowed, with a warning (--check says so too).
  const Result r = run(replace(kGood, "end_time: 0.5", "end_time: 1.0e9"), "--check");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("steps"), std::string::npos) << r.err;
}

/// Runs the program on `yaml` as App::run does and returns how long it took, in seconds.
template <class Run> double seconds_of(Run &&run) {
  const auto t0 = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST_F(App, HostileInputsAreRefusedAtOnce) {
  // Ten anchors of nine aliases each, 9^10 values: refused before any walk over them (it ran for
  // minutes, deaf to SIGTERM). And a mesh whose output the classic Exodus format, named, cannot
  // hold, whatever this machine's memory: refused before the mesh is made (it was found only when
  // the run, minutes later, wrote its first frame). 20 s bounds a hang, not a speed: each takes
  // about what a bad key does.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int k = 0; k < 9; ++k)
      bomb += std::string(k ? ", " : "") + "*" + char(c - 1);
    bomb += "]\n";
  }
  double t = seconds_of([&] { expect_bad_input(kGood + bomb, {"input.yaml:1:1", "expands to more than"}); });
  EXPECT_LT(t, 20.0);
  t = seconds_of([&] {
    expect_bad_input(replace(replace(kGood, "nx: 10, ny: 2", "nx: 13000, ny: 13000"), "every_steps: 10",
                             "every_steps: 10, format: classic"),
                     {"mesh", "classic cannot hold this mesh", "nodal field", "netcdf4 can"});
  });
  EXPECT_LT(t, 20.0);
}

TEST_F(App, DegenerateMeshesAreBadInput) {
  // Cells whose geometry is lost to rounding, and a shell folded back on itself: exit 2 naming
  // them (these passed --check and then failed as unstable).
  const std::string shell = R"(physics: explicit_shell
mesh: MESH
material: {density: 1.0, youngs_modulus: 1000.0, poissons_ratio: 0.3, thickness: 0.01}
time: {end_time: 0.01}
output: {file: s.e}
)";
  expect_bad_input(replace(shell, "MESH", "{generator: cylinder, n_theta: 1, n_z: 4, radius: 1.0, length: 2.0}"),
                   {"element 1 is degenerate"});
  expect_bad_input(replace(shell, "MESH", "{generator: cylinder, n_theta: 2, n_z: 4, radius: 1.0, length: 2.0}"),
                   {"folds back on itself at node"});
  expect_bad_input(replace(shell, "MESH", "{generator: hemisphere, n_theta: 8, n_phi: 4, radius: 1.0, hole: 1.0e-9}"),
                   {"is degenerate"});
  expect_bad_input(replace(replace(kGood, "{generator: rectangle, element: tri6, nx: 10, ny: 2, lx: 1.0, ly: 0.1}",
                                   "{generator: annulus, element: tri6, n_theta: 8, n_r: 4, inner_radius: 1.0, "
                                   "outer_radius: 2.0, angle: 1.0e-9}"),
                           "node_set: left", "node_set: start"),
                   {"element 1 is inverted or degenerate"});
}

TEST_F(App, SignalsDuringSetUpEndItAtOnceWritingNothing) {
  // A set-up of several seconds even on a GPU machine's 64 cores (eight million T6 elements:
  // generating, colouring, the stable step; two million took under one there), signalled one
  // second in: the process ends then with 128 + the signal and one line, and the output folder it
  // would have made does not exist.
  { std::ofstream(dir_ / "input.yaml") << replace(kGood, "nx: 10, ny: 2", "nx: 2000, ny: 2000"); }
  for (const int sig : {SIGTERM, SIGINT}) {
    const fs::path out = dir_ / ("never_" + std::to_string(sig));
    const pid_t pid = start(out);
    ASSERT_GE(pid, 0);
    std::this_thread::sleep_for(std::chrono::seconds(1));
    kill(pid, sig);
    int raw = 0;
    const double t = seconds_of([&] { waitpid(pid, &raw, 0); });
    ASSERT_TRUE(WIFEXITED(raw));
    EXPECT_EQ(WEXITSTATUS(raw), 128 + sig);
    const std::string err = slurp(dir_ / "stderr");
    EXPECT_NE(err.find(sig == SIGTERM ? "stopped by SIGTERM during set-up; nothing was written"
                                      : "stopped by SIGINT during set-up; nothing was written"),
              std::string::npos)
        << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_LT(t, 5.0) << "the set-up went on after the signal";
  }
}

TEST_F(App, RepeatedAndComplexKeysAreBadInput) {
  expect_bad_input("physics: elastodynamics\n" + kGood, {"input.yaml:2:1", "'physics' is given twice"});
  expect_bad_input(replace(kGood, "nx: 10,", "nx: 10, nx: 12,"), {"mesh", "'nx' is given twice"});
  expect_bad_input(kGood + "? [a, b]\n: 1\n", {"input.yaml:11", "a key must be a plain name"});
}

TEST_F(App, ThreadCountsAreCheckedBeforeKokkosSeesThem) {
  for (const char *n : {"abc", "0", "-1", "1000000"}) {
    Result r = run(kGood, std::string("--kokkos-num-threads=") + n);
    EXPECT_EQ(r.status, 1) << n << ": " << r.err;
    EXPECT_NE(r.err.find("--kokkos-num-threads"), std::string::npos) << r.err;
    r = run(kGood, std::string("--version --kokkos-num-threads=") + n);
    EXPECT_EQ(r.status, 1) << n;
  }
  EXPECT_EQ(run(kGood, "--kokkos-num-threads=1").status, 0);
}

TEST_F(App, SigtermStopsAfterAStepWithTheOutputWritten) {
  // A run of thousands of steps, stopped a moment after it starts: exit 143, one line saying so,
  // and the Exodus file readable with its last frame at the time the run reached.
  { std::ofstream(dir_ / "input.yaml") << replace(kGood, "end_time: 0.5", "end_time: 5000.0"); }
  const pid_t pid = start(dir_ / "out");
  ASSERT_GE(pid, 0);
  const int raw = terminate_when_stepping(pid);
  ASSERT_TRUE(WIFEXITED(raw));
  EXPECT_EQ(WEXITSTATUS(raw), 143);
  const std::string err = slurp(dir_ / "stderr");
  EXPECT_NE(err.find("stopped by SIGTERM after step"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  const fegpu::ExodusReader reader((dir_ / "out" / "good.e").string());
  const auto times = reader.times();
  ASSERT_GE(times.size(), 2u);
  EXPECT_LT(times.back(), 5000.0);
  EXPECT_GT(times.back(), 0.0);
  const auto uy = reader.nodal(static_cast<int>(times.size()), "displacement_y");
  EXPECT_TRUE(std::all_of(uy.begin(), uy.end(), [](double v) { return std::isfinite(v); }));
}

TEST_F(App, FieldsDoNotDependOnTheThreadCount) {
  // The deterministic settings (colouring, the deterministic counter) give the same cracks and
  // fields, bit for bit, on one thread as on two; only the reduced globals (energies, crack
  // length) may differ in their last bits. The expanding ring cracks hundreds of facets.
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one hardware thread";
  const std::string ring = (fs::path(FEGPU_SOURCE_DIR) / "config" / "expanding_ring.yaml").string();
  for (const char *n : {"1", "2"}) {
    const std::string cmd = std::string(FEGPU_APP) + " " + ring + " --quiet --output-dir " +
                            (dir_ / ("t" + std::string(n))).string() + " --kokkos-num-threads=" + n;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  int files = 0;
  for (const auto &e : fs::directory_iterator(dir_ / "t1")) {
    const fegpu::ExodusReader a(e.path().string()), b((dir_ / "t2" / e.path().filename()).string());
    const int last = static_cast<int>(a.times().size());
    ASSERT_EQ(a.times(), b.times());
    for (const char *v : {"displacement_x", "displacement_y", "velocity_x", "velocity_y"})
      EXPECT_EQ(a.nodal(last, v), b.nodal(last, v)) << e.path().filename() << " " << v;
    EXPECT_EQ(a.element(last, "damage"), b.element(last, "damage"));
    ++files;
  }
  EXPECT_GT(files, 3);
}

TEST_F(App, AFailedWriteEndsTheRunWithTheFileAndTheReason) {
  // The file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) makes a write fail with EFBIG partway
  // through the series, as a full disk fails with ENOSPC: exit 3, the file, the system's reason,
  // and what the file holds.
  { std::ofstream(dir_ / "input.yaml") << replace(kGood, "every_steps: 10", "every_steps: 1"); }
  const pid_t pid = start(dir_ / "out", {}, [] {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{64 * 1024, 64 * 1024};
    setrlimit(RLIMIT_FSIZE, &limit);
  });
  ASSERT_GE(pid, 0);
  int raw = 0;
  waitpid(pid, &raw, 0);
  ASSERT_TRUE(WIFEXITED(raw));
  EXPECT_EQ(WEXITSTATUS(raw), 3);
  const std::string err = slurp(dir_ / "stderr");
  for (const char *f : {"run failed", "good.e", "File too large", "holds what was written before the failure"})
    EXPECT_NE(err.find(f), std::string::npos) << "missing '" << f << "' in: " << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST_F(App, CheckRefusesWhatTheRunWouldRefuse) {
  // Output paths: a folder that is a file, an output file that is a folder (--check and the run
  // alike, exit 2, nothing written).
  { std::ofstream(dir_ / "afile") << "x"; }
  Result r = run(kGood, "--check --output-dir " + (dir_ / "afile").string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("is not a folder"), std::string::npos) << r.err;
  fs::create_directories(dir_ / "out" / "good.e");
  for (const char *mode : {"--check", ""}) {
    r = run(kGood, mode);
    EXPECT_EQ(r.status, 2) << mode << r.err;
    EXPECT_NE(r.err.find("output.file: '"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("is a folder"), std::string::npos) << r.err;
  }
  fs::remove_all(dir_ / "out" / "good.e");
  // A folder inside the output folder that does not exist yet is made.
  r = run(replace(kGood, "file: good.e", "file: sub/good.e"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "out" / "sub" / "good.e"));
  // A mesh with an inverted element: the file and the element are named, by --check too.
  fegpu::HostMesh h = fegpu::generate_rectangle(fegpu::ElementType::Tri6, 4, 2, 1.0, 0.1);
  std::swap(h.conn[6 * 4 + 1], h.conn[6 * 4 + 2]); // element 5 turned clockwise
  std::swap(h.conn[6 * 4 + 3], h.conn[6 * 4 + 5]);
  write_mesh(dir_ / "plate.exo", h);
  fs::remove_all(dir_ / "out");
  fs::create_directories(dir_ / "out");
  r = run(on_file_mesh(kGood), "--check");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("mesh file '"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("plate.exo', element 5 is inverted"), std::string::npos) << r.err;
}
