// Crack paths against the directions mechanics gives them, on every kind of mesh we offer (issue
// 37). Cohesive elements open only along facets, so a mesh can steer a crack; these cases measure
// by how much:
// - mode II: Kalthoff and Winkler's experiment (1987): a steel plate with two parallel edge
//   notches, struck at 16.5 m/s between them; the half above the plane of symmetry is modelled,
//   100 x 100 mm, its 50 mm notch at y = 25 mm. The notch's tip is loaded mostly in mode II, and
//   the crack leaves it at about 70 degrees to the notch, as observed and as the maximum hoop
//   stress gives for pure mode II (70.5, Erdogan and Sih 1963). The kink angle is the direction of
//   the mean of the midpoints 5 to 30 mm from the notch's tip of the crack grown from it.
// - mode I at an inclination: a 10 mm square PMMA plate (plane stress), a 3 mm notch through its
//   centre at theta to the mesh's x axis, uniaxial tension across it (tractions sigma (n.m) n on
//   the sides, the uniform strain at the start). The notch is short against the plate, so its tips
//   are loaded in mode I, and the cracks must run on along its line. The deviation is the crack's
//   distance from that line at stations 2h apart up to 2.5 mm beyond the tips (at each, the new
//   cohesive element nearest the line), largest over the stations, over the mesh size h.
// - mixed mode: the same plate, the notch at 15 degrees, loaded slowly so that K_II / K_I = 0.63
//   with no T-stress: the maximum hoop stress and the far field both send the crack at -45 degrees
//   to the notch, straight on, -30 to the mesh.
// Each case runs the application on an input file, as a user does, and reads the Exodus series.
// The default suite asserts the unstructured (Gmsh) meshes' and the remedies' answers (the perturbed
// 4k mesh; the Delaunay rectangle, its mixed-mode kink as a mean over seeds); the Fine tests (label
// slow) measure every mesh kind at two or three sizes for the tables of docs/verification.md.
#include "app_fixture.hpp"
#include "fegpu/io/exodus.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numbers>
#include <sstream>

