/// \file shell_model.cpp
/// ShellModel set-up: directors, lumped masses and the stable step, constraint codes, nodal loads,
/// and each scheme's own arrays (the element-local copies, the fused scheme's stored reference
/// terms and spare state).
#include "force_kernels.hpp"

#include "fegpu/core/error.hpp"
#include "fegpu/mesh/topology.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

namespace fegpu::shell {

namespace {
/// Element e's corners, and its shortest and longest edges.
KOKKOS_INLINE_FUNCTION void corners(const CoordView &X, const ConnView &conn, Index e, Vec3 (&x)[4], double &shortest,
                                    double &longest) {
  for (int k = 0; k < 4; ++k)
    x[k] = load(X, conn(e, k));
  shortest = norm(x[1] - x[0]), longest = shortest;
  for (int k = 1; k < 4; ++k) {
    const double l = norm(x[(k + 1) % 4] - x[k]);
    shortest = Kokkos::min(shortest, l), longest = Kokkos::max(longest, l);
  }
}
} // namespace

bool Config::has_pressure() const {
  for (const LoadSpec &l : loads)
    if (l.kind == LoadSpec::Pressure) return true;
  return false;
}

bool Config::follower_pressure() const {
  for (const LoadSpec &l : loads)
    if (l.kind == LoadSpec::Pressure) return l.follower;
  return false;
}

ShellModel::ShellModel(const HostMesh &mesh, Config config, const parallel::Decomposition *parts)
    : host_mesh_(mesh), config_(std::move(config)), parts_(parts) {
  FEGPU_CHECK(!parts || config_.scheme == Scheme::Standard, "many ranks run the standard scheme only");
  if (mesh.type != ElementType::Shell4) throw InputError("explicit_shell needs a SHELL4 mesh");
  const Material &mat = config_.material;
  section_ = Section::make(mat.youngs_modulus, mat.poissons_ratio, mat.thickness, mat.shear_factor);
  mesh_ = upload(mesh);
  setup_nodes();
  setup_constraints();
  setup_loads();
  // On many ranks the colouring also orders the elements in two sweeps (atomic scatter too): those
  // touching a shared node, then the interior, computed while the shared nodes' sums fly.
  overlap_ = parts_ && parts_->overlaps();
  if (config_.scheme == Scheme::Standard && (config_.scatter == Scatter::Coloring || overlap_)) {
    const Crs n2e = build_node2elem(mesh_);
    coloring_ = color_elements(mesh_, n2e, config_.coloring);
    if (overlap_)
      coloring_ = split_coloring(coloring_, elements_touching(mesh, parts_->shared_nodes()), n2e, mesh_.elem2node);
  }
  if (config_.scheme == Scheme::Fused) setup_fused();
  if (config_.scheme == Scheme::ElementLocal) setup_element_local();
  const bool local = config_.scheme == Scheme::ElementLocal;
  node_work_ = decltype(node_work_)("fegpu::shell::node_work", local ? 4 * mesh_.num_elems() : mesh_.num_nodes());
  element_work_ = RealView("fegpu::shell::element_work", pressure_in_elements() ? mesh_.num_elems() : 0);
  load_work_ = RealView("fegpu::shell::load_work", load_node_.extent(0));
}

void ShellModel::setup_nodes() {
  Kokkos::Profiling::ScopedRegion region("fegpu::shell::setup_nodes");
  const Index nn = mesh_.num_nodes(), ne = mesh_.num_elems();
  X_ = mesh_.coords;
  D_ = CoordView("fegpu::shell::D", nn);
  mass_ = RealView("fegpu::shell::mass", nn);
  rotary_ = RealView("fegpu::shell::rotary", nn);
  inv_mass_ = RealView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::shell::inv_mass"), nn);
  inv_rotary_ = RealView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::shell::inv_rotary"), nn);
  const auto X = X_, D = D_;
  const auto conn = mesh_.elem2node;
  const auto mass = mass_, rotary = rotary_, inv_mass = inv_mass_, inv_rotary = inv_rotary_;
  const double rho_h = config_.material.density * config_.material.thickness;
  const double h2 = config_.material.thickness * config_.material.thickness / 12.0;
  double dt_min = 0;
  const double c = std::sqrt(config_.material.youngs_modulus /
                             (config_.material.density * (1 - std::pow(config_.material.poissons_ratio, 2))));
  // A quadrilateral with an edge or a width below 1e-8 of its longest edge (the square root of
  // the rounding of doubles, where its geometry is lost to rounding) is degenerate: bad input.
  Index degenerate = ne;
  Kokkos::parallel_reduce(
      "fegpu::shell::check_elements", range(0, ne),
      KOKKOS_LAMBDA(Index e, Index & first) {
        Vec3 x[4];
        double shortest, longest;
        corners(X, conn, e, x, shortest, longest);
        const double area = 0.5 * norm(cross(x[2] - x[0], x[3] - x[1]));
        if (!(shortest > 1e-8 * longest && area > 1e-8 * longest * longest) && e < first) first = e;
      },
      Kokkos::Min<Index>(degenerate));
  if (degenerate < ne)
    throw InputError(element_place(mesh_, degenerate) +
                     " is degenerate: an edge or its width is below 1e-8 of its longest edge");
  // Element normals summed at the nodes (directors), row-sum lumped masses, and the stable step.
  // Each element's shares first, then each node sums those of its elements in ascending order
  // (node2elem is sorted): the same sums on every run and backend, unlike atomic adds, so that a
  // run is repeatable bit for bit and a restart continues it exactly.
  DeviceView<double *[4][6]> share(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::shell::node_shares"), ne);
  Kokkos::parallel_reduce(
      "fegpu::shell::element_setup", range(0, ne),
      KOKKOS_LAMBDA(Index e, double &dt) {
        Vec3 x[4];
        double shortest, longest;
        corners(X, conn, e, x, shortest, longest);
        const Vec3 d1 = x[2] - x[0], d2 = x[3] - x[1];
        const Vec3 nrm = cross(d1, d2);
        const double area = 0.5 * norm(nrm);
        // The length that bounds the step: the area over the longer diagonal, and no more than
        // the shortest edge (a quadrilateral near a triangle, as at a hemisphere's small opening,
        // has a short edge that the first misses: the step from it alone was unstable there).
        dt = Kokkos::min(dt, Kokkos::min(area / Kokkos::max(norm(d1), norm(d2)), shortest));
        // Rotary inertia: rho h (h^2 / 12), raised to rho h A / 8 for thin elements so that the
        // rotational modes do not limit the step (the seed's examples have h << element size).
        const double inertia = Kokkos::max(h2, area / 8.0);
        double m[4] = {0, 0, 0, 0};
        for (int q = 0; q < 4; ++q) {
          const GaussPoint gp = gauss_point(x, q);
          const double j = norm(cross(gp.a1, gp.a2));
          for (int k = 0; k < 4; ++k)
            m[k] += rho_h * j * gp.N(k);
        }
        for (int k = 0; k < 4; ++k) {
          share(e, k, 0) = m[k], share(e, k, 1) = m[k] * inertia;
          share(e, k, 2) = nrm.x, share(e, k, 3) = nrm.y, share(e, k, 4) = nrm.z, share(e, k, 5) = norm(nrm);
        }
      },
      Kokkos::Min<double>(dt_min));
  dt_critical_ = parts_ ? parts_->comm().min(dt_min / c) : dt_min / c;
  const Crs n2e = build_node2elem(mesh_);
  const auto off = n2e.offsets, elems = n2e.indices;
  RealView normals(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::shell::normals_sum"), nn);
  Kokkos::parallel_for(
      "fegpu::shell::node_setup", range(0, nn), KOKKOS_LAMBDA(Index n) {
        double s[6] = {0, 0, 0, 0, 0, 0};
        for (Index i = off(n); i < off(n + 1); ++i) {
          const Index e = elems(i);
          for (int k = 0; k < 4; ++k)
            if (conn(e, k) == n)
              for (int j = 0; j < 6; ++j)
                s[j] += share(e, k, j);
        }
        mass(n) = s[0], rotary(n) = s[1];
        store(D, n, Vec3{s[2], s[3], s[4]});
        normals(n) = s[5];
      });
  if (parts_) { // a shared node's sums over every rank's elements (the normal's before its length)
    parts_->sum(mass_);
    parts_->sum(rotary_);
    parts_->sum(D_);
    parts_->sum(normals);
  }
  // A node whose elements' normals cancel has no director: the surface folds back on itself there
  // (a cylinder of two cells around is two flat panels, one on the other).
  Index folded = nn;
  Kokkos::parallel_reduce(
      "fegpu::shell::check_directors", range(0, nn),
      KOKKOS_LAMBDA(Index n, Index & first) {
        if (!(norm(load(D, n)) > 1e-8 * normals(n)) && n < first) first = n;
      },
      Kokkos::Min<Index>(folded));
  if (folded < nn) {
    GlobalId id = folded + 1;
    if (mesh_.node_gid.extent(0) > std::size_t(folded)) Kokkos::deep_copy(id, Kokkos::subview(mesh_.node_gid, folded));
    throw InputError(mesh_.source + ": the shell folds back on itself at node " + std::to_string(id) +
                     " (the normals of its elements cancel)");
  }
  Kokkos::parallel_for(
      "fegpu::shell::normalise_directors", range(0, nn), KOKKOS_LAMBDA(Index n) {
        const Vec3 a = load(D, n);
        store(D, n, (1.0 / norm(a)) * a);
        inv_mass(n) = 1 / mass(n), inv_rotary(n) = 1 / rotary(n);
      });
  x_ = CoordView("fegpu::shell::x", nn);
  d_ = CoordView("fegpu::shell::d", nn);
  v_ = CoordView("fegpu::shell::v", nn);
  w_ = CoordView("fegpu::shell::w", nn);
  f_ = CoordView("fegpu::shell::f", nn);
  m_ = CoordView("fegpu::shell::m", nn);
  Kokkos::deep_copy(x_, X_);
  Kokkos::deep_copy(d_, D_);
  const auto v = v_;
  const Vec3 iv{config_.initial_velocity[0], config_.initial_velocity[1], config_.initial_velocity[2]};
  Kokkos::parallel_for(
      "fegpu::shell::initial_velocity", range(0, nn), KOKKOS_LAMBDA(Index n) { store(v, n, iv); });
}

void ShellModel::setup_constraints() {
  Kokkos::Profiling::ScopedRegion region("fegpu::shell::setup_constraints");
  const Index nn = mesh_.num_nodes();
  auto D = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), D_);
  std::vector<int> code(nn, 0), rot_axes(nn, 0);
  for (const ConstraintSpec &c : config_.constraints) {
    int slot = 0;
    if (c.kind != ConstraintSpec::Fixed) {
      if (prescribed_.size() >= kMaxPrescribed)
        throw InputError("explicit_shell: at most " + std::to_string(kMaxPrescribed) + " prescribed motions");
      prescribed_.push_back(static_cast<int>(&c - config_.constraints.data()));
      slot = static_cast<int>(prescribed_.size());
    }
    const auto nodes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mesh_.node_set(c.set).nodes);
    for (std::size_t i = 0; i < nodes.extent(0); ++i) {
      const Index n = nodes(i);
      for (int k = 0; k < 3; ++k) {
        if (c.translation[k]) {
          code[n] |= 1 << k;
          code[n] = (code[n] & ~(15 << (kSlotShift + 4 * k))) | (slot << (kSlotShift + 4 * k));
        }
        if (c.rotation[k]) rot_axes[n] |= 1 << k;
      }
    }
  }
  // On a symmetry plane the surface's normal lies in the plane; the averaged element normals miss
  // it by half an element's turn (one side only), which would also make the plane's rotation
  // condition clamp the node.
  bool projected = false;
  for (const ConstraintSpec &c : config_.constraints) {
    if (c.symmetry_normal < 0) continue;
    projected = true;
    const auto nodes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mesh_.node_set(c.set).nodes);
    for (std::size_t i = 0; i < nodes.extent(0); ++i) {
      const Index n = nodes(i);
      D(n, c.symmetry_normal) = 0;
      const double len = std::sqrt(D(n, 0) * D(n, 0) + D(n, 1) * D(n, 1) + D(n, 2) * D(n, 2));
      if (len < 1e-8)
        throw InputError("explicit_shell: the shell lies in the symmetry plane of node set '" + c.set + "'");
      for (int k = 0; k < 3; ++k)
        D(n, k) /= len;
    }
  }
  if (projected) {
    Kokkos::deep_copy(D_, D);
    Kokkos::deep_copy(d_, D_);
  }
  // Fixed global rotation axes -> the node's allowed rotations: the angular velocity lies in the
  // tangent plane and must be orthogonal to the tangent projections t_i of the fixed axes.
  std::vector<std::array<double, 3>> axes;
  std::map<std::array<long long, 3>, int> axis_index;
  for (Index n = 0; n < nn; ++n) {
    if (!rot_axes[n]) continue;
    const double d[3] = {D(n, 0), D(n, 1), D(n, 2)};
    std::vector<std::array<double, 3>> t;
    for (int k = 0; k < 3; ++k) {
      if (!((rot_axes[n] >> k) & 1)) continue;
      std::array<double, 3> e{};
      e[k] = 1;
      for (int i = 0; i < 3; ++i)
        e[i] -= d[k] * d[i];
      const double len = std::sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
      if (len < 1e-8) continue; // the axis is the director: a drilling rotation, not a dof
      for (double &x : e)
        x /= len;
      bool parallel = false;
      for (const auto &u : t)
        parallel = parallel || std::abs(u[0] * e[0] + u[1] * e[1] + u[2] * e[2]) > 1 - 1e-8;
      if (!parallel) t.push_back(e);
    }
    if (t.empty()) continue;
    if (t.size() >= 2) {
      code[n] |= kRotFixed << 3;
      continue;
    }
    // Allowed: d x t.
    std::array<double, 3> a = {d[1] * t[0][2] - d[2] * t[0][1], d[2] * t[0][0] - d[0] * t[0][2],
                               d[0] * t[0][1] - d[1] * t[0][0]};
    const double len = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    for (double &x : a)
      x /= len;
    const std::array<long long, 3> key = {std::llround(a[0] * 1e9), std::llround(a[1] * 1e9), std::llround(a[2] * 1e9)};
    auto it = axis_index.find(key);
    if (it == axis_index.end()) {
      if (axes.size() >= (1u << kAxisBits))
        throw InputError("explicit_shell: too many distinct single-axis rotation constraints");
      it = axis_index.emplace(key, static_cast<int>(axes.size())).first;
      axes.push_back(a);
    }
    code[n] |= (kRotAxis << 3) | (it->second << kAxisShift);
  }
  code_ = IndexView("fegpu::shell::constraint_code", nn);
  Kokkos::deep_copy(code_, Kokkos::View<const int *, Kokkos::HostSpace>(code.data(), nn));
  axes_ = CoordView("fegpu::shell::rotation_axes", std::max<std::size_t>(axes.size(), 1));
  auto ah = Kokkos::create_mirror_view(axes_);
  for (std::size_t i = 0; i < axes.size(); ++i)
    for (int k = 0; k < 3; ++k)
      ah(i, k) = axes[i][k];
  Kokkos::deep_copy(axes_, ah);
}

