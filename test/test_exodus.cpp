// Exodus II round trip: what the writer puts in a file, the Exodus API reads back exactly.
#include "fegpu/core/error.hpp"
#include "fegpu/io/async_writer.hpp"
#include "fegpu/io/exodus.hpp"
#include "fegpu/io/gmsh.hpp"
#include "fegpu/mesh/generators.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <unistd.h>

namespace fs = std::filesystem;

using namespace fegpu;

namespace {
std::string temp_file(const std::string &name) {
  const auto dir = std::filesystem::temp_directory_path() / ("fegpu_test_exodus_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

void expect_same_mesh(const HostMesh &a, const HostMesh &b) {
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_EQ(a.xyz, b.xyz); // bitwise: doubles are stored as doubles
  EXPECT_EQ(a.conn, b.conn);
  ASSERT_EQ(a.blocks.size(), b.blocks.size());
  EXPECT_EQ(a.blocks[0].name, b.blocks[0].name);
  ASSERT_EQ(a.node_sets.size(), b.node_sets.size());
  for (std::size_t i = 0; i < a.node_sets.size(); ++i) {
    EXPECT_EQ(a.node_sets[i].name, b.node_sets[i].name);
    EXPECT_EQ(a.node_sets[i].a, b.node_sets[i].a);
  }
  ASSERT_EQ(a.side_sets.size(), b.side_sets.size());
  for (std::size_t i = 0; i < a.side_sets.size(); ++i) {
    EXPECT_EQ(a.side_sets[i].name, b.side_sets[i].name);
    EXPECT_EQ(a.side_sets[i].a, b.side_sets[i].a);
    EXPECT_EQ(a.side_sets[i].b, b.side_sets[i].b);
  }
}
} // namespace

TEST(Exodus, MeshRoundTripEveryType) {
  for (auto type : {ElementType::Tri3, ElementType::Tri6, ElementType::Quad4, ElementType::Quad8, ElementType::Quad9,
                    ElementType::Shell4}) {
    HostMesh h = generate_rectangle(type, 5, 3, 2.0, 1.0);
    // Non-trivial coordinates and global ids.
    for (double &x : h.xyz)
      x = x * 1.1 + 1e-3 * std::sin(17 * x);
    for (std::size_t i = 0; i < h.xyz.size() / 3; ++i)
      h.node_gid.push_back(1000 + 3 * static_cast<GlobalId>(i));
    for (std::size_t i = 0; i < h.conn.size() / element_info(type).nodes; ++i)
      h.elem_gid.push_back(7 + 2 * i);
    const std::string path = temp_file("mesh_" + type_name(type) + ".e");
    { ExodusWriter w(path, h, {}); }
    const HostMesh back = read_exodus_mesh(path);
    expect_same_mesh(h, back);
    EXPECT_EQ(back.node_gid, h.node_gid);
    EXPECT_EQ(back.elem_gid, h.elem_gid);
  }
}

TEST(Exodus, VariablesRoundTripAndSeries) {
  const HostMesh h = generate_annulus(ElementType::Tri6, 12, 3, 1.0, 2.0);
  const std::size_t nn = h.xyz.size() / 3, ne = h.conn.size() / 6;
  const std::string path = temp_file("vars.e");
  ExodusVariables vars{{"displacement_x", "displacement_y"}, {"stress_xx"}, {"kinetic_energy", "time_step"}};
  {
    ExodusWriter w(path, h, vars);
    for (int s = 0; s < 3; ++s) {
      std::vector<double> ux(nn), uy(nn), sxx(ne);
      for (std::size_t i = 0; i < nn; ++i) {
        ux[i] = std::sqrt(double(i + s));
        uy[i] = -1.0 / (i + 1 + s);
      }
      for (std::size_t e = 0; e < ne; ++e)
        sxx[e] = 1e6 * std::cos(double(e * (s + 1)));
      w.write_step(0.1 * s + 1.0 / 3.0, {ux.data(), uy.data()}, {sxx.data()}, {s * M_PI, 1e-7});
    }
    // A topology change continues the output in the next file of the series.
    HostMesh h2 = generate_annulus(ElementType::Tri6, 12, 4, 1.0, 2.0);
    w.start_next_file(h2);
    EXPECT_EQ(w.path(), path + "-s.0001");
    std::vector<double> z(h2.xyz.size() / 3, 0.5), zs(h2.conn.size() / 6, 2.0);
    w.write_step(1.0, {z.data(), z.data()}, {zs.data()}, {1.0, 2.0});
  }
  const ExodusReader r(path);
  const auto times = r.times();
  ASSERT_EQ(times.size(), 3u);
  for (int s = 0; s < 3; ++s)
    EXPECT_EQ(times[s], 0.1 * s + 1.0 / 3.0);
  EXPECT_EQ(r.variable_names('n'), vars.nodal);
  EXPECT_EQ(r.variable_names('e'), vars.element);
  EXPECT_EQ(r.variable_names('g'), vars.global);
  for (int s = 0; s < 3; ++s) {
    const auto ux = r.nodal(s + 1, "displacement_x"), uy = r.nodal(s + 1, "displacement_y");
    const auto sxx = r.element(s + 1, "stress_xx");
    for (std::size_t i = 0; i < nn; ++i) {
      EXPECT_EQ(ux[i], std::sqrt(double(i + s)));
      EXPECT_EQ(uy[i], -1.0 / (i + 1 + s));
    }
    for (std::size_t e = 0; e < ne; ++e)
      EXPECT_EQ(sxx[e], 1e6 * std::cos(double(e * (s + 1))));
    EXPECT_EQ(r.global(s + 1), (std::vector<double>{s * M_PI, 1e-7}));
  }
  const ExodusReader r2(path + "-s.0001");
  EXPECT_EQ(r2.times().size(), 1u);
  EXPECT_EQ(read_exodus_mesh(path + "-s.0001").conn.size(), std::size_t(12 * 4 * 2 * 6));
}

TEST(Exodus, TheWriterThreadWritesTheSameFramesAndReportsItsErrors) {
  // The same frames through the asynchronous writer and the plain one: the files hold the same
  // values, bit for bit, the series included.
  const HostMesh h = generate_annulus(ElementType::Tri3, 10, 3, 1.0, 2.0),
                 h2 = generate_annulus(ElementType::Tri3, 10, 4, 1.0, 2.0);
  const std::size_t nn = h.xyz.size() / 3, ne = h.conn.size() / 3, nn2 = h2.xyz.size() / 3, ne2 = h2.conn.size() / 3;
  const ExodusVariables vars{{"u"}, {"s"}, {"g"}};
  const auto frame = [](std::size_t n, int k) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i)
      v[i] = std::sin(double(i * (k + 1))) / (k + 1);
    return v;
  };
  const std::string plain = temp_file("plain.e"), async = temp_file("async.e");
  // One writer after the other: netCDF is not thread-safe, so no two threads may use it at once
  // (the application has one writer at a time, its thread alone once the file exists).
  {
    ExodusWriter w(plain, h, vars);
    for (int k = 0; k < 4; ++k) {
      const std::size_t n = k == 3 ? nn2 : nn, e = k == 3 ? ne2 : ne;
      if (k == 3) w.start_next_file(h2);
      const auto u = frame(n, k), sv = frame(e, k + 7);
      w.write_step(0.5 * k, {u.data()}, {sv.data()}, {double(k)});
    }
  }
  {
    AsyncExodusWriter a(async, h, vars, "fegpu-kk");
    for (int k = 0; k < 4; ++k) {
      const bool next = k == 3;
      const std::size_t n = next ? nn2 : nn, e = next ? ne2 : ne;
      a.write(0.5 * k, {frame(n, k)}, {frame(e, k + 7)}, {double(k)},
              next ? std::optional<HostMesh>(h2) : std::nullopt);
    }
    EXPECT_EQ(a.path(), async + "-s.0001");
    EXPECT_EQ(a.frames_in_file(), 1);
    a.finish();
  }
  for (const std::string suffix : {"", "-s.0001"}) {
    const ExodusReader p(plain + suffix), q(async + suffix);
    ASSERT_EQ(p.times(), q.times());
    for (int k = 1; k <= static_cast<int>(p.times().size()); ++k) {
      EXPECT_EQ(p.nodal(k, "u"), q.nodal(k, "u"));
      EXPECT_EQ(p.element(k, "s"), q.element(k, "s"));
      EXPECT_EQ(p.global(k), q.global(k));
    }
  }
  // A file the thread cannot create (its folder became a plain file) ends the run at the next
  // call, naming the file.
  const fs::path dir = fs::path(temp_file("gone"));
  fs::create_directories(dir);
  AsyncExodusWriter a((dir / "r.e").string(), h, vars, "fegpu-kk");
  fs::remove_all(dir);
  { std::ofstream(dir) << "not a folder"; }
  a.write(0.0, {frame(nn2, 0)}, {frame(ne2, 0)}, {0.0}, h2);
  try {
    a.finish();
    ADD_FAILURE() << "no error";
  } catch (const RunError &e) {
    EXPECT_NE(std::string(e.what()).find("r.e-s.0001"), std::string::npos) << e.what();
  }
}