namespace {

constexpr double kL = 0.010, kC = 1.5e-3, kAhead = 2.5e-3; // mode I: plate, notch half-length, path measured
constexpr double kK = 0.1, kTipX = 0.05, kTipY = 0.025;    // Kalthoff: plate, notch tip

struct Point {
  double x, y;
};

/// The centrally notched plate's notch at theta degrees to x: its direction (tx, ty), its ends, and
/// a point's place in its frame (along it from the plate's centre, and across it, towards (-ty, tx)).
struct Notch {
  double tx, ty;
  explicit Notch(int theta)
      : tx(std::cos(theta * std::numbers::pi / 180)), ty(std::sin(theta * std::numbers::pi / 180)) {}
  std::array<double, 4> ends() const { return {kL / 2 - kC * tx, -kC * ty, kL / 2 + kC * tx, kC * ty}; }
  Point frame(Point p) const {
    const double x = p.x - kL / 2;
    return {x * tx + p.y * ty, -x * ty + p.y * tx};
  }
};

/// A mesh section and its size h for a generator pattern ("same", "alternate", "cross", with
/// "+p" for the nodal perturbation by 0.15, "+p3" by 0.3; "delaunay", no lattice) or a Gmsh file
/// of test/data ("gmsh").
struct MeshKind {
  std::string name;
  double h;
  std::string element = "tri3";
  int seed = 1; ///< of "delaunay"
  /// theta < 0: Kalthoff's plate; else the centrally notched one at theta degrees. T6 files carry
  /// "_tri6" (the same .geo meshed with `-order 2`: the T3 file's triangles, mid-side nodes added).
  std::string file(int theta) const {
    const int um = static_cast<int>(std::lround(h * 1e6));
    const char *order = element == "tri6" ? "_tri6" : "";
    char name[64];
    if (theta < 0)
      std::snprintf(name, sizeof name, "kalthoff_h%d%s.msh", um, order);
    else
      std::snprintf(name, sizeof name, "central_notch_%d_h%d%s.msh", theta, um, order);
    return std::string(FEGPU_SOURCE_DIR) + "/test/data/" + name;
  }
  /// theta < 0: Kalthoff's plate, its struck edge a box (the left edge below the notch's mouth,
  /// whose node belongs to the faces above and below it).
  std::string yaml(int theta) const {
    const std::string struck = theta < 0 ? ", node_sets: {struck: {x: [0, 0], y: [0, 0.0249]}}" : "";
    if (name == "gmsh") return "{file: " + file(theta) + struck + "}";
    const double side = theta < 0 ? kK : kL, y0 = theta < 0 ? 0 : -kL / 2;
    const int n = static_cast<int>(std::lround(side / h));
    const auto plus = name.find("+p");
    const bool perturbed = plus != std::string::npos;
    const std::string diagonals = name.substr(0, plus);
    const std::string amplitude = perturbed && name.substr(plus) == "+p3" ? "0.3" : "0.15";
    char s[640];
    // Delaunay: the notch a line of the mesh, as in the Gmsh meshes.
    char lines[192] = "";
    if (diagonals == "delaunay") {
      const std::array<double, 4> e = theta < 0 ? std::array<double, 4>{0, kTipY, kTipX, kTipY} : Notch(theta).ends();
      std::snprintf(lines, sizeof lines, ", lines: [[%.17g, %.17g, %.17g, %.17g]], seed: %d", e[0], e[1], e[2], e[3],
                    seed);
    }
    std::snprintf(s, sizeof s,
                  "{generator: rectangle, element: %s, diagonals: %s, nx: %d, ny: %d, lx: %g, ly: %g, y0: %g%s%s%s}",
                  element.c_str(), diagonals.c_str(), n, n, side, side, y0,
                  perturbed ? (", perturbation: {amplitude: " + amplitude + "}").c_str() : "", struck.c_str(), lines);
    return s;
  }
};

/// The points joined to `tip` by chains of points at most `link` apart (the first within `link`
/// of the tip): the cracks grown from it, by their cohesive elements' midpoints.
std::vector<Point> joined_to(Point tip, const std::vector<Point> &points, double link) {
  std::vector<Point> out;
  std::vector<bool> taken(points.size(), false);
  for (std::size_t i = 0; i < points.size(); ++i)
    if (std::hypot(points[i].x - tip.x, points[i].y - tip.y) <= link) taken[i] = true, out.push_back(points[i]);
  for (std::size_t k = 0; k < out.size(); ++k) // (out grows as the chains reach further)
    for (std::size_t i = 0; i < points.size(); ++i)
      if (!taken[i] && std::hypot(points[i].x - out[k].x, points[i].y - out[k].y) <= link)
        taken[i] = true, out.push_back(points[i]);
  return out;
}

class CrackPaths : public App {
protected:
  /// The notched square's input: the mesh, PMMA, the sides' tractions of the stress (sxx, syy,
  /// sxy), the cohesive law's fracture energy and strength, the notch. `ramp` 0: the tractions and
  /// the uniform strain from the start, one frame at the end; else the tractions raised from zero
  /// over `ramp`, the body at rest, a frame every `ramp` / 40.
  std::string input(const std::string &mesh, double sxx, double syy, double sxy, double phi, double strength,
                    const std::array<double, 4> &notch, double end_time, double ramp = 0) const {
    const double E = 3.24e9, nu = 0.35;
    const double exx = (sxx - nu * syy) / E, eyy = (syy - nu * sxx) / E, exy = (1 + nu) * sxy / E;
    char fn[96] = "", start[160] = "";
    if (ramp > 0)
      std::snprintf(fn, sizeof fn, ", function: {t: [0, %.17g], f: [0, 1]}", ramp);
    else
      std::snprintf(start, sizeof start,
                    "initial_conditions:\n  displacement: {x: \"%.17g*x + %.17g*y\", y: \"%.17g*x + %.17g*y\"}\n", exx,
                    exy, exy, eyy);
    char s[2048];
    std::snprintf(s, sizeof s, R"(physics: cohesive_fracture
mesh: %s
materials:
  pmma: {density: 1190, youngs_modulus: 3.24e9, poissons_ratio: 0.35, plane: stress}
boundary_conditions:
  - {type: traction, side_set: right, value: [%.17g, %.17g]%s}
  - {type: traction, side_set: left, value: [%.17g, %.17g]%s}
  - {type: traction, side_set: top, value: [%.17g, %.17g]%s}
  - {type: traction, side_set: bottom, value: [%.17g, %.17g]%s}
%sfracture:
  law: {phi_n: %g, phi_t: %g, sigma_max: %g, tau_max: %g}
  notches: [[%.17g, %.17g, %.17g, %.17g]]
time: {end_time: %g, safety_factor: 0.5}
output: {file: crack.e, every_time: %g}
)",
                  mesh.c_str(), sxx, sxy, fn, -sxx, -sxy, fn, sxy, syy, fn, -sxy, -syy, fn, start, phi, phi, strength,
                  strength, notch[0], notch[1], notch[2], notch[3], end_time, ramp > 0 ? ramp / 40 : end_time);
    return s;
  }