void ShellModel::setup_loads() {
  Kokkos::Profiling::ScopedRegion region("fegpu::shell::setup_loads");
  std::vector<Index> node;
  std::vector<double> value;
  std::vector<Index> index;
  int pressure_follower = -1;
  const HostMesh &h = host_mesh_;
  const Index nn = static_cast<Index>(h.xyz.size() / 3);
  // A force on a node goes to its owner alone, an edge's share to the rank of the edge's element:
  // the exchange then sums each once.
  const Index owned = owned_nodes();
  for (std::size_t l = 0; l < config_.loads.size(); ++l) {
    const LoadSpec &s = config_.loads[l];
    const auto push = [&](Index n, double scale) {
      node.push_back(n);
      for (int i = 0; i < 3; ++i)
        value.push_back(s.value[i] * scale);
      index.push_back(static_cast<Index>(l));
    };
    switch (s.kind) {
    case LoadSpec::Pressure:
      if (pressure_follower >= 0 && pressure_follower != int(s.follower))
        throw InputError("explicit_shell: pressure loads must all be follower loads or all fixed-direction loads");
      pressure_follower = s.follower;
      break;
    case LoadSpec::Force:
      if (s.at_point) {
        const Index n = parallel::nearest_node(parts_, mesh_.coords, s.point);
        if (n >= 0) push(n, 1.0);
      } else {
        for (const auto &set : h.node_sets)
          if (set.name == s.set)
            for (Index n : set.a)
              if (n < owned) push(n, 1.0);
      }
      break;
    case LoadSpec::EdgeTraction: {
      // Traction (force per area of the edge's cross-section) times thickness times half the
      // edge length on each end node.
      for (const auto &set : h.side_sets) {
        if (set.name != s.set) continue;
        for (std::size_t i = 0; i < set.a.size(); ++i) {
          const Index e = set.a[i];
          const int f = static_cast<int>(set.b[i]);
          const Index a = h.conn[4 * e + f], b = h.conn[4 * e + (f + 1) % 4];
          double len = 0;
          for (int k = 0; k < 3; ++k)
            len += std::pow(h.xyz[3 * a + k] - h.xyz[3 * b + k], 2);
          const double w = 0.5 * std::sqrt(len) * config_.material.thickness;
          push(a, w);
          push(b, w);
        }
      }
      break;
    }
    case LoadSpec::BodyForce: {
      auto mass = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mass_);
      for (Index n = 0; n < owned; ++n)
        push(n, mass(n));
      break;
    }
    }
  }
  if (config_.loads.size() > kMaxLoads)
    throw InputError("explicit_shell: at most " + std::to_string(kMaxLoads) + " loads");
  // A node's entries together: atomic adds of several loads (an edge traction's two edges, a force
  // on the same node) landed in any order on a GPU, and repeated runs differed in the last bits.
  const Index n = static_cast<Index>(node.size());
  std::vector<Index> order(n);
  std::iota(order.begin(), order.end(), Index(0));
  std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) { return node[a] < node[b]; });
  load_node_ = IndexView("fegpu::shell::load_node", n);
  load_index_ = IndexView("fegpu::shell::load_index", n);
  load_value_ = CoordView("fegpu::shell::load_value", n);
  auto nh = Kokkos::create_mirror_view(load_node_);
  auto ih = Kokkos::create_mirror_view(load_index_);
  auto vh = Kokkos::create_mirror_view(load_value_);
  std::vector<Index> start;
  for (Index i = 0; i < n; ++i) {
    const Index j = order[i];
    if (i == 0 || node[j] != nh(i - 1)) start.push_back(i);
    nh(i) = node[j], ih(i) = index[j];
    for (int k = 0; k < 3; ++k)
      vh(i, k) = value[3 * j + k];
  }
  start.push_back(n);
  Kokkos::deep_copy(load_node_, nh);
  Kokkos::deep_copy(load_index_, ih);
  Kokkos::deep_copy(load_value_, vh);
  load_start_ = IndexView("fegpu::shell::load_start", start.size());
  Kokkos::deep_copy(load_start_, Kokkos::View<const Index *, Kokkos::HostSpace>(start.data(), start.size()));
  // The standard and fused schemes apply a fixed-direction pressure at the nodes: its consistent force is
  // p(t) times a constant vector, so the element kernel does not recompute it every step.
  if (config_.scheme == Scheme::ElementLocal || pressure_follower != 0) return;
  unit_pressure_ = CoordView("fegpu::shell::unit_pressure", nn);
  const CoordView X = X_, u = unit_pressure_;
  const auto conn = mesh_.elem2node;
  // Per element, then per node over its elements in ascending order (repeatable sums).
  DeviceView<double *[4][3]> share(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::shell::pressure_shares"),
                                   mesh_.num_elems());
  Kokkos::parallel_for(
      "fegpu::shell::unit_pressure", range(0, mesh_.num_elems()), KOKKOS_LAMBDA(Index e) {
        Vec3 x[4], f[4];
        for (int k = 0; k < 4; ++k)
          x[k] = load(X, conn(e, k));
        pressure_forces(x, 1.0, f);
        for (int k = 0; k < 4; ++k)
          share(e, k, 0) = f[k].x, share(e, k, 1) = f[k].y, share(e, k, 2) = f[k].z;
      });
  const Crs n2e = build_node2elem(mesh_);
  const auto off = n2e.offsets, elems = n2e.indices;
  Kokkos::parallel_for(
      "fegpu::shell::unit_pressure_nodes", range(0, nn), KOKKOS_LAMBDA(Index n) {
        Vec3 s{0, 0, 0};
        for (Index i = off(n); i < off(n + 1); ++i)
          for (int k = 0; k < 4; ++k)
            if (conn(elems(i), k) == n)
              s = s + Vec3{share(elems(i), k, 0), share(elems(i), k, 1), share(elems(i), k, 2)};
        store(u, n, s);
      });
  if (parts_) parts_->sum(unit_pressure_); // whole on every copy: the owner's starts the forces
}

