// Time histories (issue 23): the CSV rows against the Exodus output of the same run (the same
// times, globals and nodal values, bit for bit), against what they must equal on their own
// (reactions in static equilibrium with the loads, the work of supports that do not move, the
// constraints' work against the driver's external work, the crack tip where the mesh puts it),
// and the bad input they can be given.
#include "app_fixture.hpp"
#include "fegpu/io/exodus.hpp"

namespace {

/// A history file: its header's columns and its rows.
struct Csv {
  std::vector<std::string> names;
  std::vector<std::vector<double>> rows;
  std::size_t col(const std::string &name) const {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name || names[i].rfind(name + " [", 0) == 0) return i;
    throw std::logic_error("no column " + name);
  }
};

Csv read_csv(const fs::path &path) {
  Csv c;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::stringstream header(line);
  for (std::string cell; std::getline(header, cell, ',');)
    c.names.push_back(cell);
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');)
      row.push_back(std::strtod(cell.c_str(), nullptr));
    EXPECT_EQ(row.size(), c.names.size()) << line;
    c.rows.push_back(row);
  }
  return c;
}

/// The node nearest (x, y) in an Exodus file, the lowest index among equals (as the probes pick).
std::size_t nearest(const fegpu::ExodusReader &r, double x, double y) {
  const auto xyz = r.coordinates();
  std::size_t best = 0;
  double d = 1e300;
  for (std::size_t n = 0; n < xyz.size() / 3; ++n) {
    const double e = std::hypot(xyz[3 * n] - x, xyz[3 * n + 1] - y);
    if (e < d) d = e, best = n;
  }
  return best;
}

// A strip clamped on the left and pulled on the right by a prescribed velocity.
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
  every_steps: 10
  histories:
    every_steps: 10
    units: {length: m, time: s, force: N, energy: J}
    probes: [{name: end, field: displacement, point: [1.0, 0.05]}, {name: mid, field: velocity, point: [0.5, 0.0]}]
    reactions: [{name: clamp, node_set: left}, {name: pull, side_set: right}]
)";

} // namespace

TEST_F(App, HistoriesEqualTheExodusOutputOfTheSameRun) {
  const Result r = run(kPulled);
  ASSERT_EQ(r.status, 0) << r.err;
  const Csv h = read_csv(dir_ / "out" / "pulled_histories.csv");
  EXPECT_EQ(h.names[0], "time [s]");
  EXPECT_EQ(h.names[h.col("end_displacement_x")], "end_displacement_x [m]");
  EXPECT_EQ(h.names[h.col("mid_velocity_y")], "mid_velocity_y [m/s]");
  EXPECT_EQ(h.names[h.col("clamp_reaction_x")], "clamp_reaction_x [N]");
  EXPECT_EQ(h.names[h.col("energy_error")], "energy_error");
  const fegpu::ExodusReader e((dir_ / "out" / "pulled.e").string());
  const auto times = e.times();
  ASSERT_EQ(h.rows.size(), times.size()); // both every tenth step, the first and the last
  const auto globals = e.variable_names('g');
  const std::size_t end = nearest(e, 1.0, 0.05), mid = nearest(e, 0.5, 0.0);
  double work_gap = 0, scale = 0;
  for (std::size_t k = 0; k < times.size(); ++k) {
    const auto &row = h.rows[k];
    const int step = static_cast<int>(k + 1);
    ASSERT_EQ(row[0], times[k]);
    const auto g = e.global(step);
    for (std::size_t j = 0; j < globals.size(); ++j)
      EXPECT_EQ(row[h.col(globals[j])], g[j]) << globals[j] << " at t = " << times[k];
    EXPECT_EQ(row[h.col("end_displacement_x")], e.nodal(step, "displacement_x")[end]);
    EXPECT_EQ(row[h.col("end_displacement_y")], e.nodal(step, "displacement_y")[end]);
    EXPECT_EQ(row[h.col("mid_velocity_y")], e.nodal(step, "velocity_y")[mid]);
    // The clamp does not move: no work. The constraints' work is the driver's external work (no
    // loads act), each integrated by the trapezoid in its own order.
    EXPECT_EQ(row[h.col("clamp_work")], 0.0);
    const double ext = row[h.col("external_work")], pull = row[h.col("pull_work")];
    work_gap = std::max(work_gap, std::abs(pull - ext)), scale = std::max(scale, std::abs(ext));
  }
  std::printf("the pull's work against the external work: largest gap %.2e of %.4e\n", work_gap, scale);
  EXPECT_GT(scale, 0.0);
  EXPECT_LE(work_gap, 1e-12 * scale);
  EXPECT_GT(h.rows.back()[h.col("pull_reaction_x")], 0.0); // the pulled end resists: tension
}

TEST_F(App, WithoutFieldOutputTheHistoriesAreTheSame) {
  ASSERT_EQ(run(kPulled).status, 0);
  const std::string with = slurp(dir_ / "out" / "pulled_histories.csv");
  fs::remove_all(dir_ / "out");
  std::string input = kPulled;
  input.replace(input.find("  file: pulled.e"), 16, "  file: pulled.e\n  fields: false");
  const Result r = run(input);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("no field output"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "pulled.e"));
  EXPECT_EQ(slurp(dir_ / "out" / "pulled_histories.csv"), with);
}

