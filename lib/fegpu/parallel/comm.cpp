#include "fegpu/parallel/comm.hpp"

#include <cstdio>
#include <cstdlib>

#ifdef FEGPU_HAVE_MPI
#include <mpi.h>
#endif

namespace fegpu::parallel {

namespace {
Comm &the_world() {
  static Comm c;
  return c;
}
} // namespace

const Comm &world() { return the_world(); }

#ifdef FEGPU_HAVE_MPI

namespace {
/// Whether a launcher (mpirun, mpiexec, srun, ...) started this process. MPI starts only then: a
/// process started on its own is a world of one, and Open MPI takes 1.6 s to start one alone
/// (this CPU, Open MPI 6.0.0rc2), which every single run and test would pay.
bool launched() {
  for (const char *v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MV2_COMM_WORLD_SIZE",
                        "SLURM_STEP_NUM_TASKS", "ALPS_APP_PE", "FEGPU_MPI"})
    if (std::getenv(v)) return true;
  return false;
}

bool running() {
  int started = 0, ended = 0;
  MPI_Initialized(&started);
  MPI_Finalized(&ended);
  return started && !ended;
}
} // namespace

void Comm::init(int &argc, char **&argv) {
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready && !launched()) return;
  if (!ready) MPI_Init(&argc, &argv);
  Comm &c = the_world();
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &c.size_);
}

void Comm::finalize() {
  if (running()) MPI_Finalize();
}

void Comm::abort(int status) {
  std::fflush(stdout), std::fflush(stderr);
  if (running()) MPI_Abort(MPI_COMM_WORLD, status);
  std::exit(status);
}

double Comm::min(double value) const {
  double out = value;
  if (size_ > 1) MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  return out;
}