void ShellModel::setup_element_local() {
  Kokkos::Profiling::ScopedRegion region("fegpu::shell::setup_element_local");
  const Index ne = mesh_.num_elems(), nn = mesh_.num_nodes(), nc = 4 * ne;
  const Crs n2e = build_node2elem(mesh_);
  Copies &c = copies_;
  const auto conn = mesh_.elem2node;
  // The most elements at one node.
  int valence = 0;
  const auto off = n2e.offsets;
  Kokkos::parallel_reduce(
      "fegpu::shell::valence", range(0, nn),
      KOKKOS_LAMBDA(Index n, int &v) { v = Kokkos::max(v, off(n + 1) - off(n)); }, Kokkos::Max<int>(valence));
  c.peers = decltype(c.peers)("fegpu::shell::copy_peers", nc, valence);
  const auto names = std::array<const char *, 6>{"X", "D", "x", "d", "v", "w"};
  CoordView *fields[6] = {&c.X, &c.D, &c.x, &c.d, &c.v, &c.w};
  const CoordView sources[6] = {X_, D_, x_, d_, v_, w_};
  for (int i = 0; i < 6; ++i)
    *fields[i] = CoordView(std::string("fegpu::shell::copy_") + names[i], nc);
  for (int b = 0; b < 2; ++b) {
    c.f[b] = CoordView("fegpu::shell::copy_f", nc);
    c.m[b] = CoordView("fegpu::shell::copy_m", nc);
  }
  c.inv_mass = RealView("fegpu::shell::copy_inv_mass", nc);
  c.inv_rotary = RealView("fegpu::shell::copy_inv_rotary", nc);
  c.code = IndexView("fegpu::shell::copy_code", nc);
  owner_copy_ = IndexView("fegpu::shell::owner_copy", nn);
  const auto idx = n2e.indices;
  const auto peers = c.peers;
  const IndexView code = c.code, code_n = code_, owner = owner_copy_;
  const RealView cm = c.inv_mass, cr = c.inv_rotary, im = inv_mass_, ir = inv_rotary_;
  const CoordView dst[6] = {c.X, c.D, c.x, c.d, c.v, c.w};
  Kokkos::parallel_for(
      "fegpu::shell::build_copies", range(0, nc), KOKKOS_LAMBDA(Index cp) {
        const Index e = cp % ne;
        const int k = cp / ne;
        const Index n = conn(e, k);
        // Copies of n in ascending element order (node2elem is ascending).
        int j = 0;
        for (Index o = off(n); o < off(n + 1); ++o) {
          const Index e2 = idx(o);
          for (int k2 = 0; k2 < 4; ++k2)
            if (conn(e2, k2) == n) peers(cp, j++) = k2 * ne + e2;
        }
        for (; j < static_cast<int>(peers.extent(1)); ++j)
          peers(cp, j) = -1;
        if (peers(cp, 0) == cp) owner(n) = cp;
        code(cp) = code_n(n);
        cm(cp) = im(n), cr(cp) = ir(n);
        for (int i = 0; i < 6; ++i)
          for (int q = 0; q < 3; ++q)
            dst[i](cp, q) = sources[i](n, q);
      });
  // Nodal loads go to the node's first copy.
  const auto ln = load_node_;
  Kokkos::parallel_for(
      "fegpu::shell::load_copies", range(0, static_cast<Index>(ln.extent(0))),
      KOKKOS_LAMBDA(Index i) { ln(i) = owner(ln(i)); });
  // The node arrays are not used by this scheme's time loop.
  x_ = d_ = v_ = w_ = f_ = m_ = CoordView();
}

