// The application end to end: every class of bad input gives exit status 2, one clear message
// naming the file, line, column and key, and writes nothing (an earlier output survives); a run
// that blows up gives 3; a good run writes an Exodus file the project's reader accepts.
#include "app_fixture.hpp"
#include "fegpu/io/exodus.hpp"
#include "fegpu/mesh/generators.hpp"

#include <chrono>

TEST_F(App, GoodRunWritesReadableExodus) {
  const Result r = run(kGood);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("time per phase"), std::string::npos);
  EXPECT_TRUE(r.err.empty()) << r.err; // no progress line when stderr is not a terminal
  const fegpu::ExodusReader reader((dir_ / "out" / "good.e").string());
  const auto times = reader.times();
  ASSERT_GE(times.size(), 2u);
  EXPECT_DOUBLE_EQ(times.back(), 0.5);
  const auto g = reader.global(static_cast<int>(times.size()));
  EXPECT_LT(g[4], 1e-3); // energy balance error
  EXPECT_GT(g[1], 0.0);  // kinetic energy
  const auto uy = reader.nodal(static_cast<int>(times.size()), "displacement_y");
  EXPECT_TRUE(std::all_of(uy.begin(), uy.end(), [](double v) { return std::isfinite(v); }));
}

TEST_F(App, ProfileSplitsTheTimeLoopIntoPhases) {
  // Without --profile the table has the coarse phases only (no fences inside a step); with it, the
  // step's phases too, and the phases still add up to 100%.
  const Result plain = run(kGood);
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_NE(plain.out.find("time_loop"), std::string::npos);
  EXPECT_EQ(plain.out.find("nodal_update"), std::string::npos) << plain.out;
  const Result r = run(kGood, "--profile");
  ASSERT_EQ(r.status, 0) << r.err;
  double percent = 0;
  for (const char *phase : {"setup", "start", "nodal_update", "forces", "energies", "output_fields", "output"}) {
    const auto at = r.out.find("\n  " + std::string(phase) + " ");
    ASSERT_NE(at, std::string::npos) << "no phase " << phase << " in: " << r.out;
  }
  std::istringstream table(r.out.substr(r.out.find("time per phase:")));
  std::string line;
  std::getline(table, line);
  while (std::getline(table, line)) {
    double seconds = 0, share = 0;
    char name[64];
    if (std::sscanf(line.c_str(), " %63s %lf s %lf %%", name, &seconds, &share) == 3) percent += share;
  }
  EXPECT_NEAR(percent, 100.0, 0.5);
}

TEST_F(App, QuietAndCheckWriteNothing) {
  Result r = run(kGood, "--check");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("input is valid"), std::string::npos);
  EXPECT_TRUE(outputs().empty());
  r = run(kGood, "--quiet");
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(r.out.empty());
}

TEST_F(App, VersionAndHelp) {
  Result r = run(kGood, "--version");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("fegpu-kk"), std::string::npos);
  EXPECT_NE(r.out.find("Kokkos"), std::string::npos);
  EXPECT_NE(r.out.find("KokkosKernels"), std::string::npos);
  EXPECT_NE(r.out.find("device"), std::string::npos);
  r = run(kGood, "--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("elastodynamics"), std::string::npos);
  EXPECT_EQ(run(kGood, "--frobnicate").status, 1);
}

TEST_F(App, UnknownKeySuggestsTheClosest) {
  expect_bad_input(replace(kGood, "time: {end_time: 0.5}", "time: {end_time: 0.5, safty_factor: 0.5}"),
                   {"input.yaml:9:23", "time", "unknown key 'safty_factor'", "did you mean 'safety_factor'"});
}

TEST_F(App, UnknownTopLevelSection) {
  expect_bad_input(kGood + "materails: {}\n",
                   {"input.yaml:11:1", "unknown key 'materails'", "did you mean 'materials'"});
}

TEST_F(App, MissingRequiredKey) {
  expect_bad_input(replace(kGood, "density: 1.0, ", ""),
                   {"input.yaml:4:10", "materials.steel", "missing required key 'density'"});
}

TEST_F(App, WrongType) {
  expect_bad_input(replace(kGood, "nx: 10", "nx: ten"),
                   {"input.yaml:2:49", "mesh.nx", "expected an integer, got 'ten'"});
}

TEST_F(App, NegativeDensity) {
  expect_bad_input(replace(kGood, "density: 1.0", "density: -1.0"),
                   {"input.yaml:4:20", "materials.steel.density", "must be > 0"});
}

TEST_F(App, PoissonRatioAtOneHalf) {
  expect_bad_input(replace(kGood, "poissons_ratio: 0.25", "poissons_ratio: 0.5"),
                   {"materials.steel.poissons_ratio", "must be in (-1, 0.5)"});
}

TEST_F(App, NonPositiveTimeStep) {
  expect_bad_input(replace(kGood, "end_time: 0.5", "end_time: 0.5, dt: 0"),
                   {"input.yaml:9:27", "time.dt", "must be > 0"});
}

TEST_F(App, UnknownEnumerationValue) {
  expect_bad_input(replace(kGood, "element: tri6", "element: tri7"),
                   {"mesh.element", "unknown value 'tri7'", "did you mean 'tri"});
}

TEST_F(App, UnknownNodeSet) {
  expect_bad_input(replace(kGood, "node_set: left", "node_set: lft"),
                   {"boundary_conditions[0].node_set", "no node set named 'lft'", "left"});
}

TEST_F(App, BadExpression) {
  expect_bad_input(replace(kGood, "0.01*x", "0.01*z"), {"initial_conditions.velocity.y", "unknown name 'z'"});
}