double Comm::max(double value) const {
  double out = value;
  if (size_ > 1) MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

long Comm::max(long value) const {
  long out = value;
  if (size_ > 1) MPI_Allreduce(&value, &out, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

void Comm::sum(std::vector<double> &values) const {
  if (size_ == 1 || values.empty()) return;
  const int n = static_cast<int>(values.size());
  std::vector<double> all(rank_ == 0 ? static_cast<std::size_t>(n) * size_ : 0);
  MPI_Gather(values.data(), n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank_ == 0)
    for (int i = 0; i < n; ++i) {
      double s = 0;
      for (int r = 0; r < size_; ++r)
        s += all[static_cast<std::size_t>(r) * n + i];
      values[i] = s;
    }
  MPI_Bcast(values.data(), n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

std::vector<std::vector<long>> Comm::all_gather(const std::vector<long> &values) const {
  if (size_ == 1) return {values};
  const int n = static_cast<int>(values.size());
  std::vector<int> counts(size_), offsets(size_ + 1, 0);
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 0; r < size_; ++r)
    offsets[r + 1] = offsets[r] + counts[r];
  std::vector<long> flat(offsets[size_]);
  MPI_Allgatherv(values.data(), n, MPI_LONG, flat.data(), counts.data(), offsets.data(), MPI_LONG, MPI_COMM_WORLD);
  std::vector<std::vector<long>> out(size_);
  for (int r = 0; r < size_; ++r)
    out[r].assign(flat.begin() + offsets[r], flat.begin() + offsets[r + 1]);
  return out;
}

std::vector<std::vector<long>> Comm::exchange(const std::vector<int> &peers,
                                              const std::vector<std::vector<long>> &send) const {
  const std::size_t k = peers.size();
  std::vector<long> sizes(k), theirs(k);
  std::vector<MPI_Request> req(2 * k);
  constexpr int tag_size = 7311, tag_data = 7312;
  for (std::size_t i = 0; i < k; ++i) {
    sizes[i] = static_cast<long>(send[i].size());
    MPI_Irecv(&theirs[i], 1, MPI_LONG, peers[i], tag_size, MPI_COMM_WORLD, &req[i]);
    MPI_Isend(&sizes[i], 1, MPI_LONG, peers[i], tag_size, MPI_COMM_WORLD, &req[k + i]);
  }
  MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE);
  std::vector<std::vector<long>> got(k);
  for (std::size_t i = 0; i < k; ++i) {
    got[i].resize(theirs[i]);
    MPI_Irecv(got[i].data(), static_cast<int>(theirs[i]), MPI_LONG, peers[i], tag_data, MPI_COMM_WORLD, &req[i]);
    MPI_Isend(send[i].data(), static_cast<int>(sizes[i]), MPI_LONG, peers[i], tag_data, MPI_COMM_WORLD, &req[k + i]);
  }
  MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE);
  return got;
}

void Comm::broadcast(std::vector<double> &values, int from) const {
  if (size_ == 1) return;
  long n = static_cast<long>(values.size());
  MPI_Bcast(&n, 1, MPI_LONG, from, MPI_COMM_WORLD);
  values.resize(n);
  MPI_Bcast(values.data(), static_cast<int>(n), MPI_DOUBLE, from, MPI_COMM_WORLD);
}

void Comm::broadcast(std::vector<int> &values, int from) const {
  if (size_ == 1) return;
  long n = static_cast<long>(values.size());
  MPI_Bcast(&n, 1, MPI_LONG, from, MPI_COMM_WORLD);
  values.resize(n);
  MPI_Bcast(values.data(), static_cast<int>(n), MPI_INT, from, MPI_COMM_WORLD);
}

namespace {
template <class T> std::vector<T> gather_to_root(const std::vector<T> &values, MPI_Datatype type, int rank, int size) {
  const int n = static_cast<int>(values.size());
  std::vector<int> counts(size), offsets(size + 1, 0);
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (int r = 0; r < size && rank == 0; ++r)
    offsets[r + 1] = offsets[r] + counts[r];
  std::vector<T> all(rank == 0 ? offsets[size] : 0);
  MPI_Gatherv(values.data(), n, type, all.data(), counts.data(), offsets.data(), type, 0, MPI_COMM_WORLD);
  return all;
}
} // namespace

std::vector<double> Comm::gather(const std::vector<double> &values) const {
  return size_ == 1 ? values : gather_to_root(values, MPI_DOUBLE, rank_, size_);
}

std::vector<long> Comm::gather(const std::vector<long> &values) const {
  return size_ == 1 ? values : gather_to_root(values, MPI_LONG, rank_, size_);
}

void Comm::barrier() const {
  if (size_ > 1) MPI_Barrier(MPI_COMM_WORLD);
}

std::string Comm::library() {
  char v[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  MPI_Get_library_version(v, &len);
  std::string s(v, len);
  const auto nl = s.find_first_of("\n,");
  return nl == std::string::npos ? s : s.substr(0, nl);
}

#else // one process

void Comm::init(int &, char **&) {}
void Comm::finalize() {}
void Comm::abort(int status) {
  std::fflush(stdout), std::fflush(stderr);
  std::exit(status);
}
double Comm::min(double value) const { return value; }
double Comm::max(double value) const { return value; }
long Comm::max(long value) const { return value; }
void Comm::sum(std::vector<double> &) const {}
std::vector<std::vector<long>> Comm::all_gather(const std::vector<long> &values) const { return {values}; }
std::vector<std::vector<long>> Comm::exchange(const std::vector<int> &peers,
                                              const std::vector<std::vector<long>> &) const {
  return std::vector<std::vector<long>>(peers.size());
}
void Comm::broadcast(std::vector<double> &, int) const {}
void Comm::broadcast(std::vector<int> &, int) const {}
std::vector<double> Comm::gather(const std::vector<double> &values) const { return values; }
std::vector<long> Comm::gather(const std::vector<long> &values) const { return values; }
void Comm::barrier() const {}
std::string Comm::library() { return "no"; }

#endif

double Comm::sum(double value) const {
  std::vector<double> v{value};
  sum(v);
  return v[0];
}

} // namespace fegpu::parallel