void ShellModel::setup_fused() {
  Kokkos::Profiling::ScopedRegion region("fegpu::shell::setup_fused");
  const Index ne = mesh_.num_elems(), nn = mesh_.num_nodes();
  Spare &s = spare_;
  s.owned = IndexView("fegpu::shell::owned_nodes", ne);
  const Crs n2e = build_node2elem(mesh_);
  const auto off = n2e.offsets, idx = n2e.indices;
  const auto conn = mesh_.elem2node;
  FEGPU_CHECK(conn.extent(1) == 4, "the fused scheme needs a SHELL4 mesh"); // FusedStep reads conn by Rows
  const IndexView owned = s.owned;
  Kokkos::parallel_for(
      "fegpu::shell::owned_nodes", range(0, ne), KOKKOS_LAMBDA(Index e) {
        int bits = 0;
        for (int k = 0; k < 4; ++k) // a node's first element (node2elem is ascending) stores it
          if (idx(off(conn(e, k))) == e) bits |= 1 << k;
        owned(e) = bits;
      });
  const char *names[4] = {"x", "d", "v", "w"};
  CoordView *spare[4] = {&s.x, &s.d, &s.v, &s.w};
  const CoordView current[4] = {x_, d_, v_, w_};
  for (int i = 0; i < 4; ++i) {
    *spare[i] =
        CoordView(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("fegpu::shell::spare_") + names[i]), nn);
    Kokkos::deep_copy(*spare[i], current[i]); // nodes in no element keep their state
  }
  // The elements' reference terms, computed as GeometryReference computes them every step.
  s.reference = ReferenceView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::shell::reference_terms"), ne);
  const Rows elems{ne};
  double *const ref = elems.data(s.reference);
  const CoordView X = X_, D = D_;
  Kokkos::parallel_for(
      "fegpu::shell::reference_terms", range(0, ne), KOKKOS_LAMBDA(Index e) {
        Vec3 Xe[4], De[4];
        for (int k = 0; k < 4; ++k)
          Xe[k] = load(X, conn(e, k)), De[k] = load(D, conn(e, k));
        StoredReference{ref, elems, e}.store(GeometryReference{Xe, De});
      });
  s.f_next = CoordView("fegpu::shell::f_next", nn), s.m_next = CoordView("fegpu::shell::m_next", nn);
  s.f_after = CoordView("fegpu::shell::f_after", nn), s.m_after = CoordView("fegpu::shell::m_after", nn);
}

