#pragma once
/// \file multigrid.hpp
/// A geometric multigrid V-cycle for the wellbore's linear solves on generated annulus meshes:
/// each coarser level halves the cells in both directions (rounded, so the levels need not be
/// nested: the thesis's 62, 126, 254, ... are not), keeps the radial growth of the cells, and
/// rediscretises the elastic stiffness; prolongation interpolates with the coarse element's shape
/// functions at each fine node, located by its radius and angle; restriction is its transpose;
/// Jacobi smooths, damped per level from its largest eigenvalue (multigrid.cpp says why); the
/// coarsest level (at most 700 dofs) is solved by its dense inverse, computed once.
#include "wellbore_model.hpp"

#include <memory>
#include <vector>

namespace fegpu::wellbore {

/// The parameters of a generated annulus (generate_annulus).
struct AnnulusSpec {
  ElementType type = ElementType::Quad4;
  int n_theta = 0, n_r = 0;
  double r_in = 0, r_out = 0, grading = 1, angle = 360;
  HostMesh generate() const;
};

class Multigrid {
public:
  /// Levels below `fine` down to one with at most `coarsest_cells` cells in a direction and at
  /// most 700 dofs.
  Multigrid(const AnnulusSpec &fine, const Config &config, int coarsest_cells = 8);
  ~Multigrid();

  int levels() const { return static_cast<int>(coarse_.size()) + 1; }
  /// z = V-cycle applied to r, with A0 the fine matrix and dinv0 its inverse diagonal.
  void apply(const CrsMatrix &A0, const RealView &dinv0, const RealView &r, const RealView &z) const;

  struct Level {
    std::unique_ptr<WellboreModel> model; ///< its mesh, fixed dofs and elastic stiffness
    CrsMatrix P;                          ///< prolongation: rows the finer level's dofs, columns this level's
    RealView dinv, r, z, t;               ///< inverse diagonal and work vectors
    double omega = 0;                     ///< the Jacobi smoother's damping
  };

  /// One V-cycle from `level` down (public for CUDA lambdas).
  void cycle(int level, const CrsMatrix &A, const RealView &dinv, const RealView &r, const RealView &z) const;

private:
  std::vector<Level> coarse_;            // coarse_[0] is level 1
  double omega0_ = 0;                    // the fine level's Jacobi damping
  mutable RealView fine_work_;           // the fine level's smoothing work vector
  DeviceView<double **> coarse_inverse_; // the coarsest level's matrix, inverted
};

} // namespace fegpu::wellbore