  /// The run's files in order: crack.e (the notch alone), then the series a crack's growth starts.
  std::vector<std::string> series() const {
    std::vector<std::string> files{(dir_ / "out" / "crack.e").string()};
    for (int i = 1; fs::exists(dir_ / "out" / fegpu::ExodusWriter::series_name("crack.e", i)); ++i)
      files.push_back((dir_ / "out" / fegpu::ExodusWriter::series_name("crack.e", i)).string());
    return files;
  }

  /// Midpoints of a file's cohesive elements that the first file (the notch) lacks.
  std::vector<Point> grown(const std::string &file) const {
    const auto midpoints = [](const std::string &name) {
      const fegpu::ExodusReader r(name);
      const auto xyz = r.coordinates();
      const auto conn = r.connectivity(1);
      std::vector<Point> p;
      for (std::size_t c = 0; c + 3 < conn.size(); c += 4) {
        Point m{0, 0};
        for (int k = 0; k < 4; ++k) {
          m.x += 0.25 * xyz[3 * conn[c + k]];
          m.y += 0.25 * xyz[3 * conn[c + k] + 1];
        }
        p.push_back(m);
      }
      return p;
    };
    const auto notch = midpoints((dir_ / "out" / "crack.e").string());
    std::vector<Point> out;
    for (const Point &p : midpoints(file)) {
      bool old = false;
      for (const Point &q : notch)
        old = old || std::hypot(p.x - q.x, p.y - q.y) < 1e-9;
      if (!old) out.push_back(p);
    }
    return out;
  }

  /// The cracks grown by the end of the run.
  std::vector<Point> crack() const { return grown(series().back()); }

