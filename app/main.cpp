/// \file main.cpp
/// fegpu-kk input.yaml [--output-dir DIR] [--check] [--quiet] [--profile] [kokkos options]
/// Exit status: 0 success, 1 usage error, 2 bad input, 3 the run failed, 128 + N stopped by signal N
/// (SIGINT 130, SIGTERM 143) after a step, its output complete to that step. Under mpirun every
/// rank ends with the same status, and one message says why.
#include "fegpu/core/error.hpp"
#include "fegpu/core/module.hpp"
#include "fegpu/input/input.hpp"
#include "fegpu/parallel/comm.hpp"
#include "fegpu/parallel/halo.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <malloc.h>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

constexpr int kUsage = 1, kBadInput = 2, kRunFailed = 3;

void print_help() {
  std::printf("usage: fegpu-kk INPUT.yaml [--output-dir DIR] [--check] [--quiet] [--profile]\n"
              "                [--max-steps N] [--restart FILE] [--kokkos-... options]\n"
              "       fegpu-kk --help | --version\n\n"
              "Runs the finite-element simulation that INPUT.yaml describes and writes Exodus II output.\n"
              "  --output-dir DIR  where output files go (default: the current folder)\n"
              "  --check           validate the input (including the mesh) and exit\n"
              "  --quiet           print nothing but errors\n"
              "  --profile         time the phases inside each step too (fences the device at each)\n"
              "  --max-steps N     stop an explicit run after N steps (as time.max_steps)\n"
              "  --restart FILE    continue from a checkpoint (output: checkpoint:) of this input\n"
              "  --kokkos-help     Kokkos' own options (threads, device, tools)\n\n"
              "Physics modules:\n");
  for (const auto &m : fegpu::ModuleRegistry::instance().modules())
    std::printf("  %-22s %s\n", m.name.c_str(), m.description.c_str());
  std::printf("\nExit status: 0 success, 1 usage, 2 bad input, 3 the run failed, 130 / 143 stopped by SIGINT /\n"
              "SIGTERM (the output complete to the last step taken).\n");
}

void print_version() {
  std::printf("fegpu-kk %s\n", FEGPU_VERSION);
  std::printf("Kokkos %d.%d.%d\n", KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100);
  std::printf("execution space: %s\n", Kokkos::DefaultExecutionSpace::name());
  std::printf("backends:");
#ifdef KOKKOS_ENABLE_CUDA
  std::printf(" Cuda");
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  std::printf(" OpenMP");
#endif
#ifdef KOKKOS_ENABLE_THREADS
  std::printf(" Threads");
#endif
#ifdef KOKKOS_ENABLE_SERIAL
  std::printf(" Serial");
#endif
  std::printf("\n");
#ifdef KOKKOS_ENABLE_CUDA
  cudaDeviceProp prop;
  int dev = 0;
  if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
    std::printf("device: %s (compute capability %d.%d)\n", prop.name, prop.major, prop.minor);
  else
    std::printf("device: none found\n");
#else
  std::printf("device: host (%d threads)\n", Kokkos::DefaultExecutionSpace().concurrency());
#endif
#ifdef FEGPU_HAVE_KOKKOSKERNELS
  std::printf("KokkosKernels: yes\n");
#else
  std::printf("KokkosKernels: no\n");
#endif
  std::printf("MPI: %s\n", fegpu::parallel::Comm::library().c_str());
  if (fegpu::parallel::Comm::library() != "no")
    std::printf("exchange between ranks: %s\n", fegpu::parallel::exchange_library().c_str());
}

struct Failure {
  int status = 0;
  std::string message;
  bool every_rank = false; ///< every rank failed alike (InputError::every_rank)
};

Failure failure_of(const std::exception_ptr &error) {
  try {
    std::rethrow_exception(error);
  } catch (const fegpu::InputError &e) {
    return {kBadInput, std::string("error: ") + e.what(), e.every_rank};
  } catch (const fegpu::Stopped &e) {
    return {128 + e.signal(), e.what(), true}; // the ranks agree on stopping (explicit_driver.cpp)
  } catch (const fegpu::RunError &e) {
    return {kRunFailed, std::string("run failed: ") + e.what(), e.every_rank};
  } catch (const std::exception &e) {
    return {kRunFailed, std::string("run failed: ") + e.what(), false};
  }
}

