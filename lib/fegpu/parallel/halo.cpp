#include "fegpu/parallel/halo.hpp"

#include "fegpu/core/error.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <tuple>
#include <unistd.h>
#include <utility>

#ifdef FEGPU_HAVE_MPI
#include <mpi.h>
#endif
#ifdef FEGPU_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

namespace fegpu::parallel {

#ifdef FEGPU_HAVE_MPI
struct Decomposition::Requests {
  std::vector<MPI_Request> pending;
};
#else
struct Decomposition::Requests {};
#endif

bool have_nccl() {
#ifdef FEGPU_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

std::string exchange_name(Exchange e) { return e == Exchange::Nccl ? "nccl" : "staged"; }

std::string exchange_library() {
#ifdef FEGPU_HAVE_NCCL
  int v = 0;
  ncclGetVersion(&v);
  return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100) +
         ", GPU to GPU where every rank has a GPU of its own (else, or with solver: {exchange: staged}, staged "
         "through host memory)";
#else
  return "staged through host memory (a CUDA build that finds NCCL exchanges GPU to GPU)";
#endif
}

#ifdef FEGPU_HAVE_NCCL
/// The NCCL exchange's own: a communicator over the ranks' GPUs (its unique id made by rank 0
/// and sent by MPI), a stream for its sends and receives, and the events that order them with
/// the force kernels' stream: after the pack, before the add.
struct Decomposition::Device {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t packed = nullptr, arrived = nullptr;
  ~Device() {
    if (comm) ncclCommDestroy(comm);
    if (packed) cudaEventDestroy(packed);
    if (arrived) cudaEventDestroy(arrived);
    if (stream) cudaStreamDestroy(stream);
  }
};

namespace {
void nccl_call(ncclResult_t r, const char *what) {
  if (r != ncclSuccess) throw RunError(std::string("NCCL ") + what + " failed: " + ncclGetErrorString(r));
}
void cuda_call(cudaError_t r, const char *what) {
  if (r != cudaSuccess) throw RunError(std::string("CUDA ") + what + " failed: " + cudaGetErrorString(r));
}
} // namespace
#else
struct Decomposition::Device {};
#endif

Decomposition::~Decomposition() = default;

Decomposition::Decomposition(const HostMesh &global, const Comm &comm, bool gather, bool overlap, Exchange exchange,
                             bool ghosts)
    : comm_(comm), gather_(gather), overlap_(overlap), requests_(std::make_unique<Requests>()), exchange_(exchange) {
  Kokkos::Profiling::ScopedRegion region("fegpu::parallel::decompose");
  // Every rank divides the mesh (so that an error in it is every rank's); rank 0's division is
  // the one used, should a machine of another kind have come to another.
  std::vector<int> part = partition_elements(global, comm.size());
  comm.broadcast(part, 0);
  stats_ = partition_stats(global, part, comm.size());
  for (int r = 0; r < comm.size(); ++r)
    if (stats_.elements[r] == 0) {
      RunError e("METIS left rank " + std::to_string(r) + " without elements: run on fewer ranks");
      e.every_rank = true;
      throw e;
    }
  local_ = local_part(global, part, comm.rank(), ghosts);
  plan();
  shared_flags_.assign(local_.mesh.xyz.size() / 3, 0);
  for (const auto &list : local_.shared)
    for (Index n : list)
      shared_flags_[n] = 1;

#ifdef FEGPU_HAVE_NCCL
  if (exchange_ != Exchange::Staged) { // NCCL joins ranks of distinct GPUs only
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    const long here = long(std::hash<std::string>()(host) & 0x3fffffffffffffffL);
    const auto gpus = comm.all_gather({here, long(ExecSpace().cuda_device())});
    int shared_with = -1;
    for (int r = 0; r < comm.size() && shared_with < 0; ++r)
      if (r != comm.rank() && gpus[r] == gpus[comm.rank()]) shared_with = r;
    const bool distinct = comm.max(long(shared_with >= 0)) == 0;
    if (!distinct && exchange_ == Exchange::Nccl) {
      InputError e("solver: exchange: nccl needs a GPU a rank, and ranks share a GPU here (" +
                   std::to_string(comm.size()) + " ranks); use solver: {exchange: staged}");
      e.every_rank = true;
      throw e;
    }
    exchange_ = distinct ? Exchange::Nccl : Exchange::Staged;
  }
  if (exchange_ == Exchange::Nccl) { // collective: every rank makes it, neighbours or not
    device_ = std::make_unique<Device>();
    ncclUniqueId id;
    if (comm.root()) nccl_call(ncclGetUniqueId(&id), "ncclGetUniqueId");
    std::vector<int> bytes((sizeof id + sizeof(int) - 1) / sizeof(int), 0);
    std::memcpy(bytes.data(), &id, sizeof id);
    comm.broadcast(bytes, 0);
    std::memcpy(&id, bytes.data(), sizeof id);
    nccl_call(ncclCommInitRank(&device_->comm, comm.size(), id, comm.rank()), "ncclCommInitRank");
    cuda_call(cudaStreamCreateWithFlags(&device_->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    cuda_call(cudaEventCreateWithFlags(&device_->packed, cudaEventDisableTiming), "cudaEventCreate");
    cuda_call(cudaEventCreateWithFlags(&device_->arrived, cudaEventDisableTiming), "cudaEventCreate");
  }
#else
  FEGPU_CHECK(exchange_ != Exchange::Nccl, "the NCCL exchange in a build without NCCL");
  exchange_ = Exchange::Staged;
#endif

  // Output: this rank's Nemesis data; the positions rank 0 gathers into.
  ExodusPart &p = part_;
  p.rank = comm.rank(), p.ranks = comm.size();
  p.global_nodes = static_cast<long>(global.xyz.size() / 3);
  p.global_elems = static_cast<long>(part.size());
  for (const auto &b : global.blocks)
    p.block_ids.push_back(b.id), p.block_sizes.push_back(b.end - b.begin);
  for (const auto &s : global.node_sets)
    p.node_set_ids.push_back(s.id), p.node_set_sizes.push_back(static_cast<long>(s.a.size()));
  for (const auto &s : global.side_sets)
    p.side_set_ids.push_back(s.id), p.side_set_sizes.push_back(static_cast<long>(s.a.size()));
  for (std::size_t n = 0; n < shared_flags_.size(); ++n)
    (shared_flags_[n] ? p.border_nodes : p.internal_nodes).push_back(static_cast<Index>(n));
  const std::vector<char> touches = elements_touching(local_.mesh, shared_flags_);
  for (std::size_t e = 0; e < touches.size(); ++e)
    (touches[e] ? p.border_elems : p.internal_elems).push_back(static_cast<Index>(e));
  if (gather_) {
    if (comm.root()) global_ = global;
    gathered_nodes_ =
        comm.gather(std::vector<long>(local_.node_index.begin(), local_.node_index.begin() + local_.owned_nodes));
    gathered_elems_ = comm.gather(local_.elem_index);
    gathered_node_total_ = p.global_nodes, gathered_elem_total_ = p.global_elems;
    elems_here_ = local_.elem_index.size();
  }
}

void Decomposition::plan() {
  // Entries sent to each neighbour (its shared nodes, in the order both sides list them), this
  // rank's shared nodes, and for each of those the entries to add, in rank order.
  std::vector<Index> send, self;
  offsets_.assign(1, 0);
  for (const auto &s : local_.shared) {
    send.insert(send.end(), s.begin(), s.end());
    offsets_.push_back(static_cast<int>(send.size()));
  }
  self = send;
  std::sort(self.begin(), self.end());
  self.erase(std::unique(self.begin(), self.end()), self.end());
  const Index ns = static_cast<Index>(self.size());
  std::vector<Index> slot(send.size()); // (sent entry): its node's place in self
  for (std::size_t e = 0; e < send.size(); ++e)
    slot[e] = static_cast<Index>(std::lower_bound(self.begin(), self.end(), send[e]) - self.begin());
  // A shared node's terms: its own entry and one a neighbour that lists it (entry ns + e of
  // combined_ for sent entry e, as received). Placed rank after rank (the neighbours ascend, this
  // rank among them), each node's terms come in rank order with no sort.
  std::vector<Index> from_offsets(ns + 1, 1), from;
  from_offsets[0] = 0;
  for (Index s : slot)
    ++from_offsets[s + 1];
  std::partial_sum(from_offsets.begin(), from_offsets.end(), from_offsets.begin());
  from.resize(static_cast<std::size_t>(from_offsets.back()));
  std::vector<Index> next(from_offsets.begin(), from_offsets.end() - 1);
  const auto own_terms = [&] {
    for (Index j = 0; j < ns; ++j)
      from[next[j]++] = j;
  };
  bool own_placed = false;
  for (std::size_t k = 0; k < local_.neighbors.size(); ++k) {
    if (!own_placed && local_.neighbors[k] > comm_.rank()) own_terms(), own_placed = true;
    for (int e = offsets_[k]; e < offsets_[k + 1]; ++e)
      from[next[slot[e]]++] = ns + e;
  }
  if (!own_placed) own_terms();
  // The four lists in one upload (on a GPU each copy from the host is a wait; a cracking run plans
  // again after every insertion), then each a view into it.
  std::vector<Index> all;
  Index at[5] = {0}; // where each list begins in `all`, and its end
  int listed = 0;
  for (const std::vector<Index> *v : {&send, &self, &from_offsets, &from}) {
    all.insert(all.end(), v->begin(), v->end());
    at[++listed] = static_cast<Index>(all.size());
  }
  const IndexView lists = plan_store_.view(at[4]);
  Kokkos::deep_copy(lists, Kokkos::View<const Index *, Kokkos::HostSpace>(all.data(), all.size()));
  const auto list = [&](int k) { return IndexView(lists.data() + at[k], at[k + 1] - at[k]); }; // (as Growing's)
  send_nodes_ = list(0);
  self_nodes_ = list(1);
  from_offsets_ = list(2);
  from_ = list(3); // (the buffers grow at the next sum if they must)
  part_.neighbors = local_.neighbors;
  part_.shared = local_.shared;
}

void Decomposition::follow(const SharedNodes &shared, Index owned) {
  Kokkos::Profiling::ScopedRegion region("fegpu::parallel::follow");
  local_.neighbors = shared.neighbors;
  local_.shared = shared.shared;
  local_.owned_nodes = owned;
  plan();
}

Index nearest_node(const Decomposition *parts, const CoordView &coords, const std::array<double, 3> &point) {
  if (!parts) return fegpu::nearest_node(coords, point);
  const Index n = fegpu::nearest_node(coords, point, parts->owned_nodes());
  const std::vector<double> x = row_to_host(coords, n);
  double d = 0; // as fegpu::nearest_node() measures it
  for (int k = 0; k < 3; ++k)
    d += (x[k] - point[k]) * (x[k] - point[k]);
  const parallel::Comm &comm = parts->comm();
  const double at = d == comm.min(d) ? double(parts->node_index(n)) : 1e300;
  return at == comm.min(at) ? n : -1;
}

void Decomposition::gather(std::vector<std::vector<double>> &nodal, std::vector<std::vector<double>> &element) const {
  FEGPU_CHECK(gather_, "gather() of a decomposition made without gathering");
  const auto collect = [&](std::vector<double> &v, const std::vector<long> &at, std::size_t total, std::size_t mine) {
    v.resize(mine);
    const std::vector<double> all = comm_.gather(v);
    v.clear();
    if (!comm_.root()) return;
    v.assign(total, 0.0);
    for (std::size_t i = 0; i < all.size(); ++i)
      v[at[i]] = all[i];
  };
  for (auto &v : nodal)
    collect(v, gathered_nodes_, gathered_node_total_, local_.owned_nodes); // owned nodes come first
  for (auto &v : element)
    collect(v, gathered_elems_, gathered_elem_total_, elems_here_);
}

HostMesh Decomposition::gather_mesh(const HostMesh &part) const {
  FEGPU_CHECK(gather_, "gather_mesh() of a decomposition made without gathering");
  const int npe = element_info(part.type).nodes;
  const std::size_t owned = static_cast<std::size_t>(local_.owned_nodes), ne = part.conn.size() / npe;
  FEGPU_CHECK(part.node_gid.size() >= owned && part.elem_gid.size() >= ne, "gather_mesh: a part without its ids");
  // Sizes first (owned nodes, each block's and extra block's elements, each node set's owned
  // members, each side set's entries), then the ids: nodes, elements, their nodes, the sets'.
  std::vector<long> sizes = {long(owned)}, ids(part.node_gid.begin(), part.node_gid.begin() + owned);
  for (const auto &b : part.blocks)
    sizes.push_back(b.end - b.begin);
  for (const auto &b : part.extra_blocks)
    sizes.push_back(long(b.size()));
  for (std::size_t e = 0; e < ne; ++e) {
    ids.push_back(part.elem_gid[e]);
    for (int k = 0; k < npe; ++k)
      ids.push_back(part.node_gid[part.conn[e * npe + k]]);
  }
  std::size_t at = ne; // (the extra blocks' elements follow the main ones in elem_gid)
  for (const auto &b : part.extra_blocks)
    for (std::size_t e = 0; e < b.size(); ++e, ++at) {
      ids.push_back(part.elem_gid[at]);
      for (int k = 0; k < b.nodes_per_elem; ++k)
        ids.push_back(part.node_gid[b.conn[e * b.nodes_per_elem + k]]);
    }
  for (const auto &set : part.node_sets) {
    long count = 0;
    for (Index n : set.a)
      if (std::size_t(n) < owned) ids.push_back(part.node_gid[n]), ++count;
    sizes.push_back(count);
  }
  for (const auto &set : part.side_sets) {
    sizes.push_back(long(set.a.size()));
    for (std::size_t i = 0; i < set.a.size(); ++i)
      ids.push_back(part.elem_gid[set.a[i]]), ids.push_back(set.b[i]);
  }
  elems_here_ = at;
  const std::vector<double> xyz(part.xyz.begin(), part.xyz.begin() + 3 * owned);
  const std::vector<long> all_sizes = comm_.gather(sizes), all_ids = comm_.gather(ids);
  const std::vector<double> all_xyz = comm_.gather(xyz);
  HostMesh whole;
  if (!comm_.root()) return whole;
  // Each rank's parts, read in turn: (id, rank's entry) pairs, then sorted by id.
  const int ranks = comm_.size(), nb = int(part.blocks.size()), nx = int(part.extra_blocks.size());
  const std::size_t per = sizes.size();
  std::vector<std::pair<GlobalId, long>> nodes;                                     // (id, entry in rank order)
  std::vector<std::vector<std::tuple<GlobalId, long, std::size_t>>> elems(nb + nx); // (id, entry, where its nodes are)
  std::vector<std::vector<GlobalId>> set_nodes(part.node_sets.size());
  std::vector<std::vector<std::pair<GlobalId, Index>>> set_sides(part.side_sets.size());
  long node_entry = 0, elem_entry = 0;
  std::size_t i = 0;
  for (int r = 0; r < ranks; ++r) {
    const long *sz = all_sizes.data() + r * per;
    for (long k = 0; k < sz[0]; ++k)
      nodes.push_back({all_ids[i++], node_entry++});
    for (int b = 0; b < nb + nx; ++b) {
      const int nodes_per = b < nb ? npe : part.extra_blocks[b - nb].nodes_per_elem;
      for (long k = 0; k < sz[1 + b]; ++k, i += 1 + nodes_per)
        elems[b].push_back({all_ids[i], elem_entry++, i + 1});
    }
    for (std::size_t s = 0; s < set_nodes.size(); ++s)
      for (long k = 0; k < sz[1 + nb + nx + s]; ++k)
        set_nodes[s].push_back(all_ids[i++]);
    for (std::size_t s = 0; s < set_sides.size(); ++s)
      for (long k = 0; k < sz[1 + nb + nx + set_nodes.size() + s]; ++k, i += 2)
        set_sides[s].push_back({all_ids[i], Index(all_ids[i + 1])});
  }
  std::sort(nodes.begin(), nodes.end());
  gathered_nodes_.assign(nodes.size(), 0);
  whole.type = part.type, whole.dim = part.dim, whole.source = part.source;
  whole.xyz.resize(3 * nodes.size());
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    whole.node_gid.push_back(nodes[n].first);
    gathered_nodes_[nodes[n].second] = long(n);
    for (int c = 0; c < 3; ++c)
      whole.xyz[3 * n + c] = all_xyz[3 * nodes[n].second + c];
  }
  const auto node_of = [&](GlobalId id) {
    const auto it = std::lower_bound(nodes.begin(), nodes.end(), std::pair<GlobalId, long>(id, -1));
    FEGPU_CHECK(it != nodes.end() && it->first == id, "gather_mesh: an element's node that no rank owns");
    return Index(it - nodes.begin());
  };
  gathered_elems_.assign(std::size_t(elem_entry), 0);
  std::vector<std::pair<GlobalId, Index>> elem_of; // (id, place) of the main blocks' elements
  Index place = 0;
  for (int b = 0; b < nb + nx; ++b) {
    std::sort(elems[b].begin(), elems[b].end());
    std::vector<Index> &conn = b < nb ? whole.conn : whole.extra_blocks.emplace_back(part.extra_blocks[b - nb]).conn;
    if (b >= nb) conn.clear();
    if (b < nb) whole.blocks.push_back({part.blocks[b].name, part.blocks[b].id, place, place + Index(elems[b].size())});
    const int nodes_per = b < nb ? npe : part.extra_blocks[b - nb].nodes_per_elem;
    for (const auto &[id, entry, first] : elems[b]) {
      gathered_elems_[entry] = place;
      whole.elem_gid.push_back(id);
      if (b < nb) elem_of.push_back({id, place});
      ++place;
      for (int k = 0; k < nodes_per; ++k)
        conn.push_back(node_of(all_ids[first + k]));
    }
  }
  std::sort(elem_of.begin(), elem_of.end());
  for (std::size_t s = 0; s < set_nodes.size(); ++s) {
    HostMesh::Set set{part.node_sets[s].name, part.node_sets[s].id, {}, {}};
    for (GlobalId id : set_nodes[s])
      set.a.push_back(node_of(id));
    std::sort(set.a.begin(), set.a.end());
    whole.node_sets.push_back(std::move(set));
  }
  for (std::size_t s = 0; s < set_sides.size(); ++s) {
    std::vector<std::pair<Index, Index>> sides;
    for (const auto &[id, side] : set_sides[s]) {
      const auto it = std::lower_bound(elem_of.begin(), elem_of.end(), std::pair<GlobalId, Index>(id, -1));
      FEGPU_CHECK(it != elem_of.end() && it->first == id, "gather_mesh: a side of an element no rank has");
      sides.push_back({it->second, side});
    }
    std::sort(sides.begin(), sides.end());
    HostMesh::Set set{part.side_sets[s].name, part.side_sets[s].id, {}, {}};
    for (const auto &[e, side] : sides)
      set.a.push_back(e), set.b.push_back(side);
    whole.side_sets.push_back(std::move(set));
  }
  gathered_node_total_ = long(nodes.size()), gathered_elem_total_ = long(place);
  return whole;
}

#ifdef FEGPU_HAVE_MPI

namespace {
/// A buffer's new size: what a sum needs, and a quarter more, so that a border growing with a
/// crack does not reallocate at every insertion.
std::size_t grown(std::size_t need) { return need + need / 4; }
} // namespace

void Decomposition::post(int nc, const std::function<void()> &pack) const {
  std::vector<MPI_Request> &requests = requests_->pending;
  FEGPU_CHECK(requests.empty(), "a sum over the ranks started while another was under way");
  sum_nc_ = nc;
  const std::size_t sent = send_nodes_.extent(0), own = self_nodes_.extent(0);
#ifdef FEGPU_HAVE_NCCL
  if (device_) { // GPU to GPU: the device buffers alone, no host memory and no host wait
    if (sent * nc > send_dev_.extent(0) || (own + sent) * nc > combined_dev_.extent(0)) {
      send_dev_ = RealView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::parallel::send"), grown(sent * nc));
      combined_dev_ = RealView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::parallel::received"),
                               grown((own + sent) * nc));
    }
    pack();
    const cudaStream_t kernels = ExecSpace().cuda_stream();
    cuda_call(cudaEventRecord(device_->packed, kernels), "cudaEventRecord");
    cuda_call(cudaStreamWaitEvent(device_->stream, device_->packed, 0), "cudaStreamWaitEvent");
    nccl_call(ncclGroupStart(), "ncclGroupStart");
    for (std::size_t i = 0; i < local_.neighbors.size(); ++i) {
      const std::size_t count = std::size_t(offsets_[i + 1] - offsets_[i]) * nc;
      nccl_call(ncclRecv(combined_dev_.data() + (own + offsets_[i]) * nc, count, ncclDouble, local_.neighbors[i],
                         device_->comm, device_->stream),
                "ncclRecv");
      nccl_call(ncclSend(send_dev_.data() + offsets_[i] * nc, count, ncclDouble, local_.neighbors[i], device_->comm,
                         device_->stream),
                "ncclSend");
    }
    nccl_call(ncclGroupEnd(), "ncclGroupEnd");
    cuda_call(cudaEventRecord(device_->arrived, device_->stream), "cudaEventRecord");
    return;
  }
#endif
  if (sent * nc > send_.extent(0) || (own + sent) * nc > combined_.extent(0)) {
    send_ = PinnedView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::parallel::send"), grown(sent * nc));
    combined_ = PinnedView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::parallel::received"),
                           grown((own + sent) * nc)); // as many received as sent: the lists are symmetric
    send_dev_ = Kokkos::create_mirror_view(Kokkos::WithoutInitializing, MemSpace(), send_);
    combined_dev_ = Kokkos::create_mirror_view(Kokkos::WithoutInitializing, MemSpace(), combined_);
  }
  const std::size_t k = local_.neighbors.size();
  requests.resize(2 * k);
  constexpr int tag = 7301;
  for (std::size_t i = 0; i < k; ++i)
    MPI_Irecv(combined_.data() + (own + offsets_[i]) * nc, (offsets_[i + 1] - offsets_[i]) * nc, MPI_DOUBLE,
              local_.neighbors[i], tag, MPI_COMM_WORLD, &requests[i]);
  pack();
  const auto part = [nc](const auto &v, std::size_t from, std::size_t to) {
    return Kokkos::subview(v, std::make_pair(from * nc, to * nc));
  };
  Kokkos::deep_copy(ExecSpace(), part(send_, 0, sent), part(send_dev_, 0, sent));
  ExecSpace().fence("fegpu::parallel::packed");
  for (std::size_t i = 0; i < k; ++i)
    MPI_Isend(send_.data() + offsets_[i] * nc, (offsets_[i + 1] - offsets_[i]) * nc, MPI_DOUBLE, local_.neighbors[i],
              tag, MPI_COMM_WORLD, &requests[k + i]);
}

void Decomposition::wait() const {
#ifdef FEGPU_HAVE_NCCL
  if (device_) { // the add, next in the kernels' stream, waits there for what arrived
    cuda_call(cudaStreamWaitEvent(ExecSpace().cuda_stream(), device_->arrived, 0), "cudaStreamWaitEvent");
    return;
  }
#endif
  std::vector<MPI_Request> &requests = requests_->pending;
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  requests.clear();
  // What arrived: the rows after this rank's own, at the components of this sum, which may be
  // fewer than the buffers are sized for (a fracture step sums areas, stresses and forces).
  const std::size_t own = self_nodes_.extent(0), sent = send_nodes_.extent(0);
  const auto received = std::make_pair(own * sum_nc_, (own + sent) * sum_nc_);
  Kokkos::deep_copy(ExecSpace(), Kokkos::subview(combined_dev_, received), Kokkos::subview(combined_, received));
}

#else

void Decomposition::post(int, const std::function<void()> &) const {
  FEGPU_CHECK(false, "an exchange between ranks in a build without MPI");
}
void Decomposition::wait() const {}

#endif

} // namespace fegpu::parallel