  /// Mode II: Kalthoff's kink angle above the notch, in degrees (NaN where no crack grew).
  double kink_angle(const MeshKind &mesh) {
    // Maraging steel 18Ni(300), plane strain; K_Ic 68 MPa m^1/2 as G_c, a cohesive strength of
    // 1.7 GPa (a cohesive zone E G_c / sigma^2 of 1.5 mm). The impact speed rises over 1 us.
    const std::string yaml = "physics: cohesive_fracture\nmesh: " + mesh.yaml(-1) + R"(
materials:
  steel: {density: 8000, youngs_modulus: 1.9e11, poissons_ratio: 0.3, plane: strain}
boundary_conditions:
  - {type: displacement, node_set: bottom, components: y, value: 0.0}
  - {type: velocity, node_set: struck, components: x, value: 16.5, function: {t: [0, 1.0e-6, 1.0], f: [0, 1, 1]}}
fracture:
  law: {phi_n: 2.213e4, phi_t: 2.213e4, sigma_max: 1.7e9, tau_max: 1.7e9}
  notches: [[0.0, 0.025, 0.05, 0.025]]
time: {end_time: 8.0e-5, safety_factor: 0.5}
output: {file: crack.e, every_time: 8.0e-5}
)";
    const Result r = run(yaml);
    EXPECT_EQ(r.status, 0) << r.err;
    double sx = 0, sy = 0;
    int n = 0;
    // The crack grown from the tip, not another: on the T6 Gmsh mesh at 1 mm a second crack runs
    // 3 to 14 mm above the plane of symmetry between x = 69 and 99 mm, partly inside the window.
    for (const Point &p : joined_to({kTipX, kTipY}, crack(), 2.5 * mesh.h))
      if (const double d = std::hypot(p.x - kTipX, p.y - kTipY); d >= 5e-3 && d <= 30e-3) {
        sx += p.x - kTipX;
        sy += p.y - kTipY;
        ++n;
      }
    return n == 0 ? std::nan("") : std::atan2(sy, sx) * 180 / std::numbers::pi;
  }

  /// Mode I at theta: the cracks' largest distance from the notch's line within kAhead of its
  /// tips (at stations along it), in mesh sizes, and how far beyond a tip they reached (NaN where no crack grew).
  std::pair<double, double> mode_i_deviation(const MeshKind &mesh, int theta) {
    const Notch notch(theta);
    const double nx = -notch.ty, ny = notch.tx, s = 1.2e7;
    // A weaker, tougher-zoned law than PMMA's: a cohesive zone of 0.8 mm, and the 3 mm notch at
    // about twice the Griffith load while the plate's stress stays at 0.6 of the strength.
    const Result r =
        run(input(mesh.yaml(theta), s * nx * nx, s * ny * ny, s * nx * ny, 100, 20e6, notch.ends(), 1.2e-5));
    EXPECT_EQ(r.status, 0) << r.err;
    // Stations 2h apart beyond each tip: the crack nearest the line at each (a branch beside the
    // crack does not count against it; a crack that left the line does).
    const int stations = static_cast<int>(kAhead / (2 * mesh.h));
    std::vector<double> nearest(2 * stations, std::numeric_limits<double>::infinity());
    double reach = 0;
    for (const Point &p : crack()) {
      const auto [s_along, off] = notch.frame(p);
      const double along = std::abs(s_along) - kC;
      if (along < 0 || std::hypot(along, off) > kAhead) continue; // (not a crack of the plate's edges)
      const int k = std::min(stations - 1, static_cast<int>(along / (2 * mesh.h))) + (s_along > 0 ? stations : 0);
      nearest[k] = std::min(nearest[k], std::abs(off));
      reach = std::max(reach, along);
    }
    double worst = 0;
    int n = 0;
    for (double d : nearest)
      if (std::isfinite(d)) {
        worst = std::max(worst, d);
        ++n;
      }
    if (n == 0) return {std::nan(""), 0};
    return {worst / mesh.h, reach};
  }

  /// Mixed mode: the centrally notched plate, its notch at 15 degrees to the mesh's x axis, under
  /// a stress that is, in the notch's frame (t along it, n across), sigma_tt = sigma_nn = s and
  /// sigma_tn = lambda s, raised over 60 us (six transits of the longitudinal wave: near static
  /// when a crack starts). So K_II / K_I = lambda, the T-stress (sigma_tt - sigma_nn) is zero, and
  /// lambda = sin 45 / (3 cos 45 - 1) puts the maximum hoop stress's kink at -45 degrees to the
  /// notch, the far field's crack direction (normal to its largest principal stress, at +45): the
  /// criterion and the far field agree, so the crack must run straight on at -45 to the notch, -30
  /// to the mesh, 15 degrees off every lattice direction. The angle at each tip (right, left; the
  /// left in the turned frame, the problem being symmetric under a half turn) is the direction, in
  /// the notch's frame, of the mean of the new cohesive elements 0.15a to 0.6a from it, in the
  /// first file in which a crack reaches 0.8 mm from a tip: the crack as it leaves the tip, before
  /// the later loading branches it. NaN at a tip whose crack had not got so far: the field it
  /// grows in is no longer the one above, the other tip's crack having changed it.
  std::array<double, 2> mixed_mode_kink(const MeshKind &mesh) {
    // (A cohesive zone E G_c / sigma_max^2 of 0.41 mm; the plate's largest principal stress at the
    // end, (1 + lambda) s, 0.64 of the strength: no crack but the notch's.)
    const double s = 11e6, ramp = 6e-5, lambda = mixed_mode_ratio();
    const double b = 15 * std::numbers::pi / 180;
    const Notch notch(15);
    const Result r = run(input(mesh.yaml(15), s * (1 - lambda * std::sin(2 * b)), s * (1 + lambda * std::sin(2 * b)),
                               s * lambda * std::cos(2 * b), 100, 28e6, notch.ends(), ramp, ramp));
    EXPECT_EQ(r.status, 0) << r.err;
    std::array<double, 2> angle = {std::nan(""), std::nan("")};
    const auto files = series();
    const double lo = 0.15 * kC, hi = 0.6 * kC; // 0.225 and 0.9 mm
    for (std::size_t i = 1; i < files.size() && std::isnan(angle[0]) && std::isnan(angle[1]); ++i) {
      const auto points = grown(files[i]);
      for (int side = 0; side < 2; ++side) {
        const double sign = side == 0 ? 1 : -1;
        double sx = 0, sy = 0, reach = 0;
        for (const Point &p : points) {
          const Point q = notch.frame(p); // (the left tip turned onto the right by the sign)
          const double dx = sign * q.x - kC, dy = sign * q.y, r = std::hypot(dx, dy);
          if (dx < -0.2e-3 || r > hi) continue; // (not behind the tip, along the notch)
          reach = std::max(reach, r);
          if (r >= lo) sx += dx, sy += dy;
        }
        if (reach >= 0.8e-3) angle[side] = std::atan2(sy, sx) * 180 / std::numbers::pi;
      }
    }
    return angle;
  }

  /// K_II / K_I whose maximum hoop stress kink is -45 degrees: the root of
  /// sin(theta) + lambda (3 cos(theta) - 1) = 0 there, 0.6306.
  static double mixed_mode_ratio() { return std::sqrt(0.5) / (3 * std::sqrt(0.5) - 1); }
};

