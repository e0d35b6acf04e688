/// \file main.cpp
/// fegpu-kk input.yaml [--output-dir DIR] [--check] [--quiet] [--profile] [kokkos options]
/// Exit status: 0 success, 1 usage error, 2 bad input, 3 the run failed, 128 + N stopped by signal N
/// (SIGINT 130, SIGTERM 143) after a step, its output complete to that step.
#include "fegpu/core/error.hpp"
#include "fegpu/core/module.hpp"
#include "fegpu/input/input.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
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
}

int run(int argc, char **argv) {
  std::string input;
  fegpu::RunOptions opts;
  bool check = false, help = false, version = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h")
      help = true;
    else if (a == "--version")
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
        std::fprintf(stderr, "fegpu-kk: --max-steps needs a positive whole number, not '%s'\n", v.c_str());
        return kUsage;
      }
      opts.max_steps = n;
    } else if (a == "--restart" || a.rfind("--restart=", 0) == 0) {
      if (a == "--restart" && i + 1 >= argc) {
        std::fprintf(stderr, "fegpu-kk: --restart needs a checkpoint file\n");
        return kUsage;
      }
      opts.restart = a == "--restart" ? argv[++i] : a.substr(10);
    } else if (a == "--output-dir") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "fegpu-kk: --output-dir needs a folder\n");
        return kUsage;
      }
      opts.output_dir = argv[++i];
    } else if (a.rfind("--output-dir=", 0) == 0)
      opts.output_dir = a.substr(13);
    else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "fegpu-kk: unknown option '%s' (see --help)\n", a.c_str());
      return kUsage;
    } else if (input.empty())
      input = a;
    else {
      std::fprintf(stderr, "fegpu-kk: more than one input file given ('%s', '%s')\n", input.c_str(), a.c_str());
      return kUsage;
    }
  }
  if (help) {
    print_help();
    return 0;
  }
  if (version) {
    print_version();
    return 0;
  }
  if (input.empty()) {
    std::fprintf(stderr, "fegpu-kk: no input file (see --help)\n");
    return kUsage;
  }
  opts.input_file = input;
  opts.progress = !opts.quiet && isatty(STDERR_FILENO);

  try {
    const fegpu::Input in = fegpu::Input::from_file(input);
    const fegpu::InputNode root = in.root();
    const fegpu::InputNode physics = root.child("physics");
    const auto &module = fegpu::ModuleRegistry::instance().find(physics.as<std::string>(), physics);
    auto sim = module.factory(root, opts);
    in.check_unused();
    sim->setup();
    if (check) {
      if (!opts.quiet) std::printf("%s: input is valid\n", input.c_str());
      return 0;
    }
    if (!std::filesystem::is_directory(opts.output_dir)) {
      std::error_code ec;
      std::filesystem::create_directories(opts.output_dir, ec);
      if (ec) throw fegpu::InputError("cannot create output folder '" + opts.output_dir + "': " + ec.message());
    }
    sim->run();
  } catch (const fegpu::InputError &e) {
    std::fprintf(stderr, "fegpu-kk: error: %s\n", e.what());
    return kBadInput;
  } catch (const fegpu::Stopped &e) {
    std::fprintf(stderr, "fegpu-kk: %s\n", e.what());
    return 128 + e.signal();
  } catch (const fegpu::RunError &e) {
    std::fprintf(stderr, "fegpu-kk: run failed: %s\n", e.what());
    return kRunFailed;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "fegpu-kk: run failed: %s\n", e.what());
    return kRunFailed;
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
        std::fprintf(stderr, "fegpu-kk: %s wants a whole number of threads from 1 to %ld (this machine's), not '%s'\n",
                     flag.c_str(), most, v.c_str());
        return false;
      }
    }
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (!thread_count_is_sane(argc, argv)) return kUsage;
  // Lines reach a log as they are printed, also when the run is killed.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // Kokkos takes its own --kokkos-* options out of argv.
  Kokkos::ScopeGuard kokkos(argc, argv);
  fegpu::catch_stop_signals();
  return run(argc, argv);
}