TEST_F(App, TheCrackTipIsTheFarthestCohesiveElementOfTheOutput) {
  // The notched strip of test_app, its crack's tip along +x and from the notch's tip (0.5, 0):
  // the notch's own facets are not the crack's, so until a facet cracks the tip is none (NaN,
  // speed 0) and after it lies beyond the notch, never moving back, ending at the far end's facet
  // (1.95) once the strip has broken; at every frame it is the farthest facet of the cohesive block
  // in the Exodus file. The speed is the least-squares slope of the distance over the last 5 rows
  // with a tip, recomputed here from the rows. (Measured from (0.5, 0), the tip was the notch's
  // mouth until the new crack grew longer than the notch.)
  const std::string fracture = replace(
      kNotchedStrip, "every_time: 1.0}",
      "every_time: 1.0, histories: {every_time: 0.25, crack_tip: TIP, reactions: [{name: top, node_set: top}]}}");
  for (const std::string tip : {"{direction: [1.0, 0.0]}", "{from: [0.5, 0.0]}"}) {
    SCOPED_TRACE(tip);
    fs::remove_all(dir_ / "out");
    const Result r = run(replace(fracture, "TIP", tip));
    ASSERT_EQ(r.status, 0) << r.err;
    const Csv h = read_csv(dir_ / "out" / "crack_histories.csv");
    const std::size_t tx = h.col("crack_tip_x"), ty = h.col("crack_tip_y"), sp = h.col("crack_tip_speed");
    EXPECT_TRUE(std::isnan(h.rows.front()[tx]) && std::isnan(h.rows.front()[ty])) << h.rows.front()[tx];
    EXPECT_EQ(h.rows.front()[sp], 0.0);
    EXPECT_NEAR(h.rows.back()[tx], 1.95, 1e-12);
    std::vector<std::array<double, 2>> seen; // (time, distance) of the rows with a tip
    double last = 0;
    for (const auto &row : h.rows) {
      if (std::isnan(row[tx])) {
        EXPECT_TRUE(seen.empty()) << "the tip vanished at t = " << row[0];
        EXPECT_EQ(row[sp], 0.0);
        continue;
      }
      EXPECT_GT(row[tx], 0.5) << "a notch facet at t = " << row[0];
      EXPECT_GE(row[tx], last);
      last = row[tx];
      seen.push_back({row[0], tip[1] == 'd' ? row[tx] : std::hypot(row[tx] - 0.5, row[ty])});
      const std::size_t n = std::min<std::size_t>(5, seen.size());
      double st = 0, sd = 0, stt = 0, std_ = 0;
      for (std::size_t k = seen.size() - n; k < seen.size(); ++k)
        st += seen[k][0] / n, sd += seen[k][1] / n;
      for (std::size_t k = seen.size() - n; k < seen.size(); ++k)
        stt += (seen[k][0] - st) * (seen[k][0] - st), std_ += (seen[k][0] - st) * (seen[k][1] - sd);
      EXPECT_NEAR(row[sp], n > 1 ? std_ / stt : 0.0, 1e-9 * std::max(1.0, std::abs(row[sp])));
    }
    // At each frame with a tip, the farthest face-0 edge midpoint of its file's cohesive block.
    int frames = 0;
    for (int i = 1; fs::exists(dir_ / "out" / fegpu::ExodusWriter::series_name("crack.e", i)); ++i) {
      const fegpu::ExodusReader e((dir_ / "out" / fegpu::ExodusWriter::series_name("crack.e", i)).string());
      const auto xyz = e.coordinates();
      const auto quad = e.connectivity(1);
      double far = -1e300;
      for (std::size_t c = 0; c < quad.size() / 4; ++c)
        far = std::max(far, 0.5 * (xyz[3 * quad[4 * c]] + xyz[3 * quad[4 * c + 1]]));
      for (const double t : e.times()) // a file's frames share its topology
        for (const auto &row : h.rows)
          if (row[0] == t && !std::isnan(row[tx]) && tip[1] == 'd') {
            EXPECT_EQ(row[tx], far) << "t = " << t;
            ++frames;
          }
    }
    if (tip[1] == 'd') EXPECT_GE(frames, 3);
  }
  fs::remove_all(dir_ / "out");
  fs::create_directories(dir_ / "out");
  expect_bad_input(replace(fracture, "TIP", "{direction: [1.0, 0.0, 0.0]}"),
                   {"crack_tip.direction", "must be [x, y] on a mesh of triangles"});
}