/// Says why and gives the exit status. On many ranks, where every rank failed alike rank 0 alone
/// speaks; a failure of one rank, which the others may be waiting for, ends them all with its
/// status (MPI_Abort: mpirun exits with it).
int fail(const Failure &f) {
  const fegpu::parallel::Comm &comm = fegpu::parallel::world();
  if (comm.size() == 1 || f.every_rank) {
    if (comm.root()) std::fprintf(stderr, "fegpu-kk: %s\n", f.message.c_str());
    return f.status;
  }
  std::fprintf(stderr, "fegpu-kk: rank %d of %d: %s\n", comm.rank(), comm.size(), f.message.c_str());
  fegpu::parallel::Comm::abort(f.status);
}

/// Reading the input, which every rank does alike: the lowest rank that failed (all of them,
/// usually) speaks, and every rank returns the highest status. Collective.
int agree(const Failure &mine) {
  const fegpu::parallel::Comm &comm = fegpu::parallel::world();
  if (comm.size() == 1) return mine.status ? fail(mine) : 0;
  const int first = static_cast<int>(comm.min(mine.status ? double(comm.rank()) : double(comm.size())));
  if (first == comm.size()) return 0;
  if (comm.rank() == first) std::fprintf(stderr, "fegpu-kk: %s\n", mine.message.c_str());
  return static_cast<int>(comm.max(long(mine.status)));
}

int run(int argc, char **argv) {
  // Every rank reads the same command line: rank 0 alone says what is wrong with it.
  const auto usage_error = [](const std::string &message) {
    if (fegpu::parallel::world().root()) std::fprintf(stderr, "fegpu-kk: %s\n", message.c_str());
  };
  std::string input;
  fegpu::RunOptions opts;
  bool check = false, version = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--version")
      version = true;
    else if (a == "--check")
      check = true;
    else if (a == "--quiet" || a == "-q")
      opts.quiet = true;
    else if (a == "--profile")
      opts.profile = true;
    else if (a == "--max-steps" || a.rfind("--max-steps=", 0) == 0) {
      const std::string v = a.size() > 11 ? a.substr(12) : (i + 1 < argc ? argv[++i] : "");
      char *end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n <= 0) {
        usage_error("--max-steps needs a positive whole number, not '" + v + "'");
        return kUsage;
      }
      opts.max_steps = n;
    } else if (a == "--restart" || a.rfind("--restart=", 0) == 0) {
      if (a == "--restart" && i + 1 >= argc) {
        usage_error("--restart needs a checkpoint file");
        return kUsage;
      }
      opts.restart = a == "--restart" ? argv[++i] : a.substr(10);
    } else if (a == "--output-dir") {
      if (i + 1 >= argc) {
        usage_error("--output-dir needs a folder");
        return kUsage;
      }
      opts.output_dir = argv[++i];
    } else if (a.rfind("--output-dir=", 0) == 0)
      opts.output_dir = a.substr(13);
    else if (a.size() > 1 && a[0] == '-') {
      usage_error("unknown option '" + a + "' (see --help)");
      return kUsage;
    } else if (input.empty())
      input = a;
    else {
      usage_error("more than one input file given ('" + input + "', '" + a + "')");
      return kUsage;
    }
  }
  if (version) {
    print_version();
    return 0;
  }
  if (input.empty()) {
    usage_error("no input file (see --help)");
    return kUsage;
  }
  opts.input_file = input;
  const fegpu::parallel::Comm &comm = fegpu::parallel::world();
  opts.progress = !opts.quiet && comm.root() && isatty(STDERR_FILENO);

  std::optional<fegpu::Input> in;
  std::unique_ptr<fegpu::Simulation> sim;
  Failure parsed;
  try {
    in = fegpu::Input::from_file(input);
    const fegpu::InputNode root = in->root();
    const fegpu::InputNode physics = root.child("physics");
    const auto &module = fegpu::ModuleRegistry::instance().find(physics.as<std::string>(), physics);
    if (comm.size() > 1 && module.ranks == fegpu::Ranks::One) {
      std::string many;
      for (const auto &m : fegpu::ModuleRegistry::instance().modules())
        if (m.ranks == fegpu::Ranks::Many) many += (many.empty() ? "" : ", ") + m.name;
      physics.error(module.name + " runs on one rank (this run has " + std::to_string(comm.size()) +
                    "); on many: " + many);
    }
    sim = module.factory(root, opts);
    in->check_unused();
  } catch (...) {
    parsed = failure_of(std::current_exception());
  }
  if (const int status = agree(parsed)) return status;
  bool made_output_dir = false;
  try {
    sim->setup();
    if (check) {
      if (!opts.quiet) std::printf("%s: input is valid\n", input.c_str());
      return 0;
    }
    fegpu::stop_after_step(); // output begins: a signal now stops the run after its step, output whole
    if (!std::filesystem::is_directory(opts.output_dir)) {
      std::error_code ec;
      std::filesystem::create_directories(opts.output_dir, ec);
      if (ec && !std::filesystem::is_directory(opts.output_dir)) // (another rank's may have made it)
        throw fegpu::InputError("cannot create output folder '" + opts.output_dir + "': " + ec.message());
      made_output_dir = !ec;
    }
    sim->run();
  } catch (...) {
    const Failure f = failure_of(std::current_exception());
    // Bad input found once the run began (a checkpoint's Exodus file, a format that cannot hold the
    // mesh) leaves nothing behind: not even the folder made for it, where it is still empty.
    std::error_code ec;
    if (made_output_dir && f.status == kBadInput && std::filesystem::is_empty(opts.output_dir, ec))
      std::filesystem::remove(opts.output_dir, ec);
    return fail(f);
  }
  return 0;
}

