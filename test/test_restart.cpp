// Restart (issue 23): a run stopped and continued from its checkpoint ends with the same Exodus
// series and the same histories, bit for bit, as the run that went through, for every module with
// its deterministic settings; a checkpoint that is damaged or belongs to another input, module or
// time step is refused with exit 2; SIGTERM leaves a checkpoint that a restart completes.
#include "app_fixture.hpp"
#include "fegpu/core/error.hpp"
#include "fegpu/io/checkpoint.hpp"
#include "fegpu/io/exodus.hpp"

#include <csignal>
#include <map>
#include <random>
#include <thread>

namespace {

// One input of each module, each with histories and checkpoints (the shells' SCHEME a solver's).
const std::string kPulled = R"(physics: elastodynamics
mesh: {generator: rectangle, element: tri6, nx: 10, ny: 2, lx: 1.0, ly: 0.1}
materials:
  m: {density: 1.0, youngs_modulus: 1.0, poissons_ratio: 0.25}
boundary_conditions:
  - {type: displacement, node_set: left, components: [x, y], value: 0.0}
  - {type: velocity, node_set: right, components: x, value: 0.01, function: {t: [0, 1, 3], f: [0, 1, 1]}}
time: {end_time: 3.0}
output:
  file: pulled.e
  every_steps: 7
  histories: {every_steps: 3, reactions: [{name: pull, side_set: right}], probes: [{name: end, field: velocity, point: [1, 0.05]}]}
  checkpoint: {every_steps: 50, keep: 5}
)";
// The same in 3D: a TET10 bar clamped, pulled and twisted, with z in its histories.
const std::string kPulled3D = R"(physics: elastodynamics
mesh: {generator: box, element: tet10, nx: 6, ny: 1, nz: 1, lx: 1.0, ly: 0.1, lz: 0.1}
materials:
  m: {density: 1.0, youngs_modulus: 1.0, poissons_ratio: 0.25}
boundary_conditions:
  - {type: displacement, node_set: left, components: all, value: 0.0}
  - {type: velocity, node_set: right, components: [x, z], value: 0.01, function: {t: [0, 1, 3], f: [0, 1, 1]}}
initial_conditions:
  velocity: {y: "0.001*x*z"}
time: {end_time: 3.0}
output:
  file: bar.e
  every_steps: 7
  histories: {every_steps: 3, reactions: [{name: pull, side_set: right}], probes: [{name: end, field: velocity, point: [1, 0.05, 0.05]}]}
  checkpoint: {every_steps: 50, keep: 5}
)";
// The notched strip cracks before and after the checkpoint at step 147.
const std::string kCrack = replace(replace(kNotchedStrip, "tri3", "tri6"), "every_time: 1.0}",
                                   "every_time: 0.5, histories: {every_steps: 5, crack_tip: {direction: [1, 0]}, "
                                   "reactions: [{name: top, node_set: top}]}, checkpoint: {every_time: 1.0, keep: 5}}");
// A TET4 cube flying apart: faces crack at steps 3 to 7 (10, 31, 72, 97, 104 cohesive elements).
const std::string kCube = R"(physics: cohesive_fracture
mesh: {generator: box, element: tet4, nx: 4, ny: 4, nz: 4, lx: 1.0, ly: 1.0, lz: 1.0, x0: -0.5, y0: -0.5, z0: -0.5}
materials:
  m: {density: 1.0, youngs_modulus: 1.0, poissons_ratio: 0.25}
initial_conditions:
  velocity: {x: "0.02*x", y: "0.02*y", z: "0.02*z"}
fracture:
  law: {phi_n: 1.0e-5, phi_t: 1.0e-5, sigma_max: 0.01, tau_max: 0.01}
  strength: {distribution: weibull, modulus: 8, seed: 3}
  counter: deterministic
time: {end_time: 3.0, safety_factor: 0.5}
output:
  file: cube.e
  every_steps: 3
  histories: {every_steps: 1}
  checkpoint: {every_steps: 5, keep: 5}
)";
const std::string kPlate = R"(physics: explicit_shell
mesh: {generator: disc, element: shell4, n_theta: 16, n_r: 4, radius: 10.0}
material: {density: 7.85e-9, youngs_modulus: 206000.0, poissons_ratio: 0.3, thickness: 0.5}
boundary_conditions:
  - {type: fixed, node_set: outer, dofs: [uz]}