TEST_F(App, UnknownPhysics) {
  expect_bad_input(replace(kGood, "physics: elastodynamics", "physics: elastodynamic"),
                   {"input.yaml:1:10", "unknown physics module", "did you mean 'elastodynamics'"});
}

TEST_F(App, YamlSyntaxError) {
  expect_bad_input(replace(kGood, "lx: 1.0,", "lx: [1.0,"), {"input.yaml:", "YAML syntax error"});
}

TEST_F(App, MissingMeshFile) {
  expect_bad_input(
      replace(kGood, "{generator: rectangle, element: tri6, nx: 10, ny: 2, lx: 1.0, ly: 0.1}", "{file: missing.exo}"),
      {"mesh.file", "cannot open Exodus mesh file", "missing.exo"});
}

TEST_F(App, MeshFileThatIsNotExodus) {
  { std::ofstream(dir_ / "junk.exo") << "not a mesh\n"; }
  expect_bad_input(
      replace(kGood, "{generator: rectangle, element: tri6, nx: 10, ny: 2, lx: 1.0, ly: 0.1}", "{file: junk.exo}"),
      {"mesh.file", "junk.exo"});
}

namespace {
/// Whether `out` (a run's output, renumbered for locality: order_for_locality) is the mesh `in`
/// (written with ids 1, 2, ...) through its id maps: each element's nodes by id in the same local
/// order, each node at the same coordinates.
void expect_same_mesh_by_ids(const fegpu::HostMesh &out, const fegpu::HostMesh &in) {
  ASSERT_EQ(out.conn.size(), in.conn.size());
  ASSERT_EQ(out.xyz.size(), in.xyz.size());
  const std::size_t npe = fegpu::element_info(in.type).nodes, ne = in.conn.size() / npe;
  ASSERT_EQ(out.elem_gid.size(), ne);
  for (std::size_t e = 0; e < ne; ++e) {
    const std::size_t before = out.elem_gid[e] - 1;
    ASSERT_LT(before, ne);
    for (std::size_t a = 0; a < npe; ++a) {
      const std::size_t n = out.conn[e * npe + a], m = in.conn[before * npe + a];
      EXPECT_EQ(out.node_gid[n], fegpu::GlobalId(m) + 1) << "element " << e + 1 << ", node " << a;
      for (int d = 0; d < 3; ++d)
        EXPECT_EQ(out.xyz[3 * n + d], in.xyz[3 * m + d]);
    }
  }
}
} // namespace

TEST_F(App, RunsOnAnExodusMeshFile) {
  // A mesh written through the Exodus API (as Cubit or a Gmsh converter would) drives a run.
  fegpu::HostMesh h = fegpu::generate_rectangle(fegpu::ElementType::Tri3, 8, 2, 1.0, 0.1);
  h.blocks[0].name = "plate";
  { fegpu::ExodusWriter w((dir_ / "plate.exo").string(), h, {}); }
  std::string yaml =
      replace(kGood, "{generator: rectangle, element: tri6, nx: 10, ny: 2, lx: 1.0, ly: 0.1}", "{file: plate.exo}");
  yaml = replace(yaml, "poissons_ratio: 0.25}", "poissons_ratio: 0.25, blocks: [plate]}");
  const Result r = run(yaml);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("27 nodes, 32 TRI3 elements"), std::string::npos) << r.out; // 9 x 3 lattice
  const fegpu::HostMesh back = fegpu::read_exodus_mesh((dir_ / "out" / "good.e").string());
  expect_same_mesh_by_ids(back, h);
  EXPECT_EQ(back.blocks[0].name, "plate");
}