/// Kokkos' thread count, checked before Kokkos sees it: Kokkos aborts on a word or zero and
/// crashed on 1,000 threads of a 2-core machine. Returns false (after the message) if bad.
bool thread_count_is_sane(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    for (const std::string flag : {"--kokkos-num-threads", "--kokkos-threads"}) {
      if (a != flag && a.rfind(flag + "=", 0) != 0) continue;
      const std::string v = a.size() > flag.size() ? a.substr(flag.size() + 1) : (i + 1 < argc ? argv[i + 1] : "");
      char *end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      const long most = std::max(1u, std::thread::hardware_concurrency());
      if (v.empty() || *end != '\0' || n < 1 || n > most) {
        if (fegpu::parallel::world().root())
          std::fprintf(stderr,
                       "fegpu-kk: %s wants a whole number of threads from 1 to %ld (this machine's), not '%s'\n",
                       flag.c_str(), most, v.c_str());
        return false;
      }
    }
  }
  return true;
}

} // namespace

/// MPI for the program's life, started before Kokkos and ended after it.
struct MpiGuard {
  MpiGuard(int &argc, char **&argv) { fegpu::parallel::Comm::init(argc, argv); }
  ~MpiGuard() { fegpu::parallel::Comm::finalize(); }
};

int main(int argc, char **argv) {
  // Host arrays of up to 32 MB (output frames, meshes of new output files, host mirrors) come from
  // the heap, which keeps freed pages: a run that builds them again and again reuses pages already
  // mapped. By default glibc maps each array over 128 kB afresh and unmaps it when freed, so every
  // frame and mesh faults its pages in again (on the GPU machine, a virtual machine, the PMMA
  // example's meshes of new output files took 10.9 ms each).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  fegpu::catch_stop_signals(); // from the start: a stop during set-up ends it at once
  // --help needs no device, and Kokkos would answer it first with its own options' page.
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      print_help();
      return 0;
    }
  MpiGuard mpi(argc, argv);
  if (fegpu::parallel::world().size() > 1) fegpu::catch_stop_signals(false);
  if (!thread_count_is_sane(argc, argv)) return kUsage;
  // Lines reach a log as they are printed, also when the run is killed. Rank 0 alone prints
  // (progress, summaries); every rank's errors reach stderr.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (!fegpu::parallel::world().root() && !std::freopen("/dev/null", "w", stdout)) return kRunFailed;
  // Kokkos takes its own --kokkos-* options out of argv; with many ranks on a node, it gives each
  // rank a GPU of its own by its local rank (Kokkos' default --kokkos-map-device-id-by=mpi_rank).
  Kokkos::ScopeGuard kokkos(argc, argv);
  return run(argc, argv);
}
