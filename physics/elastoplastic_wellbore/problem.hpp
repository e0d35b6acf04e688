#pragma once
/// \file problem.hpp
/// The wellbore module between its input file and its model: the problem read from the input
/// (input.cpp) and the output of each load step (output.cpp).
#include "fegpu/driver/config.hpp"
#include "fegpu/io/exodus.hpp"
#include "multigrid.hpp"
#include "nonlinear.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fegpu::wellbore {

/// A point of the profile's ray: its radius, the element holding it and its reference coordinates.
struct RayPoint {
  double r;
  Index element;
  double xi, eta;
};

/// The ray at `angle` degrees from the mesh's smallest to its largest nodal radius, at 401 radii
/// (geometric), each located by inverting the element maps; the points outside the mesh are left
/// out (none left: the ray misses it).
std::vector<RayPoint> locate_ray(const HostMesh &mesh, double angle);

/// Everything the input says.
struct Problem {
  HostMesh mesh;
  Config config;
  NonlinearOptions solver;
  int load_steps = 1;
  bool direct = false;                ///< CHOLMOD on the host instead of conjugate gradients
  std::optional<AnnulusSpec> annulus; ///< set when multigrid preconditions the solves
  std::string file = "wellbore.e", profile;
  double ray_angle = 45.0;
  std::vector<RayPoint> ray;                      ///< where the profile samples (when one is asked for)
  HistoryConfig histories;                        ///< a row a load step (every_steps of them)
  CheckpointConfig checkpoint;                    ///< every_steps load steps
  ExodusFormat format;                            ///< output: format, compression
  std::vector<Index> probe_nodes;                 ///< the node nearest each probe's point
  std::vector<std::vector<Index>> reaction_nodes; ///< each reaction's nodes
};

/// Reads the module's sections and its mesh; throws InputError at the offending key.
Problem parse_problem(const InputNode &root, const RunOptions &opts);

/// Element averages and nodal projections (area-weighted averages of the elements around a node)
/// of the integration-point fields: stress xx, yy, zz, xy and the equivalent plastic strain.
struct Fields {
  std::vector<std::vector<double>> element, nodal; // [field][entity]
  std::vector<double> plastic;                     // fraction of each element's points that yielded
  long plastic_points = 0;
  double plastic_radius = 0; ///< largest distance from the origin of a yielded point
};

/// The Exodus file of the load steps (time = the load factor) and, at the end, the CSV profile
/// along a ray.
class LoadStepOutput {
public:
  LoadStepOutput(const Problem &p, const RunOptions &opts);
  /// Continues the output of a checkpoint's run (its Exodus file, its histories, the state the
  /// profile and the reactions' work need).
  LoadStepOutput(const Problem &p, const RunOptions &opts, const CheckpointReader &r);
  /// What the continuing constructor needs, into a checkpoint.
  void save(CheckpointWriter &w) const;
  /// Writes the converged state of a load step.
  void write(const WellboreModel &m, const DofView &u, double lambda, const std::vector<IterationRecord> &history);
  /// Closes the Exodus file and writes the profile of the last state written, where the input
  /// asks for one.
  void finish();
  const Fields &fields() const { return fields_; }
  const std::string &path() const { return writer_.path(); }
  bool replaced() const { return writer_.replaced(); }

private:
  /// The history row of a load step (every `every_steps` load steps, and the last).
  void write_history(const WellboreModel &m, double lambda, const std::vector<IterationRecord> &history);

  const Problem &problem_;
  std::string profile_path_;
  ExodusWriter writer_;
  std::unique_ptr<HistoryWriter> histories_;
  Fields fields_;
  std::vector<double> u_;               ///< the last displacement written, component-major
  std::vector<double> u_last_, r_last_; ///< displacement and reaction at the last history row
  std::vector<double> work_;            ///< each reaction's work so far
  int step_ = 0;
};

} // namespace fegpu::wellbore