/// The maximum hoop stress's kink angle (Erdogan and Sih 1963) for K_I / K_II = ratio: the root of
/// K_I sin(theta) + K_II (3 cos(theta) - 1) = 0 on the side away from the shear.
double hoop_stress_angle(double ratio) {
  return 2 * std::atan((ratio - std::sqrt(ratio * ratio + 8)) / 4) * 180 / std::numbers::pi;
}

} // namespace

// On an unstructured mesh (T3 and T6) and on the remedies (the 4k mesh, perturbed; the Delaunay
// rectangle) Kalthoff's crack leaves at the maximum hoop stress's angle, and a mode I crack runs
// on along its notch at every inclination. These are the coarse meshes (1 mm, the Delaunay
// rectangle 0.5 mm; 0.2 mm): 7.5 degrees here, 5 at the Fine test's finest size.
TEST_F(CrackPaths, UnstructuredAndPerturbed4kMeshesFollowTheMechanics) {
  for (const auto &[kind, element] :
       {std::pair{"gmsh", "tri3"}, {"cross+p", "tri3"}, {"delaunay", "tri3"}, {"gmsh", "tri6"}}) {
    // (The Delaunay rectangle at 0.5 mm: at 1 mm, 1.5 cells across the cohesive zone, its five
    // seeds' cracks leave at 71.3 to 78.2 degrees.)
    const double h = std::string(kind) == "delaunay" ? 0.5e-3 : 1e-3;
    const double angle = kink_angle({kind, h, element});
    std::printf("Kalthoff's kink, %s %s %g mm: %.1f degrees\n", kind, element, h * 1e3, angle);
    EXPECT_NEAR(angle, 70.5, 7.5) << kind << " " << element;
    for (int theta : {0, 15, 30, 45}) {
      const auto [dev, reach] = mode_i_deviation({kind, 0.2e-3, element}, theta);
      std::printf("mode I at %d degrees, %s %s 0.2 mm: deviation %.2f h over %.2f mm\n", theta, kind, element, dev,
                  reach * 1e3);
      EXPECT_LE(dev, 1.0) << kind << " " << element << ", " << theta << " degrees";
      EXPECT_GE(reach, 1.0e-3) << "the crack ran on, " << kind << " " << element << ", " << theta << " degrees";
    }
  }
}

/// The mixed-mode angles (right, left tips) against `expected`: the first crack measured, and every
/// tip measured, within `tolerance` degrees.
void expect_mixed_mode_kink(const std::array<double, 2> &angle, double expected, double tolerance,
                            const std::string &what) {
  EXPECT_TRUE(std::isfinite(angle[0]) || std::isfinite(angle[1])) << what << ": no crack reached 0.8 mm";
  for (double a : angle)
    if (std::isfinite(a)) EXPECT_NEAR(a, expected, tolerance) << what;
}