TEST(Exodus, UnreadableFilesAreInputErrors) {
  EXPECT_THROW(read_exodus_mesh("/nonexistent/mesh.exo"), InputError);
  const std::string junk = temp_file("junk.exo");
  std::FILE *f = std::fopen(junk.c_str(), "w");
  std::fputs("this is not a netCDF file\n", f);
  std::fclose(f);
  EXPECT_THROW(read_exodus_mesh(junk), InputError);
}

namespace {
/// The members of a set as a sorted list of (a, b) pairs (b is 0 for node sets).
std::vector<std::pair<Index, Index>> members(const HostMesh::Set &s) {
  std::vector<std::pair<Index, Index>> m;
  for (std::size_t i = 0; i < s.a.size(); ++i)
    m.push_back({s.a[i], s.b.empty() ? 0 : s.b[i]});
  std::sort(m.begin(), m.end());
  return m;
}
const HostMesh::Set *named(const std::vector<HostMesh::Set> &sets, const std::string &name) {
  for (const auto &s : sets)
    if (s.name == name) return &s;
  return nullptr;
}
} // namespace

TEST(Gmsh, RoundTripWithSetsEveryType) {
  // Every element type the modules use, with its blocks, node sets and side sets, written in MSH
  // 4.1 and read back: the same coordinates (to the bit), connectivity, ids and set members.
  std::vector<HostMesh> meshes;
  for (ElementType t :
       {ElementType::Tri3, ElementType::Tri6, ElementType::Quad4, ElementType::Quad9, ElementType::Quad16})
    meshes.push_back(generate_rectangle(t, 3, 2, 1.5, 0.5));
  meshes.push_back(generate_annulus(ElementType::Quad9, 4, 3, 0.1, 1.0, 1.2, 90.0));
  meshes.push_back(generate_cylinder(6, 3, 1.0, 2.0, 180.0)); // a shell surface in 3D
  for (const HostMesh &h : meshes) {
    const std::string path = temp_file("round.msh");
    write_gmsh_mesh(path, h);
    const HostMesh g = read_gmsh_mesh(path);
    SCOPED_TRACE(type_name(h.type));
    EXPECT_EQ(g.type, h.type);
    EXPECT_EQ(g.dim, h.dim);
    EXPECT_EQ(g.xyz, h.xyz);
    EXPECT_EQ(g.conn, h.conn);
    ASSERT_EQ(g.elem_gid.size(), h.conn.size() / element_info(h.type).nodes);
    ASSERT_EQ(g.blocks.size(), std::max<std::size_t>(1, h.blocks.size()));
    for (const auto &s : h.node_sets) {
      const auto *r = named(g.node_sets, s.name);
      ASSERT_NE(r, nullptr) << s.name;
      // A side set of the same name adds its edges' nodes: they are the set's own nodes here.
      EXPECT_EQ(members(*r), members(s)) << s.name;
    }
    for (const auto &s : h.side_sets) {
      const auto *r = named(g.side_sets, s.name);
      ASSERT_NE(r, nullptr) << s.name;
      EXPECT_EQ(members(*r), members(s)) << s.name;
    }
    std::remove(path.c_str());
  }
}