TEST_F(App, EveryExampleInputIsValid) {
  int checked = 0;
  for (const auto &e : fs::directory_iterator(fs::path(FEGPU_SOURCE_DIR) / "config")) {
    if (e.path().extension() != ".yaml") continue;
    const std::string cmd =
        std::string(FEGPU_APP) + " " + e.path().string() + " --check --quiet 2> " + (dir_ / "stderr").string();
    const int raw = std::system(cmd.c_str());
    EXPECT_EQ(WEXITSTATUS(raw), 0) << e.path() << ": " << slurp(dir_ / "stderr");
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

TEST_F(App, TheGmshPlateWithAHoleMatchesKirsch) {
  // config/plate_with_hole.yaml on its Gmsh mesh, the load ramped slowly to 100 MPa: every element
  // within 0.5 m of the hole has the stress xx of Kirsch's infinite plate at its centroid to
  // 5 MPa (1.7% of the 300 MPa at the hole's top; 2.96 seen), on a plate ten diameters wide.
  const std::string cmd = std::string(FEGPU_APP) + " " + FEGPU_SOURCE_DIR + "/config/plate_with_hole.yaml --quiet " +
                          "--output-dir " + (dir_ / "out").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const fegpu::ExodusReader e((dir_ / "out" / "plate_with_hole.e").string());
  const int last = static_cast<int>(e.times().size());
  const auto xyz = e.coordinates();
  const auto conn = e.connectivity(0);
  const auto sxx = e.element(last, "stress_xx");
  const double a = 0.1, sigma = 100e6;
  double worst = 0, top = 0;
  int near = 0;
  for (std::size_t k = 0; k < conn.size() / 6; ++k) {
    double x = 0, y = 0;
    for (int c = 0; c < 3; ++c)
      x += xyz[3 * conn[6 * k + c]] / 3, y += xyz[3 * conn[6 * k + c] + 1] / 3;
    const double r = std::hypot(x, y), t = std::atan2(y, x), q = a * a / (r * r);
    const double srr = sigma / 2 * (1 - q) + sigma / 2 * (1 - 4 * q + 3 * q * q) * std::cos(2 * t);
    const double stt = sigma / 2 * (1 + q) - sigma / 2 * (1 + 3 * q * q) * std::cos(2 * t);
    const double srt = -sigma / 2 * (1 + 2 * q - 3 * q * q) * std::sin(2 * t);
    const double kirsch =
        srr * std::cos(t) * std::cos(t) + stt * std::sin(t) * std::sin(t) - 2 * srt * std::sin(t) * std::cos(t);
    if (r > 0.5) continue;
    worst = std::max(worst, std::abs(sxx[k] - kirsch)), ++near;
    if (x < 0.01 && r < 0.11) top = std::max(top, sxx[k]);
  }
  std::printf("%d elements within 0.5 m: largest difference from Kirsch %.3f MPa; at the hole's top %.1f MPa\n", near,
              worst / 1e6, top / 1e6);
  EXPECT_GT(near, 500);
  EXPECT_LT(worst, 5e6);
  EXPECT_GT(top, 2.5 * sigma); // the element mean just off the top, of a peak of 3 sigma
}

TEST_F(App, OutputFormats) {
  // netCDF-4 with compression runs and writes a file the reader takes; a compression level without
  // netCDF-4, out of 0..9, or an unknown format is bad input.
  const Result r = run(replace(kGood, "output: {file: good.e, every_steps: 10}",
                               "output: {file: good.e, every_steps: 10, format: netcdf4, compression: 6}"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_GT(fegpu::ExodusReader((dir_ / "out" / "good.e").string()).times().size(), 2u);
  fs::remove_all(dir_ / "out"), fs::create_directories(dir_ / "out");
  expect_bad_input(replace(kGood, "every_steps: 10}", "every_steps: 10, compression: 3}"),
                   {"output.compression", "format: netcdf4"});
  expect_bad_input(replace(kGood, "every_steps: 10}", "every_steps: 10, format: netcdf4, compression: 12}"),
                   {"output.compression", "0 (none) to 9"});
  expect_bad_input(replace(kGood, "every_steps: 10}", "every_steps: 10, format: hdf5}"), {"output.format", "netcdf4"});
}

TEST_F(App, MissingInputFile) {
  const std::string cmd =
      std::string(FEGPU_APP) + " " + (dir_ / "nope.yaml").string() + " 2> " + (dir_ / "stderr").string();
  const int raw = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(raw), 2);
  EXPECT_NE(slurp(dir_ / "stderr").find("cannot open input file"), std::string::npos);
}

TEST_F(App, BadInputLeavesEarlierOutputIntact) {
  ASSERT_EQ(run(kGood).status, 0);
  const std::string before = slurp(dir_ / "out" / "good.e");
  const Result r = run(replace(kGood, "density: 1.0", "density: -1.0"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(slurp(dir_ / "out" / "good.e"), before);
}

TEST_F(App, ALoadRaisedFromZeroIsNoInstabilityAtTheFirstStep) {
  // At rest, a traction raised from zero: after one step every energy term is rounding-sized and
  // balances to no better than its size, which is no blow-up.
  std::string yaml = replace(kGood, "end_time: 0.5", "end_time: 0.5, max_steps: 1");
  yaml = replace(yaml, "initial_conditions:\n  velocity: {y: \"0.01*x\"}\n", "");
  yaml = replace(yaml, "boundary_conditions:\n",
                 "boundary_conditions:\n  - {type: traction, side_set: right, value: [1.0, 0.0], "
                 "function: {t: [0, 0.5], f: [0, 1]}}\n");
  const Result r = run(yaml);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

TEST_F(App, InstabilityIsARunFailure) {
  // A fixed step ten times the stability limit: the run must stop with status 3 and say why.
  const Result r = run(replace(kGood, "end_time: 0.5", "end_time: 0.5, dt: 0.05"));
  EXPECT_EQ(r.status, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("unstable"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stability limit"), std::string::npos) << r.err;
}

TEST_F(App, FractureRunWritesASeriesWithACohesiveBlock) {
  const Result r = run(kNotchedStrip);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("5 notch facets"), std::string::npos) << r.out;
  // The first file holds the notch; every later topology continues in the next file.
  ASSERT_TRUE(fs::exists(dir_ / "out" / "crack.e"));
  ASSERT_TRUE(fs::exists(dir_ / "out" / "crack.e-s.0001")) << r.out;
  std::string last;
  for (int i = 1; fs::exists(dir_ / "out" / fegpu::ExodusWriter::series_name("crack.e", i)); ++i)
    last = (dir_ / "out" / fegpu::ExodusWriter::series_name("crack.e", i)).string();
  const fegpu::ExodusReader first((dir_ / "out" / "crack.e").string()), end(last);
  const auto names = end.variable_names('g');
  const auto col = [&](const std::string &n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
  const auto g = end.global(static_cast<int>(end.times().size()));
  EXPECT_GT(g[col("cohesive_elements")], 5.0);
  EXPECT_EQ(g[col("fragments")], 2.0) << "the strip broke in two";
  EXPECT_GE(g[col("crack_length")], 2.0 - 1e-9) << "the notch plus the crack span the strip";
  // Element variables cover the bulk block and the cohesive block after it.
  const auto damage = end.element(1, "damage");
  EXPECT_EQ(damage.size(), 160u + static_cast<std::size_t>(g[col("cohesive_elements")]));
  EXPECT_EQ(first.element(1, "damage").size(), 165u);
  EXPECT_EQ(*std::max_element(damage.begin(), damage.end()), 1.0);
}

// A mesh file renumbered for locality (the default) cracks as in the file's order (reorder:
// false): test/data/box_tet4.msh (Gmsh's ids, not 1 to n) bursting under an expanding velocity with
// Weibull strengths, which follow the elements' ids, not their places. The same cohesive elements,
// crack area, nodes and energies to every printed digit (seen: 208 cohesive elements; with seed 4
// instead of 3, another draw of the strengths, 196).
TEST_F(App, ARenumberedMeshFileCracksAsInTheFilesOrder) {
  const std::string burst = R"yaml(physics: cohesive_fracture
mesh: {file: SOURCE/test/data/box_tet4.msh, reorder: REORDER}
materials:
  m: {density: 1.0, youngs_modulus: 1.0, poissons_ratio: 0.25}
initial_conditions:
  velocity: {x: "0.02*(x-0.5)", y: "0.02*(y-0.2)", z: "0.02*(z-0.1)"}
fracture:
  law: {phi_n: 1.0e-5, phi_t: 1.0e-5, sigma_max: 0.004, tau_max: 0.004}
  strength: {distribution: weibull, modulus: 4, seed: 3}
  counter: deterministic
time: {end_time: 2.0, safety_factor: 0.5}
output: {file: burst.e, every_time: 0.5}
)yaml";
  std::vector<std::string> lines;
  for (const char *reorder : {"false", "true"}) {
    const Result r = run(replace(replace(burst, "SOURCE", FEGPU_SOURCE_DIR), "REORDER", reorder));
    ASSERT_EQ(r.status, 0) << r.err;
    std::string kept;
    for (const char *head : {"cracks:", "energy:", "energy split:"}) {
      const auto at = r.out.find(std::string("\n") + head);
      ASSERT_NE(at, std::string::npos) << r.out;
      kept += r.out.substr(at, r.out.find('\n', at + 1) - at);
    }
    lines.push_back(kept);
  }
  const auto cracks = lines[0].find("cracks: ");
  ASSERT_NE(cracks, std::string::npos);
  EXPECT_GT(std::stoi(lines[0].substr(cracks + 8)), 100) << "a burst, not a crack or two: " << lines[0];
  EXPECT_EQ(lines[1], lines[0]);
}

TEST_F(App, BadFractureInput) {
  expect_bad_input(replace(kNotchedStrip, "tau_max: 0.01}", "tau_max: 0.01, alpha: 0.5}"),
                   {"fracture.law.alpha", "greater than 1"});
  expect_bad_input(replace(kNotchedStrip, "counter: deterministic", "counter: atomic"),
                   {"fracture.counter", "atomic", "global_atomic"});
  expect_bad_input(replace(kNotchedStrip, "[[0.0, 0.0, 0.5, 0.0]]", "[[3.0, 0.0, 3.5, 0.0]]"),
                   {"no chain of the mesh's interior facets runs along the notch"});
  expect_bad_input(replace(kNotchedStrip, "[[0.0, 0.0, 0.5, 0.0]]", "[[0.0, 0.0, 0.5]]"),
                   {"fracture.notches[0]", "[x0, y0, x1, y1]"});
  expect_bad_input(replace(kNotchedStrip, "counter: deterministic", "region: {x: [1.0, 0.5]}"),
                   {"fracture.region.x", "min < max"});
  expect_bad_input(replace(kNotchedStrip, "counter: deterministic", "strength: {distribution: weibull}"),
                   {"fracture.strength", "modulus"});
  expect_bad_input(replace(kNotchedStrip, "phi_n: 1.0e-4, ", ""), {"fracture.law", "phi_n"});
  expect_bad_input(replace(kNotchedStrip, "y0: -0.2}", "y0: -0.2, perturbation: {amplitude: 0.5}}"),
                   {"mesh.perturbation.amplitude", "[0, 0.3]"});
  expect_bad_input(replace(kNotchedStrip, "y0: -0.2}", "y0: -0.2, diagonals: union}"), {"mesh.diagonals", "cross"});
  expect_bad_input(replace(kNotchedStrip, "y0: -0.2}", "y0: -0.2, lines: [[0.0, 0.0, 0.5, 0.0]]}"),
                   {"mesh.lines", "delaunay alone"});
  expect_bad_input(replace(kNotchedStrip, "y0: -0.2}", "y0: -0.2, diagonals: delaunay, lines: [[0.0, 0.0, 2.5, 0.0]]}"),
                   {"mesh.lines", "in the rectangle"});
  expect_bad_input(
      replace(kNotchedStrip, "y0: -0.2}", "y0: -0.2, diagonals: delaunay, lines: [[0.0, 0.03, 0.5, 0.03]]}"),
      {"mesh", "from the boundary's or another line's"});
  expect_bad_input(replace(kNotchedStrip, "y0: -0.2}",
                           "y0: -0.2, diagonals: delaunay, lines: [[0.25, -0.1, 0.25, 0.1], [0.1, 0.0, 0.5, 0.0]]}"),
                   {"mesh", "crosses another"});
  expect_bad_input(replace(kNotchedStrip, "y0: -0.2}", "y0: -0.2, node_sets: {hit: {x: [5, 6]}}}"),
                   {"mesh.node_sets.hit", "no node of the mesh lies in this box"});
  expect_bad_input(replace(kNotchedStrip, "y0: -0.2}", "y0: -0.2, node_sets: {left: {x: [0, 0]}}}"),
                   {"mesh.node_sets.left", "already has a node set named 'left'"});
}

// A fracture run on a generated lattice warns, once set up (with --check too), that cracks follow
// the lattice; the perturbed 4k mesh, of T3 or T6, does not (and a node set drawn as a box, the
// strip's mouth, takes a boundary condition).
TEST_F(App, FractureOnALatticeWarnsAndAPerturbedMeshDoesNot) {
  Result r = run(kNotchedStrip, "--check");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: cracks on a generated mesh without mesh: perturbation follow its lattice"),
            std::string::npos)
      << r.err;
  const std::string perturbed =
      replace(replace(kNotchedStrip, "y0: -0.2}",
                      "y0: -0.2, diagonals: cross, perturbation: {amplitude: 0.15}, node_sets: {mouth: {x: [0, 0], y: "
                      "[-0.1, 0.1]}}}"),
              "boundary_conditions:",
              "boundary_conditions:\n  - {type: displacement, node_set: mouth, components: x, "
              "value: 0.0}");
  r = run(perturbed, "--check");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  r = run(perturbed);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("TRI3 elements"), std::string::npos);
  EXPECT_NE(r.out.find("320 TRI3"), std::string::npos) << "the 4k mesh: four triangles a cell\n" << r.out;
  r = run(replace(perturbed, "element: tri3", "element: tri6"), "--check");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  r = run(replace(kNotchedStrip, "element: tri3", "element: tri6"), "--check");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: cracks on a generated mesh without mesh: perturbation follow its lattice"),
            std::string::npos)
      << r.err;
  // No lattice, no warning: the Delaunay rectangle, its notch a line of the mesh (no staircase).
  r = run(replace(kNotchedStrip, "y0: -0.2}", "y0: -0.2, diagonals: delaunay, lines: [[0.0, 0.0, 0.5, 0.0]]}"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("; 5 notch facets\n"), std::string::npos) << "on the notch, no staircase\n" << r.out;
}

namespace {
// A quarter of the MacNeal-Harder hemisphere, pinched; the mesh comes from an Exodus file.
const std::string kShell = R"(physics: explicit_shell
mesh: {file: hemisphere.exo}
material: {density: 1.0, youngs_modulus: 6.825e7, poissons_ratio: 0.3, thickness: 0.04}
boundary_conditions:
  - {type: symmetry, node_set: start, normal: y}
  - {type: symmetry, node_set: end, normal: x}
loads:
  - {type: force, point: [10, 0, 0], value: [0.001, 0, 0], function: {t: [0, 0.01], f: [0, 1]}}
  - {type: force, point: [0, 10, 0], value: [0, -0.001, 0], function: {t: [0, 0.01], f: [0, 1]}}
solver: {damping: 10.0}
time: {end_time: 0.05}
output: {file: hemisphere.e, every_time: 0.01}
)";
} // namespace

TEST_F(App, ShellRunsOnAnExodusMesh) {
  const fegpu::HostMesh h = fegpu::generate_hemisphere(6, 6, 10.0, 18.0, 90.0);
  { fegpu::ExodusWriter w((dir_ / "hemisphere.exo").string(), h, {}); }
  const Result r = run(kShell);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("49 nodes, 36 MITC4 shell elements"), std::string::npos) << r.out;
  const fegpu::ExodusReader out((dir_ / "out" / "hemisphere.e").string());
  const fegpu::HostMesh back = fegpu::read_exodus_mesh((dir_ / "out" / "hemisphere.e").string());
  expect_same_mesh_by_ids(back, h);
  ASSERT_EQ(out.times().size(), 6u);
  const auto names = out.variable_names('g');
  const auto col = [&](const std::string &n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
  const auto g = out.global(6);
  EXPECT_GT(g[col("external_work")], 0.0);
  EXPECT_LT(std::abs(g[col("energy_error")]), 1e-3);
  // The loaded point moves outward along x, the other inward along y, by the same amount (to the
  // geometric nonlinearity, ~1e-6 at this load).
  const auto ux = out.nodal(6, "displacement_x"), uy = out.nodal(6, "displacement_y");
  const auto at = [&](double x, double y) { // in the output's order
    for (std::size_t n = 0; n < back.xyz.size() / 3; ++n)
      if (std::abs(back.xyz[3 * n] - x) < 1e-9 && std::abs(back.xyz[3 * n + 1] - y) < 1e-9) return n;
    return std::size_t(-1);
  };
  EXPECT_GT(ux[at(10, 0)], 0.0);
  EXPECT_NEAR(-uy[at(0, 10)], ux[at(10, 0)], 1e-4 * ux[at(10, 0)]);
  EXPECT_EQ(out.element(6, "von_mises_top").size(), 36u);
  // The fused scheme, chosen in the input, writes the same motion. Its atomic sums may run in
  // another order, and this shell's round-off grows: 1.4e-9 of the largest displacement was seen
  // once on this CPU (usually 0); output one step stale would be 2.8e-3 off.
  const Result fused = run(replace(kShell, "{damping: 10.0}", "{damping: 10.0, scheme: fused}"));
  ASSERT_EQ(fused.status, 0) << fused.err;
  EXPECT_NE(fused.out.find("scheme: fused (scatter: atomic)"), std::string::npos) << fused.out;
  const fegpu::ExodusReader again((dir_ / "out" / "hemisphere.e").string());
  const auto ux2 = again.nodal(6, "displacement_x");
  ASSERT_EQ(ux2.size(), ux.size());
  for (std::size_t n = 0; n < ux.size(); ++n)
    EXPECT_NEAR(ux2[n], ux[n], 1e-6 * ux[at(10, 0)]);
}

TEST_F(App, BadShellInput) {
  const fegpu::HostMesh h = fegpu::generate_hemisphere(6, 6, 10.0, 18.0, 90.0);
  { fegpu::ExodusWriter w((dir_ / "hemisphere.exo").string(), h, {}); }
  expect_bad_input(replace(kShell, "normal: y}", "normal: w}"), {"boundary_conditions[0].normal", "unknown axis"});
  expect_bad_input(
      replace(kShell, "type: symmetry, node_set: start, normal: y}", "type: fixed, node_set: start, dofs: [ux, uw]}"),
      {"dofs", "unknown dof 'uw'"});
  expect_bad_input(replace(kShell, "type: symmetry, node_set: start", "type: symmetry, node_set: equatr"),
                   {"boundary_conditions[0].node_set", "no node set named 'equatr'", "equator"});
  expect_bad_input(replace(kShell, "point: [10, 0, 0],", "point: [10, 0, 0], node_set: hole,"),
                   {"loads[0]", "exactly one of node_set and point"});
  expect_bad_input(replace(kShell, "thickness: 0.04", "thickness: 0.0"), {"material.thickness"});
  expect_bad_input(replace(kShell, "damping: 10.0", "damping: -1.0"), {"solver.damping", ">= 0"});
  expect_bad_input(replace(kShell, "{damping: 10.0}", "{scheme: implicit}"),
                   {"solver.scheme", "fused", "element_local"});
  expect_bad_input(replace(kShell, "{damping: 10.0}", "{scheme: fused, scatter: coloring}"),
                   {"solver.scatter", "atomics"});
  expect_bad_input(
      replace(kShell, "{file: hemisphere.exo}", "{generator: hemisphere, n_theta: 4, n_phi: 4, radius: 10, hole: 95}"),
      {"mesh.hole", "below 90"});
  expect_bad_input(
      replace(kShell, "{file: hemisphere.exo}", "{generator: rectangle, element: tri3, nx: 2, ny: 2, lx: 1, ly: 1}"),
      {"mesh.element", "shell4"});
  // A shell mesh given to a solid module.
  expect_bad_input(replace(kGood, "{generator: rectangle, element: tri6, nx: 10, ny: 2, lx: 1.0, ly: 0.1}",
                           "{generator: cylinder, n_theta: 8, n_z: 2, radius: 1, length: 1}"),
                   {"mesh.generator", "does not accept shell meshes"});
}

namespace {
// The thesis's wellbore on a coarse quarter annulus (Q9), loads on an unstressed body.
const std::string kWellbore = R"(physics: elastoplastic_wellbore
mesh: {generator: annulus, element: quad9, n_theta: 4, n_r: 12, inner_radius: 0.1, outer_radius: 4.0,
       grading: 1.36, angle: 90}
material: {youngs_modulus: 2000.0, poissons_ratio: 0.2, cohesion: 5.0, friction_angle: 20.0}
boundary_conditions:
  - {type: normal_stress, side_set: inner, value: -40.0}
  - {type: normal_stress, side_set: outer, value: -49.9937}
  - {type: fixed, node_set: start, components: [y]}
  - {type: fixed, node_set: end, components: [x]}
load_steps: 2
solver: {method: newton}
output: {file: wellbore.e, profile: profile.csv, ray_angle: 45}
)";
} // namespace

TEST_F(App, WellboreRunWritesStepsAndAProfile) {
  const Result r = run(kWellbore);
  ASSERT_EQ(r.status, 0) << r.err;
  const fegpu::ExodusReader out((dir_ / "out" / "wellbore.e").string());
  ASSERT_EQ(out.times().size(), 2u);
  EXPECT_EQ(out.times()[1], 1.0);
  const auto names = out.variable_names('g');
  const auto col = [&](const std::string &n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
  const auto g = out.global(2);
  EXPECT_LT(g[col("residual")], 1e-8);
  EXPECT_GT(g[col("plastic_points")], 0.0);
  EXPECT_GT(g[col("plastic_radius")], 0.1);
  EXPECT_LT(g[col("plastic_radius")], 0.2);
  EXPECT_EQ(out.element(2, "plastic").size(), 48u);
  // The profile starts at the wall, where sigma_rr is near the applied -40 MPa (within the error of
  // the area-weighted projection on this coarse mesh, 3.4 MPa), and ends outside near -49.99 MPa.
  std::ifstream csv(dir_ / "out" / "profile.csv");
  std::string header, line, last;
  std::getline(csv, header);
  EXPECT_EQ(header, "r,u_r,sigma_rr,sigma_tt,sigma_zz,equivalent_plastic_strain");
  std::getline(csv, line);
  double v[6];
  std::sscanf(line.c_str(), "%lf,%lf,%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]);
  EXPECT_NEAR(v[0], 0.1, 1e-9);
  EXPECT_NEAR(v[2], -40.0, 5.0);
  EXPECT_GT(v[5], 0.0); // yielded at the wall
  while (std::getline(csv, line))
    last = line;
  std::sscanf(last.c_str(), "%lf,%lf,%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]);
  EXPECT_NEAR(v[0], 4.0, 1e-9);
  EXPECT_NEAR(v[2], -49.9937, 0.5);
}

TEST_F(App, AFailedProfileWriteKeepsTheEarlierProfile) {
  // The profile is written through profile.csv.partial and renamed: with that name a link to
  // /dev/full (every write: "No space left on device"), the run ends with exit 3, the file and
  // the reason, and the profile of the earlier run is kept as it was. The Exodus file, written in
  // place, says that it replaced the earlier one.
  ASSERT_EQ(run(kWellbore).status, 0);
  const std::string before = slurp(dir_ / "out" / "profile.csv");
  ASSERT_GT(before.size(), 1000u);
  fs::create_symlink("/dev/full", dir_ / "out" / "profile.csv.partial");
  const Result r = run(kWellbore);
  EXPECT_EQ(r.status, 3) << r.err;
  for (const char *f : {"profile.csv", "No space left on device", "wellbore.e holds what was written",
                        "in place of an earlier file of that name"})
    EXPECT_NE(r.err.find(f), std::string::npos) << "missing '" << f << "' in: " << r.err;
  EXPECT_EQ(slurp(dir_ / "out" / "profile.csv"), before);
  // A ray that misses the mesh is bad input, found by --check before anything is solved.
  const Result miss = run(replace(kWellbore, "ray_angle: 45", "ray_angle: 180"), "--check");
  EXPECT_EQ(miss.status, 2) << miss.err;
  EXPECT_NE(miss.err.find("output.ray_angle: the ray at 180"), std::string::npos) << miss.err;
}

TEST_F(App, BadWellboreInput) {
  expect_bad_input(replace(kWellbore, "friction_angle: 20.0}", "friction_angle: 20.0, dilation_angle: 30.0}"),
                   {"material.dilation_angle", "friction_angle"});
  expect_bad_input(replace(kWellbore, "friction_angle: 20.0}", "friction_angle: 95.0}"),
                   {"material.friction_angle", "(0, 90)"});
  expect_bad_input(replace(kWellbore, "components: [y]", "components: [z]"), {"components", "unknown component 'z'"});
  expect_bad_input(replace(kWellbore, "side_set: inner", "side_set: wall"), {"side_set", "no side set named 'wall'"});
  expect_bad_input(replace(kWellbore, "method: newton", "method: bfgs"), {"solver.method", "initial_stiffness"});
  expect_bad_input(replace(kWellbore, "element: quad9", "element: tri6"), {"mesh.element", "quad9"});
  expect_bad_input(replace(kWellbore, "load_steps: 2", "load_steps: 0"), {"load_steps"});
  expect_bad_input(
      replace(kWellbore, "{type: fixed, node_set: end, components: [x]}", "{type: pin, point: [0.0], components: [x]}"),
      {"point", "must be [x, y]"});
  // Supports that leave a rigid motion free: the stiffness is singular (it used to run for
  // minutes in conjugate gradients).
  expect_bad_input(replace(kWellbore, "  - {type: fixed, node_set: end, components: [x]}\n", ""),
                   {"boundary_conditions", "free to move", "a translation in x"});
  expect_bad_input(replace(kWellbore, "  - {type: fixed, node_set: start, components: [y]}\n", ""),
                   {"boundary_conditions", "free to move", "a translation in y"});
}

TEST_F(App, WellboreFailuresStopWithTheResidualHistory) {
  // Past the limit load (a wall pressure 100 times the thesis's): the Newton tangent is no longer
  // positive definite, and the run stops at once with exit 3, the load step, the iteration and
  // the residuals so far, instead of iterating on without a word.
  const auto t0 = std::chrono::steady_clock::now();
  const Result r = run(replace(kWellbore, "value: -40.0", "value: -4000.0"));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, 3) << r.err;
  for (const char *f : {"load step 1 of 2", "newton iteration", "linear solve", "relative residual", "at its best"})
    EXPECT_NE(r.err.find(f), std::string::npos) << "missing '" << f << "' in: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.out.find("load step 1/2 (factor 0.5000), newton: 1.00e+00"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" failed\n"), std::string::npos) << r.out;
  EXPECT_LT(seconds, 60.0); // not a timing test: a hang would take the CG limit, minutes
  // Non-associative flow solves with BiCGStab, and the progress line says so.
  const Result n = run(replace(kWellbore, "friction_angle: 20.0}", "friction_angle: 20.0, dilation_angle: 0.0}"));
  EXPECT_EQ(n.status, 0) << n.err;
  EXPECT_NE(n.out.find("BiCGStab iterations)"), std::string::npos) << n.out;
}

TEST_F(App, WellboreFullRingWithPins) {
  // The whole annulus, its rigid motions removed by three pins: the same plastic radius as the
  // quarter with its symmetry planes.
  const std::string ring =
      replace(replace(replace(kWellbore, "n_theta: 4,", "n_theta: 16,"), "angle: 90}", "angle: 360}"),
              "  - {type: fixed, node_set: start, components: [y]}\n  - {type: fixed, node_set: end, components: [x]}",
              "  - {type: pin, point: [0.1, 0.0], components: [y]}\n  - {type: pin, point: [-0.1, 0.0], components: "
              "[y]}\n  - {type: pin, point: [0.0, 0.1], components: [x]}");
  // (residual, plastic points, plastic radius) at the last load step of a run.
  const auto finals = [&](const std::string &input) {
    const Result r = run(input);
    EXPECT_EQ(r.status, 0) << r.err;
    const fegpu::ExodusReader out((dir_ / "out" / "wellbore.e").string());
    const auto names = out.variable_names('g');
    const auto g = out.global(2);
    const auto at = [&](const std::string &n) { return g[std::find(names.begin(), names.end(), n) - names.begin()]; };
    return std::array<double, 3>{at("residual"), at("plastic_points"), at("plastic_radius")};
  };
  const auto quarter = finals(kWellbore), full = finals(ring);
  EXPECT_LT(full[0], 1e-8);
  EXPECT_GT(full[1], 0.0);
  EXPECT_DOUBLE_EQ(full[1], 4 * quarter[1]);
  EXPECT_NEAR(full[2], quarter[2], 1e-9);
}

TEST_F(App, WellboreRunsOnAnExodusMesh) {
  // The same quarter annulus written through the Exodus API and read back as the mesh (9 x 25
  // lattice nodes).
  const fegpu::HostMesh h = fegpu::generate_annulus(fegpu::ElementType::Quad9, 4, 12, 0.1, 4.0, 1.36, 90.0);
  { fegpu::ExodusWriter w((dir_ / "annulus.exo").string(), h, {}); }
  const Result r = run(replace(kWellbore,
                               "{generator: annulus, element: quad9, n_theta: 4, n_r: 12, inner_radius: 0.1, "
                               "outer_radius: 4.0,\n       grading: 1.36, angle: 90}",
                               "{file: annulus.exo}"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("225 nodes, 48 quad9 elements"), std::string::npos) << r.out;
  const fegpu::ExodusReader out((dir_ / "out" / "wellbore.e").string());
  const auto names = out.variable_names('g');
  const auto col = [&](const std::string &n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
  EXPECT_LT(out.global(2)[col("residual")], 1e-8);
  EXPECT_GT(out.global(2)[col("plastic_points")], 0.0);
}

// A 3D run: the box generator's TET10 mesh, every kind of condition in 3D, its Exodus file (3D
// coordinates, TETRA10, the z components and six stresses) and histories (the z columns).
const std::string kSolid = R"yaml(physics: elastodynamics
mesh: {generator: box, element: tet10, nx: 6, ny: 2, nz: 2, lx: 1.0, ly: 0.2, lz: 0.2}
materials:
  steel: {density: 1.0, youngs_modulus: 1.0, poissons_ratio: 0.25}
boundary_conditions:
  - {type: displacement, node_set: left, components: all, value: 0.0}
  - {type: traction, side_set: right, value: [0.0, 0.0, -0.001]}
  - {type: pressure, side_set: top, value: 0.0005}
  - {type: body_force, value: [0.0, 0.0, -0.01]}
initial_conditions:
  velocity: {z: "0.01*x*(1+y+z)"}
time: {end_time: 0.5}
output:
  file: solid.e
  every_steps: 10
  histories: {every_steps: 5, probes: [{name: tip, field: displacement, point: [1.0, 0.1, 0.1]}], reactions: [{name: root, node_set: left}]}
)yaml";

TEST_F(App, TetrahedraRunIn3D) {
  const Result r = run(kSolid);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("325 nodes, 144 TETRA10 elements"), std::string::npos) << r.out; // 13 x 5 x 5 lattice
  const fegpu::ExodusReader e((dir_ / "out" / "solid.e").string());
  const auto nodal = e.variable_names('n'), element = e.variable_names('e');
  for (const char *v : {"displacement_z", "velocity_z", "acceleration_z"})
    EXPECT_NE(std::find(nodal.begin(), nodal.end(), v), nodal.end()) << v;
  for (const char *v : {"stress_zz", "stress_yz", "stress_xz", "von_mises"})
    EXPECT_NE(std::find(element.begin(), element.end(), v), element.end()) << v;
  const fegpu::HostMesh back = fegpu::read_exodus_mesh((dir_ / "out" / "solid.e").string());
  EXPECT_EQ(back.type, fegpu::ElementType::Tet10);
  EXPECT_EQ(back.dim, 3);
  const std::string h = slurp(dir_ / "out" / "solid_histories.csv");
  for (const char *c : {"tip_displacement_z", "root_reaction_z"})
    EXPECT_NE(h.find(c), std::string::npos) << c << " in " << h.substr(0, 300);
}

TEST_F(App, BadSolidInput) {
  expect_bad_input(replace(kSolid, "poissons_ratio: 0.25}", "poissons_ratio: 0.25, thickness: 0.1}"),
                   {"materials.steel.thickness", "no plane state or thickness"});
  expect_bad_input(replace(kSolid, "value: [0.0, 0.0, -0.001]", "value: [0.0, -0.001]"),
                   {"boundary_conditions[1].value", "[x, y, z]"});
  expect_bad_input(replace(kSolid, "value: [0.0, 0.0, -0.01]", "value: [-0.01]"),
                   {"boundary_conditions[3].value", "[x, y, z]"});
  expect_bad_input(replace(kSolid, "element: tet10", "element: tri6"), {"mesh.element", "tet4, tet10"});
  expect_bad_input(replace(kGood, "components: [x, y]", "components: [x, z]"), {"unknown component 'z'"});
  // Fracture takes tetrahedra, where a notch is a polygon, not a 2D segment.
  expect_bad_input(
      replace(replace(kNotchedStrip, "{generator: rectangle, element: tri3, nx: 20, ny: 4, lx: 2.0, ly: 0.4, y0: -0.2}",
                      "{generator: box, element: tet4, nx: 2, ny: 2, nz: 2, lx: 1, ly: 1, lz: 1}"),
              ", plane: stress}", "}"),
      {"fracture.notches[0]", "planar polygon [[x, y, z]"});
  // An inverted tetrahedron in a mesh file: exit 2 naming it by the file's id.
  fegpu::HostMesh m = fegpu::generate_box(fegpu::ElementType::Tet4, 2, 1, 1, 1.0, 0.5, 0.5);
  m.elem_gid.resize(m.conn.size() / 4);
  for (std::size_t i = 0; i < m.elem_gid.size(); ++i)
    m.elem_gid[i] = 100 + fegpu::GlobalId(i);
  std::swap(m.conn[4 * 7 + 1], m.conn[4 * 7 + 2]);
  { fegpu::ExodusWriter w((dir_ / "inverted.exo").string(), m, {}); }
  expect_bad_input(replace(kSolid, "{generator: box, element: tet10, nx: 6, ny: 2, nz: 2, lx: 1.0, ly: 0.2, lz: 0.2}",
                           "{file: inverted.exo}"),
                   {"element 107", "inverted"});
}