double ShellModel::bytes_per_element() const {
  double bytes = 0;
  const auto add = [&](const auto &v) {
    bytes += static_cast<double>(v.span()) * sizeof(typename std::decay_t<decltype(v)>::value_type);
  };
  if (config_.scheme != Scheme::ElementLocal) {
    for (const CoordView *v : {&X_, &D_, &x_, &d_, &v_, &w_, &f_, &m_})
      add(*v);
    add(inv_mass_), add(inv_rotary_), add(mass_), add(rotary_), add(code_), add(mesh_.elem2node), add(unit_pressure_);
    if (config_.scheme == Scheme::Standard && config_.scatter == Scatter::Coloring) add(coloring_.color2elem.indices);
    const Spare &s = spare_;
    for (const CoordView *v : {&s.x, &s.d, &s.v, &s.w, &s.f_next, &s.m_next, &s.f_after, &s.m_after})
      add(*v);
    add(s.owned), add(s.reference);
  } else {
    const Copies &c = copies_;
    for (const CoordView *v : {&c.X, &c.D, &c.x, &c.d, &c.v, &c.w, &c.f[0], &c.f[1], &c.m[0], &c.m[1]})
      add(*v);
    add(c.inv_mass), add(c.inv_rotary), add(c.code), add(c.peers);
  }
  add(load_node_), add(load_index_), add(load_value_), add(load_start_), add(node_work_), add(element_work_),
      add(load_work_);
  return bytes / mesh_.num_elems();
}

} // namespace fegpu::shell