loads:
  - {type: pressure, value: 1.0e-4}
solver: {SCHEME, damping: 2000.0}
time: {end_time: 2.0e-4, safety_factor: 0.9}
output:
  file: plate.e
  every_time: 2.0e-5
  histories: {every_steps: 7, probes: [{name: c, field: rotation, point: [5, 0, 0]}]}
  checkpoint: {every_steps: 100, keep: 5}
)";
const std::string kWellbore = R"(physics: elastoplastic_wellbore
mesh: {generator: annulus, element: quad9, n_theta: 4, n_r: 12, inner_radius: 0.1, outer_radius: 4.0,
       grading: 1.36, angle: 90}
material: {youngs_modulus: 2000.0, poissons_ratio: 0.2, cohesion: 5.0, friction_angle: 20.0}
boundary_conditions:
  - {type: normal_stress, side_set: inner, value: -40.0}
  - {type: normal_stress, side_set: outer, value: -49.9937}
  - {type: fixed, node_set: start, components: [y]}
  - {type: fixed, node_set: end, components: [x]}
load_steps: 5
solver: {method: newton, scatter: coloring}
output:
  file: wb.e
  profile: profile.csv
  histories: {reactions: [{name: start, node_set: start}], probes: [{name: wall, field: displacement, point: [0.1, 0.0]}]}
  checkpoint: {every_steps: 2}
)";

