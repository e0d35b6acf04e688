#pragma once
/// \file halo.hpp
/// A run divided among ranks: this rank's part of the mesh (distribute.hpp), the exchange that
/// completes sums over the nodes several ranks hold, and what the output needs of the division.
/// It lives here once; the integrators call sum() where a nodal sum must be whole (forces each
/// step, masses and load patterns once), and no module exchanges anything itself.
///
/// The exchange (staged): receives are posted first; the device packs each neighbour's shared rows
/// into a device buffer, one copy brings them to host-pinned memory (neither Debian's MPI nor the
/// GPU machines' is CUDA-aware), MPI sends them, one copy takes what came back to the device; then
/// every holder of a node adds the rows of all holders in rank order, its own among them, so that
/// each copy of the node ends with the same bits and a run on N ranks repeats bit for bit. (Two
/// bulk copies: the device reading and writing pinned memory entry by entry over the bus is
/// slower.)
/// Overlapped (start_sum, then work that touches no shared row, then finish_sum), the messages
/// fly while the interior elements' forces are computed. The NCCL exchange (Exchange) moves the
/// same device buffers GPU to GPU instead, and neither the host nor the force kernels wait for it.
#include "fegpu/core/types.hpp"
#include "fegpu/io/exodus.hpp"
#include "fegpu/parallel/comm.hpp"
#include "fegpu/parallel/distribute.hpp"

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fegpu::parallel {

/// How the shared rows move between ranks: staged through host memory and sent by MPI (any
/// build), or GPU to GPU by NCCL's grouped send and receive on a stream of their own, ordered with
/// the force kernels by events, with no host wait inside the step (a CUDA build that found NCCL).
/// Either way every holder adds the same rows in the same order: the same bits. Auto: NCCL where
/// the build has it and every rank has a GPU of its own (NCCL cannot join two ranks of one GPU),
/// else staged.
enum class Exchange { Auto, Staged, Nccl };
/// Whether the build has the NCCL exchange.
bool have_nccl();
/// "staged" or "nccl".
std::string exchange_name(Exchange e);
/// The version line of the exchange the build offers between GPUs, for --version.
std::string exchange_library();

/// (entry * components + component): packed rows, as MPI sends and receives them. Pinned host
/// memory, which the copies to and from the device move at the bus' rate (ordinary host memory in
/// a CPU build, where the device buffers are the same Views).
using PinnedView = Kokkos::View<double *, Kokkos::SharedHostPinnedSpace>;

namespace halo_kernels {

template <class View> KOKKOS_INLINE_FUNCTION auto &row(const View &v, Index n, int c) {
  if constexpr (View::rank() == 1)
    return v(n);
  else
    return v(n, c);
}

template <class View> int components(const View &v) {
  return !v.extent(0) ? 0 : View::rank() == 1 ? 1 : static_cast<int>(v.extent(1));
}

/// Column c of the rows of a and b side by side (na = a's components).
template <class View> KOKKOS_INLINE_FUNCTION auto &row(const View &a, const View &b, int na, Index n, int c) {
  return c < na ? row(a, n, c) : row(b, n, c - na);
}

/// send(i) = the rows of send_nodes(i); own(j) = the rows of self_nodes(j) (this rank's part);
/// a row is a's components, then b's (b may be empty).
template <class View>
void pack(const View &a, const View &b, const IndexView &send_nodes, const RealView &send, const IndexView &self_nodes,
          const RealView &own) {
  const Index ns = static_cast<Index>(send_nodes.extent(0)), nself = static_cast<Index>(self_nodes.extent(0));
  const int na = components(a), nc = na + components(b);
  Kokkos::parallel_for(
      "fegpu::parallel::pack", range(0, ns + nself), KOKKOS_LAMBDA(Index i) {
        const bool out = i < ns;
        const Index n = out ? send_nodes(i) : self_nodes(i - ns);
        const RealView &buf = out ? send : own;
        const Index at = out ? i : i - ns;
        for (int c = 0; c < nc; ++c)
          buf(at * nc + c) = row(a, b, na, n, c);
      });
}

/// Each shared row = the sum, in rank order, of the entries `from` lists for it.
template <class View>
void add(const View &a, const View &b, const IndexView &self_nodes, const IndexView &from_offsets,
         const IndexView &from, const RealView &combined) {
  const int na = components(a), nc = na + components(b);
  Kokkos::parallel_for(
      "fegpu::parallel::add", range(0, static_cast<Index>(self_nodes.extent(0))), KOKKOS_LAMBDA(Index j) {
        for (int c = 0; c < nc; ++c) {
          double s = 0;
          for (Index k = from_offsets(j); k < from_offsets(j + 1); ++k)
            s += combined(from(k) * nc + c);
          row(a, b, na, self_nodes(j), c) = s;
        }
      });
}

} // namespace halo_kernels

class Decomposition {
public:
  /// Divides `global` among `comm`'s ranks (METIS, on every rank alike; rank 0's division kept) and
  /// plans the exchange. With `gather`, rank 0 keeps the whole mesh for output gathered into one
  /// file; with `ghosts`, each rank its ghost layer (LocalMesh::ghosts). RunError (on every rank)
  /// if a rank would hold no element.
  Decomposition(const HostMesh &global, const Comm &comm, bool gather, bool overlap, Exchange exchange = Exchange::Auto,
                bool ghosts = false);
  ~Decomposition();

  const Comm &comm() const { return comm_; }
  const LocalMesh &local() const { return local_; }
  /// This rank's mesh: the one its model is built on.
  const HostMesh &mesh() const { return local_.mesh; }
  Index owned_nodes() const { return local_.owned_nodes; }
  const PartitionStats &stats() const { return stats_; }
  long global_elements() const { return part_.global_elems; }
  /// Local node n's position in the whole mesh (the order a one-rank run knows it by).
  long node_index(Index n) const { return local_.node_index[n]; }
  /// One flag per local node of the division: whether another rank holds it too (the input's
  /// topology: follow() leaves them).
  const std::vector<char> &shared_nodes() const { return shared_flags_; }
  /// Whether the integrators overlap the exchange with the interior elements' forces (input
  /// `solver: {overlap: true}`, the default), or exchange after all of them.
  bool overlaps() const { return overlap_; }
  /// The exchange in use (never Auto).
  Exchange exchange() const { return exchange_; }

  /// Completes the rows of shared nodes of `a`, a device View (node) or (node, component) of
  /// partial sums, and of `b` (another such View, or none) in the same messages: each becomes the
  /// sum over the ranks holding the node, in rank order. Collective.
  template <class View> void sum(const View &a, const View &b = View()) const {
    start_sum(a, b);
    finish_sum(a, b);
  }
  /// sum() in two halves around other work: start_sum() sends this rank's shared rows, which must
  /// be whole by then (only the border elements, those touching a shared node, add to them);
  /// finish_sum() waits for the other ranks' and adds. The work between touches no shared row
  /// (the interior elements). One sum at a time.
  template <class View> void start_sum(const View &a, const View &b = View()) const {
    if (local_.neighbors.empty()) return;
    Kokkos::Profiling::ScopedRegion region("fegpu::parallel::start_sum");
    post(halo_kernels::components(a) + halo_kernels::components(b),
         [&] { halo_kernels::pack(a, b, send_nodes_, send_dev_, self_nodes_, combined_dev_); });
  }
  template <class View> void finish_sum(const View &a, const View &b = View()) const {
    if (local_.neighbors.empty()) return;
    Kokkos::Profiling::ScopedRegion region("fegpu::parallel::finish_sum");
    wait();
    halo_kernels::add(a, b, self_nodes_, from_offsets_, from_, combined_dev_);
  }

  /// The exchange follows a topology that changed (cohesive insertion): the first `owned` of this
  /// rank's nodes are its own, and it shares `shared.shared[k]` with rank
  /// `shared.neighbors[k]` (both sides in the same order). Its cost is the border's, not the
  /// rank's: the Nemesis part's neighbours and shared lists follow, its node and element lists
  /// stay the input's (a module whose topology changes writes its own,
  /// ExplicitIntegrator::output_part(), or gathers it, gather_mesh()).
  void follow(const SharedNodes &shared, Index owned);

  /// This rank's output file's Nemesis data.
  const ExodusPart &exodus_part() const { return part_; }
  /// Output gathered into one file by rank 0.
  bool gathers() const { return gather_; }
  /// The whole mesh (rank 0, gathering).
  const HostMesh &global_mesh() const { return global_; }
  /// A frame's fields (nodal: one value per local node; element: one per local element) become on
  /// rank 0 the whole mesh's, in its order (owned nodes give the values); empty elsewhere. Collective.
  void gather(std::vector<std::vector<double>> &nodal, std::vector<std::vector<double>> &element) const;
  /// Output gathered from a topology that changes (cohesive fracture): every rank's `part` (its
  /// nodes with their global ids, its own ones, [0, owned_nodes()), first; its elements, block by
  /// block, then those of its extra blocks, each element on one rank, with their global ids)
  /// becomes rank 0's whole mesh, returned there (empty elsewhere): the nodes in global-id order,
  /// each block's elements in global-id order, the sets' members mapped. gather() then places
  /// the fields of such parts there (element fields: the part's elements, then its extra
  /// blocks'). Collective.
  HostMesh gather_mesh(const HostMesh &part) const;

private:
  /// The plan of the exchange from local_'s neighbours and shared lists.
  void plan();
  /// Sizes the buffers for nc components, posts the receives, runs `pack` (into the device
  /// buffers), copies the rows to send to the host, waits for the device and starts the sends.
  void post(int nc, const std::function<void()> &pack) const;
  /// Waits for every message post() started and copies the rows received to the device (in the
  /// stream: the add that reads them follows it there).
  void wait() const;

  const Comm &comm_;
  LocalMesh local_;
  PartitionStats stats_;
  ExodusPart part_;
  bool gather_ = false, overlap_ = true;
  std::vector<char> shared_flags_;
  HostMesh global_; ///< rank 0, gathering
  /// rank 0: every rank's owned nodes' and elements' places in the gathered mesh, in turn (set
  /// again by gather_mesh()), and that mesh's sizes; this rank's elements in a frame.
  mutable std::vector<long> gathered_nodes_, gathered_elems_;
  mutable long gathered_node_total_ = 0, gathered_elem_total_ = 0;
  mutable std::size_t elems_here_ = 0;

  IndexView send_nodes_;          // (entry): the local node of each entry sent, neighbour after neighbour
  IndexView self_nodes_;          // (shared node): the nodes other ranks hold too, ascending
  IndexView from_offsets_, from_; // (shared node + 1), (term): entries of combined_ to add, in rank order
  // Their storage, and the buffers', kept when the plan follows a topology (after every insertion
  // of a fracture run): a GPU allocation and free each time cost more than the plan.
  Growing<Index> plan_store_{"fegpu::parallel::exchange_lists"}; // the four views above, one after the other
  std::vector<int> offsets_;                 // (neighbour + 1): its first entry in send_ and among those received
  mutable PinnedView send_;                  // (entry * nc + c)
  mutable PinnedView combined_;              // (entry * nc + c): this rank's shared rows, then each neighbour's
  mutable RealView send_dev_, combined_dev_; // the same on the device (the same Views on a CPU)
  mutable int sum_nc_ = 0;                   // components of the sum under way
  struct Requests;                           // the messages of the sum under way (MPI's requests)
  mutable std::unique_ptr<Requests> requests_;
  Exchange exchange_ = Exchange::Staged;
  struct Device;                   // NCCL's communicator, its stream and the events that order it
  std::unique_ptr<Device> device_; // (the NCCL exchange only)
};

/// The node nearest `point` (loads and probes placed at a point): on one rank (`parts` null)
/// fegpu::nearest_node; on many, among every rank's own nodes, the lowest global position among
/// equals (the node one rank would pick), its local index on the rank that owns it and -1
/// elsewhere (collective).
Index nearest_node(const Decomposition *parts, const CoordView &coords, const std::array<double, 3> &point);

} // namespace fegpu::parallel
