#pragma once
/// \file wellbore_model.hpp
/// Quasi-static plane-strain elastoplasticity on Lagrange quadrilaterals by the thesis's
/// integration-point operators (seed 002, chapter 5): precomputed once on the device, per element,
/// the dense strain-displacement block B (all integration points x all element dofs) and the
/// weights times det J (W); the residual gathers element displacements, forms strains at the
/// points, applies the Mohr-Coulomb update and scatters B^T W sigma; the Jacobian assembles
/// B^T D_ep W B into a CRS matrix whose structure is built once on the device. Degrees of freedom
/// are numbered component-major (dof = component * num_nodes + node), the layout of a DofView.
#include "crs.hpp"
#include "fegpu/assembly/scatter.hpp"
#include "fegpu/io/checkpoint.hpp"
#include "fegpu/mesh/mesh.hpp"
#include "krylov.hpp"
#include "mohr_coulomb.hpp"
#include "quad_basis.hpp"

#include <memory>
#include <string>
#include <vector>

namespace fegpu::wellbore {

class Multigrid;
class DirectSolver;

/// How the residual is evaluated (compared in bench_wellbore):
/// - fused: one kernel gathers, forms strains from the stored B, updates the stresses and
///   scatters B^T W sigma, with no intermediate arrays (one thread per element; two per Q16
///   element on a GPU, so each keeps its columns of B in registers);
/// - block: the thesis's block strategy in stages: strains of all points (dense B u per element)
///   into an array, the update one thread per point, then B^T W sigma per element and scatter;
/// - classical: element by element recomputing shape-function gradients and Jacobians at every
///   evaluation, nothing precomputed (the assembly the thesis compared against);
/// - sparse: the thesis's SP: B as one CRS matrix (rows: every point's strain components,
///   columns: dofs) and its transpose, built once; strains by one SpMV of the increment, the update
///   one thread per point, forces by the transpose's SpMV of W sigma (no atomics, no colours). The
///   SpMV is KokkosKernels' where the build found it (crs.hpp).
enum class ResidualStrategy { Fused, Block, Classical, Sparse };
ResidualStrategy residual_strategy_from_string(const std::string &name);
std::string to_string(ResidualStrategy s);

struct Config {
  MohrCoulomb material;
  double prestress = 0; ///< hydrostatic initial stress (xx, yy and zz)
  struct NormalStress {
    std::string side_set;
    double value; ///< sigma . n . n on the side, tension positive
  };
  std::vector<NormalStress> normal_stress;
  /// A fixed displacement component on a node set, or (node_set empty) at the node nearest
  /// `point`: three such pins remove the rigid motions of a full ring.
  struct Fixed {
    std::string node_set;
    int component; ///< 0: x, 1: y
    double point[2] = {0, 0};
  };
  std::vector<Fixed> fixed;
  ScatterStrategy scatter = ScatterStrategy::Atomic;
  ResidualStrategy residual = ResidualStrategy::Fused;
};

using PointTensor = Kokkos::View<double **[4], MemSpace>; // (element, point, {xx, yy, zz, xy})
using PointScalar = Kokkos::View<double **, MemSpace>;    // (element, point)
/// (element, point, {xx, yy, gamma_xy}). Layout left on every backend: flat, it is the sparse
/// strategy's SpMV output, rows ordered component, point, element.
using PointStrain = Kokkos::View<double **[3], Kokkos::LayoutLeft, MemSpace>;

/// The integration-point operators of the thesis: B (element, 3 * point + {xx, yy, gamma_xy},
/// 2 * local node + component) and W (element, point).
struct Operators {
  int points = 0, nodes = 0; ///< per element
  DeviceView<double ***> B;
  DeviceView<double **> W;
  DeviceView<double **[2]> xy; // (element, point, xy): where the points are
};

class WellboreModel {
public:
  WellboreModel(const HostMesh &mesh, const Config &config);

  Index num_nodes() const { return mesh_.num_nodes(); }
  Index num_elems() const { return mesh_.num_elems(); }
  Index num_dofs() const { return 2 * mesh_.num_nodes(); }
  const Mesh &mesh() const { return mesh_; }
  const Operators &operators() const { return ops_; }
  const CrsMatrix &matrix() const { return K_; }