/// Runs `input` (already written to dir_/input.yaml by run()) with extra arguments into `out`.
int run_into(const fs::path &input, const fs::path &out, const std::string &args) {
  const std::string cmd = std::string(FEGPU_APP) + " " + input.string() + " --quiet --output-dir " + out.string() +
                          " " + args + " 2> " + (out.parent_path() / "stderr").string();
  const int raw = std::system(cmd.c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

/// Every frame of every file of the series `base` in a and b: the same times, nodal, element and
/// global values, bit for bit; returns the frames compared.
int expect_same_series(const fs::path &a, const fs::path &b, const std::string &base) {
  int frames = 0, i = 1;
  for (; fs::exists(a / fegpu::ExodusWriter::series_name(base, i)); ++i) {
    const std::string name = fegpu::ExodusWriter::series_name(base, i);
    EXPECT_TRUE(fs::exists(b / name)) << name;
    if (!fs::exists(b / name)) break;
    const fegpu::ExodusReader x((a / name).string()), y((b / name).string());
    EXPECT_EQ(x.times(), y.times()) << name;
    EXPECT_EQ(x.coordinates(), y.coordinates()) << name;
    for (int k = 1; k <= static_cast<int>(x.times().size()); ++k, ++frames) {
      for (const auto &v : x.variable_names('n'))
        EXPECT_EQ(x.nodal(k, v), y.nodal(k, v)) << name << " frame " << k << " " << v;
      for (const auto &v : x.variable_names('e'))
        EXPECT_EQ(x.element(k, v), y.element(k, v)) << name << " frame " << k << " " << v;
      EXPECT_EQ(x.global(k), y.global(k)) << name << " frame " << k;
    }
  }
  EXPECT_FALSE(fs::exists(b / fegpu::ExodusWriter::series_name(base, i))) << "a file past the series' end";
  return frames;
}

std::string file_text(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

class Restart : public App {
protected:
  /// The input through; stopped by --max-steps `stop_steps`, which writes a checkpoint there; then
  /// continued, in copies of the stopped run's output, from that checkpoint and from the older
  /// `older`: the series `base` and the histories `histories` must be the run's that went through.
  /// And continued from `older` with --max-steps `stop_steps` in a copy of the whole run's output,
  /// whose frames and rows go past it: the result must be the stopped run's, none of them left.
  void expect_continues(const std::string &yaml, long stop_steps, const std::string &older, const std::string &base,
                        const std::string &histories) {
    { std::ofstream(dir_ / "input.yaml") << yaml; }
    const fs::path whole = dir_ / "whole", parts = dir_ / "parts";
    ASSERT_EQ(run_into(dir_ / "input.yaml", whole, ""), 0) << slurp(dir_ / "stderr");
    const std::string stop = "--max-steps " + std::to_string(stop_steps);
    ASSERT_EQ(run_into(dir_ / "input.yaml", parts, stop), 0) << slurp(dir_ / "stderr");
    std::string at_stop = older;
    at_stop.replace(at_stop.rfind('_') + 1, 9, std::to_string(1000000000L + stop_steps).substr(1));
    ASSERT_TRUE(fs::exists(parts / at_stop)) << at_stop << ": the --max-steps stop writes a checkpoint";
    ASSERT_TRUE(fs::exists(parts / older)) << older;
    const std::string h = file_text(whole / histories);
    EXPECT_GT(h.size(), 100u);
    for (const std::string &from : {at_stop, older}) {
      SCOPED_TRACE("continued from " + from);
      const fs::path continued = dir_ / ("from_" + from);
      fs::copy(parts, continued);
      ASSERT_EQ(run_into(dir_ / "input.yaml", continued, "--restart " + (continued / from).string()), 0)
          << slurp(dir_ / "stderr");
      EXPECT_GT(expect_same_series(whole, continued, base), 3);
      EXPECT_EQ(file_text(continued / histories), h) << "the histories differ";
    }
    const fs::path early = dir_ / "early";
    fs::copy(whole, early);
    ASSERT_EQ(run_into(dir_ / "input.yaml", early, "--restart " + (parts / older).string() + " " + stop), 0)
        << slurp(dir_ / "stderr");
    EXPECT_GT(expect_same_series(parts, early, base), 2);
    EXPECT_EQ(file_text(early / histories), file_text(parts / histories)) << "rows of the whole run were left";
  }
};

TEST_F(Restart, ElastodynamicsContinuesBitForBit) {
  expect_continues(kPulled, 130, "pulled_checkpoint_000000100.ckpt", "pulled.e", "pulled_histories.csv");
}

TEST_F(Restart, TetrahedraContinueBitForBit) {
  expect_continues(kPulled3D, 130, "bar_checkpoint_000000100.ckpt", "bar.e", "bar_histories.csv");
}

TEST_F(Restart, FractureContinuesBitForBitThroughItsInsertions) {
  // The notched strip cracks before and after the checkpoint at step 147: the cracked topology,
  // the node numbering and the cohesive points all come back.
  expect_continues(kCrack, 250, "crack_checkpoint_000000147.ckpt", "crack.e", "crack_histories.csv");
}

TEST_F(Restart, TetrahedralFractureContinuesBitForBitThroughItsInsertions) {
  // Continued from step 5 the cube cracks on, from step 8 it flies apart cracked (WEDGE6 cohesive
  // blocks in the series).
  expect_continues(kCube, 8, "cube_checkpoint_000000005.ckpt", "cube.e", "cube_histories.csv");
}

TEST_F(Restart, ShellsContinueBitForBit) {
  for (const char *scheme : {"scheme: standard, scatter: coloring", "scheme: element_local"}) {
    SCOPED_TRACE(scheme);
    expect_continues(replace(kPlate, "SCHEME", scheme), 250, "plate_checkpoint_000000100.ckpt", "plate.e",
                     "plate_histories.csv");
    for (const auto &e : fs::directory_iterator(dir_))
      if (e.is_directory()) fs::remove_all(e.path());
  }
}

TEST_F(Restart, WellboreContinuesBitForBit) {
  // The checkpoint after load step 2 of 5, continued in a copy of the whole run's output whose
  // histories have rows past the checkpoint (as a killed run leaves them): they are cut, and the
  // load steps after it are solved again to the same bits, the profile too.
  const std::string yaml = kWellbore;
  { std::ofstream(dir_ / "input.yaml") << yaml; }
  const fs::path whole = dir_ / "whole", parts = dir_ / "parts";
  ASSERT_EQ(run_into(dir_ / "input.yaml", whole, ""), 0) << slurp(dir_ / "stderr");
  fs::copy(whole, parts);
  { std::ofstream(parts / "wb_histories.csv", std::ios::app) << "1,2,3\n"; }
  fs::remove(parts / "profile.csv");
  ASSERT_EQ(run_into(dir_ / "input.yaml", parts, "--restart " + (parts / "wb_checkpoint_000000002.ckpt").string()), 0)
      << slurp(dir_ / "stderr");
  EXPECT_EQ(expect_same_series(whole, parts, "wb.e"), 5);
  EXPECT_EQ(file_text(parts / "wb_histories.csv"), file_text(whole / "wb_histories.csv"));
  EXPECT_EQ(file_text(parts / "profile.csv"), file_text(whole / "profile.csv"));
}

TEST_F(Restart, BadCheckpointsAreBadInput) {
  const std::string yaml = replace(kGood, "output: {file: good.e, every_steps: 10}",
                                   "output: {file: good.e, every_steps: 10, checkpoint: {every_steps: 20}}");
  ASSERT_EQ(run(yaml).status, 0);
  const fs::path good = dir_ / "out" / "good_checkpoint_000000020.ckpt";
  ASSERT_TRUE(fs::exists(good));
  fs::copy(good, dir_ / "kept.ckpt");
  const auto restart = [&](const std::string &input, const fs::path &checkpoint, const std::string &more = "") {
    return run(input, "--restart " + checkpoint.string() + " " + more);
  };
  const auto expect_refused = [&](const Result &r, const std::string &fragment) {
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  };
  // Not a checkpoint: text, an Exodus file, a folder, nothing.
  { std::ofstream(dir_ / "junk.ckpt") << "this is no checkpoint"; }
  expect_refused(restart(yaml, dir_ / "junk.ckpt"), "damaged or not a checkpoint");
  expect_refused(restart(yaml, dir_ / "out" / "good.e"), "damaged or not a checkpoint");
  expect_refused(restart(yaml, dir_ / "out"), "cannot read the checkpoint");
  expect_refused(restart(yaml, dir_ / "missing.ckpt"), "No such file");
  // Another input: a material changed; the time step changed; --check refuses it too.
  expect_refused(restart(replace(yaml, "poissons_ratio: 0.25", "poissons_ratio: 0.3"), dir_ / "kept.ckpt"),
                 "differs from this one");
  expect_refused(restart(replace(yaml, "end_time: 0.5", "end_time: 0.6"), dir_ / "kept.ckpt"), "steps by");
  expect_refused(restart(replace(yaml, "poissons_ratio: 0.25", "poissons_ratio: 0.3"), dir_ / "kept.ckpt", "--check"),
                 "differs from this one");
  // Another module's.
  const std::string shell = R"(physics: explicit_shell
mesh: {generator: rectangle, element: shell4, nx: 4, ny: 1, lx: 1.0, ly: 0.25}
material: {density: 1.0, youngs_modulus: 1000.0, poissons_ratio: 0.3, thickness: 0.01}
boundary_conditions:
  - {type: fixed, node_set: left, dofs: all}
time: {end_time: 0.01}
output: {file: s.e}
)";
  expect_refused(restart(shell, dir_ / "kept.ckpt"), "written by physics: elastodynamics");
  // A run that would end at or before the checkpoint's step (20) has nothing to continue.
  expect_refused(restart(yaml, dir_ / "kept.ckpt", "--max-steps 20"), "nothing would be continued");
  // A refused restart makes no output folder.
  const fs::path fresh = dir_ / "fresh";
  const Result r = run(yaml, "--restart " + (dir_ / "junk.ckpt").string() + " --output-dir " + fresh.string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_FALSE(fs::exists(fresh));
  // The good one continues.
  EXPECT_EQ(restart(yaml, dir_ / "kept.ckpt").status, 0);
}

TEST_F(Restart, SigtermLeavesACheckpointThatARestartCompletes) {
  const std::string yaml =
      replace(replace(kGood, "end_time: 0.5", "end_time: 3000.0"), "output: {file: good.e, every_steps: 10}",
              "output: {file: good.e, every_time: 100.0, checkpoint: {every_time: 1000.0}}");
  { std::ofstream(dir_ / "input.yaml") << yaml; }
  const pid_t pid = start(dir_ / "out");
  ASSERT_GE(pid, 0);
  const int raw = terminate_when_stepping(pid);
  ASSERT_TRUE(WIFEXITED(raw));
  ASSERT_EQ(WEXITSTATUS(raw), 143);
  const std::string err = slurp(dir_ / "stderr");
  const auto at = err.find("--restart ");
  ASSERT_NE(at, std::string::npos) << err;
  const std::string checkpoint = err.substr(at + 10, err.find(" continues it") - at - 10);
  ASSERT_TRUE(fs::exists(checkpoint)) << checkpoint;
  const Result r = run(yaml, "--restart " + checkpoint);
  EXPECT_EQ(r.status, 0) << r.err;
  const fegpu::ExodusReader e((dir_ / "out" / "good.e").string());
  EXPECT_NEAR(e.times().back(), 3000.0, 1e-6); // the run reached its end
}

namespace {
/// Every file under `dir` with its bytes.
std::map<std::string, std::string> files_of(const fs::path &dir) {
  std::map<std::string, std::string> out;
  for (const auto &e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = file_text(e.path());
  return out;
}
} // namespace

TEST_F(Restart, DamagedCheckpointsOfEveryModuleAreRefusedAndChangeNothing) {
  // A checkpoint of each module, cut short at every 64th of its length and altered in 1 to 4 bytes
  // (300 seeded cases): the reader refuses every one. Then the program as a user runs it, on 8 of
  // them (at its start, in its header, in its middle, a word short, 4 alterations): exit 2 in one
  // line naming the file, and every file of the output folder holds what it held.
  const std::vector<std::string> inputs = {kPulled, kCrack,
                                           replace(kPlate, "SCHEME", "scheme: standard, scatter: coloring"), kWellbore};
  std::mt19937_64 rng(33);
  for (const std::string &yaml : inputs) {
    SCOPED_TRACE(yaml.substr(0, yaml.find('\n')));
    { std::ofstream(dir_ / "input.yaml") << yaml; }
    const fs::path out = dir_ / "run";
    fs::remove_all(out);
    ASSERT_EQ(run_into(dir_ / "input.yaml", out, ""), 0) << slurp(dir_ / "stderr");
    std::string checkpoint; // (the run keeps its newest few)
    for (const auto &e : fs::directory_iterator(out))
      if (e.path().extension() == ".ckpt") checkpoint = e.path().filename().string();
    ASSERT_FALSE(checkpoint.empty());
    const std::string good = file_text(out / checkpoint);
    ASSERT_GT(good.size(), 1000u);
    // The reader itself, over every 64th cut and 300 alterations of this module's checkpoint.
    const fs::path probe = dir_ / "probe.ckpt";
    int refused = 0, cases = 0;
    const auto read = [&](const std::string &bytes) {
      { std::ofstream(probe, std::ios::binary) << bytes; }
      ++cases;
      try {
        fegpu::CheckpointReader r(probe.string());
      } catch (const fegpu::InputError &) {
        ++refused;
      }
    };
    for (std::size_t n = 0; n < good.size(); n += std::max<std::size_t>(1, good.size() / 64))
      read(good.substr(0, n));
    for (int k = 0; k < 300; ++k) {
      std::string d = good;
      for (int f = 1 + int(rng() % 4); f > 0; --f)
        d[rng() % d.size()] ^= char(1 + rng() % 255);
      read(d);
    }
    EXPECT_EQ(refused, cases) << "damaged checkpoints read as good";
    const auto before = files_of(out);
    std::vector<std::string> damaged = {"", good.substr(0, 20), good.substr(0, good.size() / 2),
                                        good.substr(0, good.size() - 8)};
    for (int k = 0; k < 4; ++k) {
      std::string d = good;
      for (int f = 1 + int(rng() % 4); f > 0; --f)
        d[rng() % d.size()] ^= char(1 + rng() % 255);
      damaged.push_back(d);
    }
    const fs::path bad = dir_ / "bad.ckpt";
    for (std::size_t k = 0; k < damaged.size(); ++k) {
      { std::ofstream(bad, std::ios::binary) << damaged[k]; }
      EXPECT_EQ(run_into(dir_ / "input.yaml", out, "--restart " + bad.string()), 2) << "case " << k;
      const std::string err = slurp(dir_ / "stderr");
      EXPECT_NE(err.find(bad.string()), std::string::npos) << "case " << k << ": " << err;
      EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
      EXPECT_TRUE(files_of(out) == before) << "case " << k << " changed the output folder";
    }
  }
}

TEST_F(Restart, StoppedAtAnyTimeThenContinuedIsTheRunThatWentThrough) {
  // The cracking strip, signalled at seeded random moments over its whole life, set-up included
  // (SIGTERM and SIGINT in turn), then continued: from the checkpoint the stop names, or, where it
  // stopped in set-up and wrote nothing, from the start. Its series and histories are then those of
  // the run that went through, bit for bit.
  const std::string yaml =
      replace(replace(kCrack, "checkpoint: {every_time: 1.0, keep: 5}", "checkpoint: {every_time: 1.0}"),
              "nx: 20, ny: 4", "nx: 60, ny: 12");
  { std::ofstream(dir_ / "input.yaml") << yaml; }
  const fs::path whole = dir_ / "whole";
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(run_into(dir_ / "input.yaml", whole, ""), 0) << slurp(dir_ / "stderr");
  const double life = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string histories = file_text(whole / "crack_histories.csv");
  int in_setup = 0, in_loop = 0;
  // One stop and its continuation: the signal `sig` after `at` seconds, or, with at < 0, once the
  // output folder exists (the run is then past its set-up, whatever the machine's speed or load).
  const auto stop_and_continue = [&](int trial, int sig, double at) {
    SCOPED_TRACE("trial " + std::to_string(trial) + ": signal " + std::to_string(sig) + " after " +
                 (at < 0 ? std::string("its output began") : std::to_string(at) + " s of " + std::to_string(life)));
    const fs::path out = dir_ / ("stopped_" + std::to_string(trial));
    const pid_t pid = start(out, {"--quiet"});
    ASSERT_GE(pid, 0);
    int raw = 0;
    bool ended = false;
    if (at >= 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(at));
    } else {
      while (!fs::exists(out) && !(ended = waitpid(pid, &raw, WNOHANG) == pid))
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ASSERT_FALSE(ended) << "the run ended before its output folder was seen: " << slurp(dir_ / "stderr");
    }
    kill(pid, sig);
    waitpid(pid, &raw, 0);
    const std::string err = slurp(dir_ / "stderr");
    // Killed by the signal itself: it came while the program was still being loaded, before main.
    const bool loading = WIFSIGNALED(raw) && WTERMSIG(raw) == sig;
    ASSERT_TRUE(WIFEXITED(raw) || loading) << err;
    const int status = loading ? 128 + sig : WEXITSTATUS(raw);
    if (status == 0) return; // it ended before the signal came: nothing to continue
    ASSERT_EQ(status, 128 + sig) << err;
    if (loading || err.find("during set-up") != std::string::npos) {
      ++in_setup;
      EXPECT_FALSE(fs::exists(out)) << "a stop in set-up wrote " << out;
      ASSERT_EQ(run_into(dir_ / "input.yaml", out, ""), 0) << slurp(dir_ / "stderr");
    } else {
      ++in_loop;
      const auto named = err.find("--restart ");
      if (named != std::string::npos) { // (a stop at the very last step has nothing to continue)
        const std::string checkpoint = err.substr(named + 10, err.find(" continues it") - named - 10);
        ASSERT_EQ(run_into(dir_ / "input.yaml", out, "--restart " + checkpoint), 0) << slurp(dir_ / "stderr");
      }
    }
    EXPECT_GT(expect_same_series(whole, out, "crack.e"), 3);
    EXPECT_EQ(file_text(out / "crack_histories.csv"), histories) << "the histories differ";
  };
  std::mt19937_64 rng(1126);
  for (int trial = 0; trial < 6; ++trial) {
    stop_and_continue(trial, trial % 2 ? SIGINT : SIGTERM,
                      life * std::uniform_real_distribution<double>(0.02, 0.95)(rng));
    if (HasFatalFailure()) return;
  }
  // The seeded moments fall in either phase, or after the end, as the machine's speed and load at
  // the moment move the phases' share against the run timed above; this stop is in the time loop
  // on any machine.
  stop_and_continue(6, SIGTERM, -1);
  std::printf("stops in set-up: %d, in the time loop: %d\n", in_setup, in_loop);
  EXPECT_GT(in_loop, 0);
}