TEST(Gmsh, BadFilesAreInputErrorsNamingTheLine) {
  const std::string path = temp_file("bad.msh");
  const auto error = [&](const std::string &text) {
    { std::ofstream(path) << text; }
    try {
      read_gmsh_mesh(path);
    } catch (const InputError &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n").find("version 2.2"), std::string::npos);
  const std::string head = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n";
  const std::string nodes = "$Nodes\n1 3 1 3\n2 1 0 3\n1\n2\n3\n0 0 0\n1 0 0\n0 1 0\n$EndNodes\n";
  EXPECT_NE(error(head + nodes + "$Elements\n1 1 1 1\n2 1 2 1\n1 1 2 9\n$EndElements\n").find("node 9"),
            std::string::npos);
  EXPECT_NE(error(head + nodes + "$Elements\n1 1 1 1\n2 1 4 1\n1 1 2 3 4\n$EndElements\n").find("element type 4"),
            std::string::npos);
  const std::string bad = error(head + "$Nodes\n1 3 1 3\n2 1 0 3\n1\n2\n3\n0 0 0\n1 x 0\n");
  EXPECT_NE(bad.find("line 11: 'x' is not a number"), std::string::npos) << bad;
  EXPECT_NE(error("").find("expected $MeshFormat"), std::string::npos);
  std::remove(path.c_str());
}

TEST(Gmsh, AMeshMadeByGmshHasItsGeometryAndSets) {
  // config/plate_with_hole.msh, written by Gmsh 4.15 from plate_with_hole.geo: a quarter of a
  // 2 x 2 plate with a hole of radius 0.1 in six-node triangles. Every node of a named curve lies on
  // that curve, every side of a side set joins two nodes of its node set, the point group is the
  // one node at (0, 0.1), every element is counter-clockwise, and the corner triangles fill the
  // quarter plate less the hole's polygon (the fan of its sides' chords from the centre) exactly.
  const HostMesh h = read_gmsh_mesh(std::string(FEGPU_SOURCE_DIR) + "/config/plate_with_hole.msh");
  ASSERT_EQ(h.type, ElementType::Tri6);
  EXPECT_EQ(h.dim, 2);
  ASSERT_EQ(h.blocks.size(), 1u);
  EXPECT_EQ(h.blocks[0].name, "plate");
  const double L = 1.0, a = 0.1;
  const auto on = [&](const std::string &set, auto &&curve) {
    const auto *s = named(h.node_sets, set);
    ASSERT_NE(s, nullptr) << set;
    EXPECT_GT(s->a.size(), 2u) << set;
    for (Index n : s->a)
      EXPECT_LT(std::abs(curve(h.xyz[3 * n], h.xyz[3 * n + 1])), 1e-12) << set << " node " << n;
    const auto *side = named(h.side_sets, set);
    ASSERT_NE(side, nullptr) << set;
    for (std::size_t i = 0; i < side->a.size(); ++i)
      for (int k = 0; k < 3; ++k) {
        const Index n = h.conn[6 * side->a[i] + facet_node(h.type, static_cast<int>(side->b[i]), k)];
        EXPECT_TRUE(std::count(s->a.begin(), s->a.end(), n)) << set << ": side " << i;
      }
  };
  on("left", [](double x, double) { return x; });
  on("bottom", [](double, double y) { return y; });
  on("right", [&](double x, double) { return x - L; });
  on("top", [&](double, double y) { return y - L; });
  on("hole", [&](double x, double y) { return std::hypot(x, y) - a; });
  const auto *top = named(h.node_sets, "hole_top");
  ASSERT_NE(top, nullptr);
  ASSERT_EQ(top->a.size(), 1u);
  EXPECT_EQ(h.xyz[3 * top->a[0]], 0.0);
  EXPECT_NEAR(h.xyz[3 * top->a[0] + 1], a, 1e-15);
  double area = 0;
  const std::size_t ne = h.conn.size() / 6;
  for (std::size_t e = 0; e < ne; ++e) {
    const Index *c = &h.conn[6 * e];
    const double A = 0.5 * ((h.xyz[3 * c[1]] - h.xyz[3 * c[0]]) * (h.xyz[3 * c[2] + 1] - h.xyz[3 * c[0] + 1]) -
                            (h.xyz[3 * c[2]] - h.xyz[3 * c[0]]) * (h.xyz[3 * c[1] + 1] - h.xyz[3 * c[0] + 1]));
    EXPECT_GT(A, 0) << "element " << e;
    area += A;
  }
  double fan = 0; // the hole's polygon: a triangle (centre, two corners) per side
  const auto *hole = named(h.side_sets, "hole");
  for (std::size_t i = 0; i < hole->a.size(); ++i) {
    const int f = static_cast<int>(hole->b[i]);
    const Index p = h.conn[6 * hole->a[i] + facet_node(h.type, f, 0)],
                q = h.conn[6 * hole->a[i] + facet_node(h.type, f, 1)];
    fan += 0.5 * std::abs(h.xyz[3 * p] * h.xyz[3 * q + 1] - h.xyz[3 * q] * h.xyz[3 * p + 1]);
  }
  const double exact = L * L - fan;
  std::printf("Gmsh plate: %zu nodes, %zu elements, %zu sides on the hole; corner-triangle area %.12f (plate less "
              "the hole's polygon %.12f; less the circle %.12f)\n",
              h.xyz.size() / 3, ne, hole->a.size(), area, exact, L * L - M_PI * a * a / 4);
  EXPECT_NEAR(area, exact, 1e-12);
  // Gmsh places the hole's corner nodes evenly: n chords of pi / (2 n) each.
  const double n = static_cast<double>(hole->a.size());
  EXPECT_NEAR(fan, n * a * a / 2 * std::sin(M_PI / (2 * n)), 1e-6 * fan);
}

TEST(Exodus, NetCDF4WithCompressionHoldsTheSameValuesInLessSpace) {
  // A 60,000-element mesh and three smooth frames, classic and netCDF-4 at compression 4: the
  // same values read back, bit for bit, from a file several times smaller.
  const HostMesh h = generate_rectangle(ElementType::Tri6, 150, 200, 1.5, 2.0);
  const std::size_t nn = h.xyz.size() / 3, ne = h.conn.size() / 6;
  const ExodusVariables vars{{"u"}, {"s"}, {"g"}};
  std::vector<double> u(nn), sv(ne);
  std::uintmax_t size[2];
  for (int f = 0; f < 2; ++f) {
    const std::string path = temp_file(f ? "packed.e" : "plain.e");
    {
      ExodusWriter w(path, h, vars, "fegpu-kk", {f == 1, f == 1 ? 4 : 0});
      for (int k = 0; k < 3; ++k) {
        for (std::size_t i = 0; i < nn; ++i)
          u[i] = std::sin(h.xyz[3 * i] * (k + 1)) * std::cos(h.xyz[3 * i + 1]);
        for (std::size_t e = 0; e < ne; ++e)
          sv[e] = 1e6 * double(e % 100) / (k + 1);
        w.write_step(0.25 * k, {u.data()}, {sv.data()}, {double(k)});
      }
    }
    size[f] = fs::file_size(path);
  }
  const ExodusReader a(temp_file("plain.e")), b(temp_file("packed.e"));
  ASSERT_EQ(a.times(), b.times());
  for (int k = 1; k <= 3; ++k) {
    EXPECT_EQ(a.nodal(k, "u"), b.nodal(k, "u"));
    EXPECT_EQ(a.element(k, "s"), b.element(k, "s"));
  }
  EXPECT_EQ(read_exodus_mesh(temp_file("packed.e")).conn, h.conn);
  std::printf("classic %.2f MB, netCDF-4 at compression 4 %.2f MB\n", size[0] / 1e6, size[1] / 1e6);
  EXPECT_LT(size[1], size[0] / 2);
}