// Mixed mode (K_II / K_I = 0.63, no T-stress): the crack leaves the notch at the maximum hoop
// stress's -45 degrees to it, the far field's direction too, on the unstructured meshes (T3 and
// T6, 0.2 mm) and, in the mean over seeds, on the Delaunay rectangle (T3, 0.1 mm). Not on the
// lattices, even perturbed: the 4k mesh's cracks lock onto its diagonals as it is refined
// (docs/verification.md).
TEST_F(CrackPaths, MixedModeKinksAtTheMaximumHoopStressAngle) {
  EXPECT_NEAR(hoop_stress_angle(1.0), -53.13, 0.01); // the criterion's published value for K_I = K_II
  const double expected = hoop_stress_angle(1 / mixed_mode_ratio());
  EXPECT_NEAR(expected, -45.0, 1e-9);
  for (const char *element : {"tri3", "tri6"}) {
    const auto angle = mixed_mode_kink({"gmsh", 0.2e-3, element});
    std::printf("mixed mode, gmsh %s 0.2 mm: %.1f and %.1f degrees (maximum hoop stress %.1f)\n", element, angle[0],
                angle[1], expected);
    expect_mixed_mode_kink(angle, expected, 5.0, element);
  }
  // The generator without a lattice (T3, 0.1 mm, the notch a line of the mesh), five seeds: each
  // mesh's crack is as random as its facets, so the mean of every tip measured within 5 degrees,
  // each within 12.5 (docs/verification.md: the seeds' spread).
  double sum = 0;
  int n = 0;
  for (int seed = 1; seed <= 5; ++seed) {
    const auto angle = mixed_mode_kink({"delaunay", 0.1e-3, "tri3", seed});
    std::printf("mixed mode, delaunay tri3 0.1 mm, seed %d: %.1f and %.1f degrees\n", seed, angle[0], angle[1]);
    expect_mixed_mode_kink(angle, expected, 12.5, "delaunay, seed " + std::to_string(seed));
    for (double a : angle)
      if (std::isfinite(a)) sum += a, ++n;
  }
  ASSERT_GT(n, 0);
  std::printf("mixed mode, delaunay tri3 0.1 mm: mean %.1f degrees over %d tips\n", sum / n, n);
  EXPECT_NEAR(sum / n, expected, 5.0);
}

/// Sizes in mm from the environment ("1,0.5"), else `fallback` (in m).
static std::vector<double> sizes(const char *variable, std::vector<double> fallback) {
  const char *v = std::getenv(variable);
  if (!v) return fallback;
  std::vector<double> out;
  for (std::stringstream in(v); in.good(); in.ignore(1))
    if (double mm; in >> mm) out.push_back(mm * 1e-3);
  return out;
}

/// The element of the Fine tables' meshes: FEGPU_CRACK_PATH_ELEMENT (tri3, or tri6).
static std::string table_element() {
  const char *v = std::getenv("FEGPU_CRACK_PATH_ELEMENT");
  return v ? v : "tri3";
}

/// The seed of the Fine tables' Delaunay rectangles: FEGPU_CRACK_PATH_SEED, else 1.
static int table_seed() {
  const char *v = std::getenv("FEGPU_CRACK_PATH_SEED");
  return v ? std::atoi(v) : 1;
}

/// The Fine tables' mesh kinds: FEGPU_CRACK_PATH_KINDS ("cross+p3,gmsh"), else every kind.
static std::vector<std::string> table_kinds() {
  const char *v = std::getenv("FEGPU_CRACK_PATH_KINDS");
  if (!v) return {"same", "alternate", "cross", "same+p", "alternate+p", "cross+p", "cross+p3", "delaunay", "gmsh"};
  std::vector<std::string> out;
  std::stringstream in(v);
  for (std::string kind; std::getline(in, kind, ',');)
    out.push_back(kind);
  return out;
}