TEST_F(App, WellboreReactionsBalanceTheLoads) {
  // A quarter annulus under pressure inside and out on its symmetry planes: in equilibrium the
  // y-plane's supports carry p_b b - p_a a whatever yields, and do no work; a row a load step,
  // the wall's displacement as in the Exodus file.
  const std::string wellbore = R"(physics: elastoplastic_wellbore
mesh: {generator: annulus, element: quad9, n_theta: 4, n_r: 12, inner_radius: 0.1, outer_radius: 4.0,
       grading: 1.36, angle: 90}
material: {youngs_modulus: 2000.0, poissons_ratio: 0.2, cohesion: 5.0, friction_angle: 20.0}
boundary_conditions:
  - {type: normal_stress, side_set: inner, value: -40.0}
  - {type: normal_stress, side_set: outer, value: -49.9937}
  - {type: fixed, node_set: start, components: [y]}
  - {type: fixed, node_set: end, components: [x]}
load_steps: 3
solver: {method: newton, tolerance: 1.0e-11}
output:
  file: wellbore.e
  histories:
    probes: [{name: wall, field: displacement, point: [0.1, 0.0]}]
    reactions: [{name: start, node_set: start}, {name: end, node_set: end}]
)";
  const Result r = run(wellbore);
  ASSERT_EQ(r.status, 0) << r.err;
  const Csv h = read_csv(dir_ / "out" / "wellbore_histories.csv");
  ASSERT_EQ(h.rows.size(), 3u);
  const fegpu::ExodusReader e((dir_ / "out" / "wellbore.e").string());
  const std::size_t wall = nearest(e, 0.1, 0.0);
  for (std::size_t k = 0; k < 3; ++k) {
    const auto &row = h.rows[k];
    const double lambda = (k + 1) / 3.0, expected = lambda * (49.9937 * 4.0 - 40.0 * 0.1);
    EXPECT_DOUBLE_EQ(row[h.col("load_factor")], lambda);
    EXPECT_NEAR(row[h.col("start_reaction_y")], expected, 1e-8 * expected);
    EXPECT_NEAR(row[h.col("end_reaction_x")], expected, 1e-8 * expected);
    EXPECT_EQ(row[h.col("start_reaction_x")], 0.0);
    EXPECT_EQ(row[h.col("start_work")], 0.0);
    EXPECT_EQ(row[h.col("wall_displacement_x")], e.nodal(static_cast<int>(k + 1), "displacement_x")[wall]);
  }
}

TEST_F(App, ShellReactionsCarryThePressureOfAPlateAtRest) {
  // The circular plate, simply supported, under pressure and damped to rest: the edge's
  // supports carry the pressure on the disc's polygon, n R^2 sin(2 pi / n) / 2 for n edges.
  const std::string plate = R"(physics: explicit_shell
mesh: {generator: disc, element: shell4, n_theta: 16, n_r: 4, radius: 10.0}
material: {density: 7.85e-9, youngs_modulus: 206000.0, poissons_ratio: 0.3, thickness: 0.5}
boundary_conditions:
  - {type: fixed, node_set: outer, dofs: [uz]}
loads:
  - {type: pressure, value: 1.0e-4}
solver: {scheme: standard, damping: 20000.0}
time: {end_time: 2.0e-3, safety_factor: 0.9}
output:
  file: plate.e
  histories: {every_time: 1.0e-4, probes: [{name: centre, field: displacement, point: [0, 0, 0]}],
              reactions: [{name: edge, node_set: outer}]}
)";
  const Result r = run(plate);
  ASSERT_EQ(r.status, 0) << r.err;
  const Csv h = read_csv(dir_ / "out" / "plate_histories.csv");
  const double polygon = 16 * 100.0 * std::sin(2 * M_PI / 16) / 2, load = 1.0e-4 * polygon;
  const auto &last = h.rows.back();
  std::printf("edge reaction %.6e against the pressure's %.6e; centre deflection %.4e\n",
              last[h.col("edge_reaction_z")], load, last[h.col("centre_displacement_z")]);
  EXPECT_NEAR(last[h.col("edge_reaction_z")], load, 1e-3 * load);
  EXPECT_LT(last[h.col("centre_displacement_z")], 0.0);
}

TEST_F(App, BadHistoryInput) {
  const auto with = [](const std::string &histories) {
    return replace(kPulled, "    reactions: [{name: clamp, node_set: left}, {name: pull, side_set: right}]\n",
                   histories);
  };
  expect_bad_input(with("    reactions: [{name: clamp, node_set: nowhere}]\n"),
                   {"histories.reactions[0].node_set", "no node set named 'nowhere'"});
  expect_bad_input(with("    crack_tip: {direction: [1, 0]}\n"), {"crack_tip", "cohesive_fracture only"});
  expect_bad_input(replace(kPulled, "field: velocity", "field: stress"), {"probes[1].field", "unknown field"});
  expect_bad_input(replace(kPulled, "name: mid", "name: end"), {"probes[1].name", "names two histories"});
  expect_bad_input(with("    reactions: [{name: clamp, node_set: left, side_set: right}]\n"),
                   {"reactions[0]", "give node_set or side_set"});
  expect_bad_input(replace(kPulled, "every_steps: 10\n    units", "every_steps: 10\n    every_time: 1.0\n    units"),
                   {"histories", "every_steps or every_time"});
}
