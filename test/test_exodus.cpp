// Exodus II round trip: what the writer puts in a file, the Exodus API reads back exactly.
#include "fegpu/core/error.hpp"
#include "fegpu/io/async_writer.hpp"
#include "fegpu/io/exodus.hpp"
#include "fegpu/mesh/generators.hpp"

#include <gtest/gtest.h>

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
  {
    ExodusWriter w(plain, h, vars);
    AsyncExodusWriter a(async, h, vars, "fegpu-kk");
    for (int k = 0; k < 4; ++k) {
      const bool next = k == 3;
      const std::size_t n = next ? nn2 : nn, e = next ? ne2 : ne;
      if (next) w.start_next_file(h2);
      const auto u = frame(n, k), sv = frame(e, k + 7);
      w.write_step(0.5 * k, {u.data()}, {sv.data()}, {double(k)});
      a.write(0.5 * k, {u}, {sv}, {double(k)}, next ? std::optional<HostMesh>(h2) : std::nullopt);
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