// The tables of docs/verification.md: every mesh kind at three sizes for Kalthoff's plate and two
// for mode I (FEGPU_KALTHOFF_SIZES and FEGPU_MODE_I_SIZES, in mm, set others; a GPU's work: 0.25 mm
// takes some 12 minutes a mesh on two CPU cores). Gmsh meshes the repository lacks are left out;
// test/data's .geo files make them.
TEST_F(CrackPaths, FineTableOfEveryMeshKind) {
  const auto kinds = table_kinds();
  std::printf("| mesh | h (mm) | Kalthoff's kink (deg) |\n|---|---|---|\n");
  const auto kalthoff = sizes("FEGPU_KALTHOFF_SIZES", {1e-3, 0.5e-3, 0.25e-3});
  const double finest = kalthoff.empty() ? 0 : *std::min_element(kalthoff.begin(), kalthoff.end());
  for (double h : kalthoff)
    for (const std::string &kind : kinds) {
      const MeshKind mesh{kind, h, table_element(), table_seed()};
      if (mesh.name == "gmsh" && !fs::exists(mesh.file(-1))) continue;
      const double angle = kink_angle(mesh);
      std::printf("| %s | %.2g | %.1f |\n", kind.c_str(), h * 1e3, angle);
      if (kind == "gmsh" || kind == "delaunay" || kind.starts_with("cross+p")) // (issue 37: 5 at the finest size)
        EXPECT_NEAR(angle, 70.5, h == finest ? 5.0 : 7.5) << kind << ", h " << h;
      std::fflush(stdout);
    }
  std::printf("| mesh | h (mm) | mode I deviation / h (reach, mm) at 0, 15, 30, 45 deg |\n|---|---|---|\n");
  for (double h : sizes("FEGPU_MODE_I_SIZES", {0.2e-3, 0.1e-3}))
    for (const std::string &kind : kinds) {
      const MeshKind mesh{kind, h, table_element(), table_seed()};
      std::string row;
      for (int theta : {0, 15, 30, 45}) {
        char cell[64] = "-";
        if (mesh.name != "gmsh" || fs::exists(mesh.file(theta))) {
          const auto [dev, reach] = mode_i_deviation(mesh, theta);
          std::snprintf(cell, sizeof cell, "%.1f (%.1f)", dev, reach * 1e3);
          // (The 4k mesh perturbed by 0.15 keeps within one element at 0.2 mm, not at 0.1; by 0.3
          // at both: docs/verification.md.)
          if (mesh.name == "gmsh" || mesh.name == "delaunay" || mesh.name == "cross+p3")
            EXPECT_LE(dev, 1.0) << kind << theta << " degrees, h " << h;
        }
        row += (row.empty() ? "" : ", ") + std::string(cell);
      }
      std::printf("| %s | %.2g | %s |\n", kind.c_str(), h * 1e3, row.c_str());
      std::fflush(stdout);
    }
}

// The mixed-mode table of docs/verification.md: every mesh kind at FEGPU_MIXED_SIZES (mm; 0.2, 0.1
// and 0.05 unless set; Gmsh meshes the repository lacks are left out). The unstructured mesh
// within 5 degrees, as in the default test.
TEST_F(CrackPaths, FineMixedModeTableOfEveryMeshKind) {
  const auto kinds = table_kinds();
  const double expected = hoop_stress_angle(1 / mixed_mode_ratio());
  std::printf("| mesh | h (mm) | mixed-mode kink, right and left tips (deg; %.1f expected) |\n|---|---|---|\n",
              expected);
  for (double h : sizes("FEGPU_MIXED_SIZES", {0.2e-3, 0.1e-3, 0.05e-3}))
    for (const std::string &kind : kinds) {
      const MeshKind mesh{kind, h, table_element(), table_seed()};
      if (mesh.name == "gmsh" && !fs::exists(mesh.file(15))) continue;
      const auto [right, left] = mixed_mode_kink(mesh);
      std::printf("| %s | %.2g | %.1f, %.1f |\n", kind.c_str(), h * 1e3, right, left);
      if (mesh.name == "gmsh") expect_mixed_mode_kink({right, left}, expected, 5.0, kind + ", h " + std::to_string(h));
      std::fflush(stdout);
    }
}
