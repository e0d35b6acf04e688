#pragma once
/// \file comm.hpp
/// The ranks of a run: one communicator for the whole program (MPI's world where the build has
/// MPI, else a world of one), and the few collective operations the rest of the code needs.
/// Sums that results depend on go through rank 0 in rank order, so a run is bitwise repeatable
/// for a given number of ranks (MPI_Allreduce's order is the library's).
#include <string>
#include <vector>

namespace fegpu::parallel {

class Comm {
public:
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }

  /// The smallest of each rank's value (exact in any order).
  double min(double value) const;
  double max(double value) const;
  long max(long value) const;
  /// Each entry summed over the ranks in rank order, the same on every rank.
  void sum(std::vector<double> &values) const;
  double sum(double value) const;
  /// Every rank's values, on every rank, in rank order (for the plans: small vectors).
  std::vector<std::vector<long>> all_gather(const std::vector<long> &values) const;
  /// send[k] to rank peers[k], and what each of them sent here, in the same order. Every peer must
  /// list this rank among its own (a symmetric relation, such as sharing a node).
  std::vector<std::vector<long>> exchange(const std::vector<int> &peers,
                                          const std::vector<std::vector<long>> &send) const;
  /// Rank `from`'s values, on every rank.
  void broadcast(std::vector<double> &values, int from) const;
  void broadcast(std::vector<int> &values, int from) const;
  /// Every rank's values one after the other in rank order, on rank 0 (empty elsewhere).
  std::vector<double> gather(const std::vector<double> &values) const;
  std::vector<long> gather(const std::vector<long> &values) const;
  void barrier() const;

  /// The MPI library's version line, or "no" in a build without MPI.
  static std::string library();

  /// Starts MPI (where the build has it and a launcher such as mpirun started the process; FEGPU_MPI=1
  /// in the environment forces it) for the program's life; world() is valid after.
  static void init(int &argc, char **&argv);
  static void finalize();
  /// Ends every rank at once with `status` (a failure on one rank that the others cannot see).
  [[noreturn]] static void abort(int status);

private:
  friend const Comm &world();
  int rank_ = 0, size_ = 1;
};

/// The program's ranks.
const Comm &world();

} // namespace fegpu::parallel