  /// R = sum_e B^T W sigma - f_ext at the displacement u (the stresses updated from the
  /// committed state by the increment u - u_n, kept as the trial state); zero on fixed dofs.
  void residual(const DofView &u, const DofView &R);
  /// The consistent tangent at u into matrix(); fixed dofs get unit rows and columns.
  void jacobian(const DofView &u);
  /// Solves matrix() x = b: directly if a direct solver is set (returns 0), else to
  /// |r| <= max(rtol |b|, atol) by conjugate gradients, or by BiCGStab where the flow is non-associative
  /// (the tangent is then not symmetric), preconditioned by the multigrid V-cycle if one is set,
  /// else by the diagonal. Returns the iteration count; throws RunError if the solve fails.
  int solve(const DofView &b, const DofView &x, double rtol, int max_iterations, double atol = 0) const;
  /// The Krylov method solve() uses.
  KrylovMethod krylov_method() const {
    return config_.material.sin_psi == config_.material.sin_phi ? KrylovMethod::ConjugateGradients
                                                                : KrylovMethod::BiCGStab;
  }
  /// Accepts u and the trial state as the converged state of a load step.
  void commit(const DofView &u);
  /// Restart: the committed state (displacement, stresses, plastic strain, regimes) into a
  /// checkpoint, and back (the trial state equal to it, as after commit()).
  void save(CheckpointWriter &w) const;
  void restore(const CheckpointReader &r);

  void set_residual_strategy(ResidualStrategy s) { config_.residual = s; }
  void set_multigrid(std::shared_ptr<const Multigrid> mg) { mg_ = std::move(mg); }
  /// Solves by CHOLMOD on the host instead (refactorised by every jacobian()).
  void set_direct_solver(std::shared_ptr<DirectSolver> d) { direct_ = std::move(d); }
  /// (dof): 1 where the displacement is fixed.
  const DeviceView<int *> &fixed() const { return fixed_; }

  /// Loads at factor lambda: the boundary tractions ramp from those in equilibrium with the
  /// initial stress (lambda 0) to the configured ones (lambda 1).
  void set_load_factor(double lambda);

  /// Integration-point stresses (element, point, {xx, yy, zz, xy}) of the last residual.
  const PointTensor &stress() const { return sigma_; }
  /// Equivalent plastic strain, the sum of sqrt(2/3 d_eps_p : d_eps_p) over the load steps.
  const PointScalar &plastic_strain() const { return eqps_; }
  const DeviceView<int **> &regime() const { return regime_; }
  const DofView &external_forces() const { return f_ext_; }
  /// The force the supports exert at the last residual: internal minus external force on a fixed
  /// dof, 0 elsewhere.
  const DofView &reaction() const { return reaction_; }

  // Set-up steps, public for CUDA lambdas.
  void build_operators();
  void build_graph();
  void build_loads();
  void add_normal_stress(const SideSet &side, double value, const DofView &f) const;
  /// InputError unless the fixed dofs stop every rigid motion of the plane.
  void check_supports(const HostMesh &h) const;
  void block_strains(const DofView &u);
  /// The point strains of the staged strategies (allocated on first use).
  const PointStrain &strain_stage();
  /// The Mohr-Coulomb update of every point from strain_ (the staged strategies).
  void update_points();
  void build_sparse_operators();
  void sparse_residual(const DofView &u, const DofView &R);

private:
  Config config_;
  Mesh mesh_;
  QuadBasis basis_;
  Coloring coloring_;
  Operators ops_;
  CrsMatrix K_;
  DofView f_ext_, f_initial_, f_final_, u_n_, reaction_;
  std::shared_ptr<const Multigrid> mg_;
  mutable KrylovWork krylov_work_; // the Krylov solvers' vectors, kept between solves
  std::shared_ptr<DirectSolver> direct_;
  DeviceView<int *> fixed_;     // (dof): 1 if fixed
  PointTensor sigma_n_, sigma_; // (element, point, component)
  PointScalar eqps_n_, eqps_;   // (element, point)
  DeviceView<int **> regime_;   // (element, point)
  CrsMatrix Bs_, BsT_;          // the sparse strategy's B (point-component x dof) and B^T
  RealView du_, w_sigma_;       // the sparse strategy's SpMV inputs: u - u_n and W sigma
  PointStrain strain_;          // the block strategy's stage of point strains
};

} // namespace fegpu::wellbore
