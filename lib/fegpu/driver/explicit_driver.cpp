#include "fegpu/driver/explicit_driver.hpp"

#include "fegpu/core/error.hpp"
#include "fegpu/io/async_writer.hpp"
#include "fegpu/io/output_files.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <optional>

namespace fegpu {

bool EnergyReport::finite() const {
  for (const auto &t : terms)
    if (!std::isfinite(t.second)) return false;
  return std::isfinite(balance_error);
}

// The schedule's errors come from the input and the time step, which every rank knows alike.
Schedule::Schedule(const TimeConfig &time, double dt_crit) : dt_critical(dt_crit) {
  if (!(dt_crit > 0) || !std::isfinite(dt_crit)) {
    RunError e("no stable time step could be estimated");
    e.every_rank = true;
    throw e;
  }
  dt = time.dt > 0 ? time.dt : time.safety_factor * dt_crit;
  if (time.max_dt > 0) dt = std::min(dt, time.max_dt);
  // Land exactly on end_time with a uniform step no larger than the one chosen.
  const double n = std::ceil(time.end_time / dt - 1e-9);
  if (!(n <= 0x1p53)) { // step counts stay exact doubles and fit a long
    char msg[160];
    std::snprintf(msg, sizeof msg, "time: end_time / dt is %.3e steps, more than a run can count", n);
    InputError e(msg);
    e.every_rank = true;
    throw e;
  }
  dt = time.end_time / std::max(1.0, n);
  total = static_cast<long>(std::llround(time.end_time / dt));
  steps = time.max_steps > 0 ? std::min<long>(total, time.max_steps) : total;
}

namespace {

/// The energies, or RunError when they say the run blew up.
EnergyReport checked_energies(ExplicitIntegrator &in, const Schedule &s) {
  StepPhase phase("fegpu::driver::energies", "energies");
  EnergyReport e = in.energy_report();
  const bool finite = e.finite();
  // The balance says nothing after one step: a load raised from zero leaves every term at rounding
  // size there, and its relative error near 1 (a ramped traction stopped by --max-steps 1 failed).
  if (finite && (e.balance_error <= 0.5 || !in.balance_detects_blowup() || in.steps() <= 1)) return e;
  char msg[256];
  std::snprintf(msg, sizeof msg,
                "unstable: the solution became %s at step %ld (t = %.6e); the time step %.6e is %.2f times the "
                "estimated stability limit %.6e",
                finite ? "unbounded (energy balance error above 50%)" : "non-finite", in.steps(), in.time(), s.dt,
                s.dt / s.dt_critical, s.dt_critical);
  RunError error(msg);
  error.every_rank = true; // the energies are the sums over every rank
  throw error;
}

/// The output file: on many ranks, this rank's (name.N.r) unless rank 0 gathers the output.
std::string output_file(const RunOptions &opts, const OutputConfig &output, const parallel::Decomposition *parts) {
  const std::string path = opts.output_path(output.file);
  if (!parts || parts->gathers()) return path;
  return ExodusPart::file_name(path, parts->comm().rank(), parts->comm().size());
}

/// The globals of frames and histories: time_step, the energy terms, energy_error, the module's own.
std::vector<double> driver_globals(ExplicitIntegrator &in, const Schedule &s, const EnergyReport &e) {
  std::vector<double> g = {s.dt};
  for (const auto &t : e.terms)
    g.push_back(t.second);
  g.push_back(e.balance_error);
  std::vector<double> own;
  {
    StepPhase phase("fegpu::driver::globals", "globals");
    own = in.globals();
  }
  g.insert(g.end(), own.begin(), own.end());
  return g;
}

/// The names of driver_globals().
std::vector<std::string> driver_global_names(ExplicitIntegrator &in) {
  std::vector<std::string> names = {"time_step"};
  for (const auto &t : in.energy_report().terms)
    names.push_back(t.first);
  names.push_back("energy_error");
  const ExodusVariables vars = in.output_variables();
  names.insert(names.end(), vars.global.begin(), vars.global.end());
  return names;
}

/// The mesh the output starts with, and each file of a series after a topology change: this
/// rank's, or, with output gathered, rank 0's whole mesh (empty on the others): the input's, or
/// every rank's part gathered where the topology changes (collective then).
HostMesh output_mesh(ExplicitIntegrator &in) {
  const parallel::Decomposition *parts = in.decomposition();
  if (!parts || !parts->gathers()) return in.output_mesh();
  return in.topology_changes() ? parts->gather_mesh(in.output_mesh()) : parts->global_mesh();
}

/// One frame: the module's fields and the driver's globals, handed to the writer's thread (a
/// changed topology opens the series' next file). Every rank calls it; with output gathered, the
/// fields go to rank 0, the one rank with a writer, and a changed topology's mesh too (every rank
/// takes part where rank 0 opens a file).
void write_frame(AsyncExodusWriter *w, ExplicitIntegrator &in, const Schedule &s, const EnergyReport &e) {
  const parallel::Decomposition *parts = in.decomposition();
  const bool gathered = parts && parts->gathers();
  bool next_file = in.take_topology_change() && w && w->frames_in_file() > 0; // (the first file has the mesh)
  if (gathered && in.topology_changes()) {
    std::vector<int> rank0 = {next_file};
    parts->comm().broadcast(rank0, 0);
    next_file = rank0[0];
  }
  std::optional<HostMesh> next;
  std::optional<ExodusPart> part;
  if (next_file) { // before the fields: a gathered mesh places them
    StepPhase phase("fegpu::driver::output_mesh", "output_mesh");
    next = output_mesh(in);
    if (!gathered) part = in.output_part(*next);
  }
  OutputFrame f;
  if (w) w->take_spare(f.nodal, f.element);
  {
    StepPhase phase("fegpu::driver::output_fields", "output_fields");
    in.fill_output(f);
    if (gathered) parts->gather(f.nodal, f.element);
  }
  std::vector<double> globals = driver_globals(in, s, e);
  if (!w) return;
  w->write(in.time(), std::move(f.nodal), std::move(f.element), std::move(globals), std::move(next), std::move(part));
}

/// A history row: the time, the driver's globals, then the module's columns.
std::vector<double> history_row(ExplicitIntegrator &in, const Schedule &s, const EnergyReport &e) {
  std::vector<double> row = {in.time()};
  const std::vector<double> g = driver_globals(in, s, e);
  row.insert(row.end(), g.begin(), g.end());
  in.history_values(row);
  return row;
}

/// Runs `check`; on many ranks an InputError one rank finds of its own (its checkpoint's file)
/// becomes every rank's, the lowest such rank's message (InputError::every_rank: rank 0 says it,
/// every rank ends with exit 2). Collective.
template <class Check> void agree_on_input_errors(Check &&check) {
  const parallel::Comm &comm = parallel::world();
  if (comm.size() == 1) return check();
  std::string mine;
  bool failed = false;
  try {
    check();
  } catch (const InputError &e) {
    mine = e.what(), failed = true;
  }
  const int first = static_cast<int>(comm.min(failed ? double(comm.rank()) : double(comm.size())));
  if (first == comm.size()) return;
  std::vector<int> text(mine.begin(), mine.end()), length = {int(mine.size())};
  comm.broadcast(length, first);
  text.resize(std::size_t(length[0]));
  comm.broadcast(text, first);
  InputError e(first == 0 ? std::string(text.begin(), text.end())
                          : "rank " + std::to_string(first) + ": " + std::string(text.begin(), text.end()));
  e.every_rank = true;
  throw e;
}

/// This rank's file of a checkpoint: on many ranks `path` with the rank's suffix (name.N.r).
std::string rank_file(const std::string &path, const parallel::Decomposition *parts) {
  return parts ? ExodusPart::file_name(path, parts->comm().rank(), parts->comm().size()) : path;
}

/// This rank's checkpoint, read; where it is missing but a run on another number of ranks wrote
/// that checkpoint, InputError saying so.
std::unique_ptr<CheckpointReader> read_checkpoint(const std::string &path, const parallel::Decomposition *parts) {
  const std::string mine = rank_file(path, parts);
  std::error_code ec;
  if (!std::filesystem::exists(mine, ec)) {
    // Rank 0's file of another count sits beside it as name.N.0 (N's digits padding the 0).
    const int ranks = parts ? parts->comm().size() : 1;
    int other = parts && std::filesystem::exists(path, ec) ? 1 : 0;
    const std::filesystem::path p(path);
    const std::string stem = p.filename().string() + ".";
    for (const auto &e : std::filesystem::directory_iterator(p.parent_path().empty() ? "." : p.parent_path(), ec)) {
      const std::string name = e.path().filename().string();
      if (other || name.rfind(stem, 0) != 0) continue;
      const int n = std::atoi(name.c_str() + stem.size());
      if (n > 1 && n != ranks && name == std::filesystem::path(ExodusPart::file_name(path, 0, n)).filename()) other = n;
    }
    if (other)
      throw InputError("the checkpoint '" + path + "' was written by a run on " + std::to_string(other) +
                       " ranks, and this run has " + std::to_string(ranks));
  }
  return std::make_unique<CheckpointReader>(mine);
}

/// A checkpoint this run can continue from: InputError unless it steps by this schedule's dt and
/// stops before this run would (--max-steps at or below its step leaves nothing to continue), and,
/// on many ranks, is this rank's part of the same division.
void check_restart(const CheckpointReader &r, const Schedule &s, const parallel::Decomposition *parts) {
  char msg[240];
  const int ranks = parts ? parts->comm().size() : 1;
  if (int(r.has("run.ranks") ? r.number("run.ranks") : 1) != ranks)
    r.mismatch("it was written by a run on " + std::to_string(int(r.has("run.ranks") ? r.number("run.ranks") : 1)) +
               " ranks, and this run has " + std::to_string(ranks));
  if (parts) {
    const auto &places = r.integers("run.node_places");
    bool same = places.size() == parts->mesh().xyz.size() / 3;
    for (std::size_t k = 0; same && k < places.size(); ++k)
      same = places[k] == parts->node_index(Index(k));
    if (!same) r.mismatch("its rank's part of the mesh is not this rank's (another division)");
  }
  if (r.number("run.dt") != s.dt) {
    std::snprintf(msg, sizeof msg,
                  "it steps by %.17g, this input by %.17g (time.end_time, dt or safety_factor changed)",
                  r.number("run.dt"), s.dt);
    r.mismatch(msg);
  }
  const long at = static_cast<long>(r.number("run.steps"));
  if (at >= s.steps) {
    std::snprintf(msg, sizeof msg, "it is at step %ld, and this run ends at step %ld%s", at, s.steps,
                  s.steps < s.total ? " (max_steps): nothing would be continued" : "");
    r.mismatch(msg);
  }
}

} // namespace

RunSummary run_explicit(ExplicitIntegrator &in, const TimeConfig &time, const OutputConfig &output,
                        const RunOptions &opts, PhaseTimer &timer, const std::vector<HistoryColumn> &history_columns,
                        const RunIdentity &identity, const CheckpointReader *restart) {
  const Schedule s(time, in.critical_time_step());
  const parallel::Decomposition *parts = in.decomposition();
  const parallel::Comm &comm = parallel::world();
  const bool gathered = parts && parts->gathers();
  const long first_step = in.steps();
  if (!restart) {
    auto phase = timer.scope("start");
    in.start(s.dt);
  }
  std::unique_ptr<AsyncExodusWriter> writer;
  std::unique_ptr<HistoryWriter> history;
  const HistoryConfig &hc = output.histories;
  Cadence history_due(hc.every_steps, hc.every_time > 0 || hc.every_steps > 0 ? hc.every_time : s.steps * s.dt / 1000);
  const CheckpointConfig &cc = output.checkpoint;
  Cadence checkpoint_due(cc.every_steps, cc.every_time);
  checkpoint_due.due(0, 0.0, s.dt); // none at t = 0: the input is the start
  const long every_steps = output.every_steps;
  const double every_time = output.every_time > 0 ? output.every_time : (every_steps > 0 ? 0 : time.end_time / 20);
  double next_output = every_time;
  {
    auto phase = timer.scope("output");
    const EnergyReport e = in.energy_report();
    ExodusVariables vars = in.output_variables();
    vars.global = driver_global_names(in);
    std::vector<HistoryColumn> columns = {{"time", "time"}};
    for (const std::string &g : vars.global)
      columns.push_back({g, global_quantity(g)});
    columns.insert(columns.end(), history_columns.begin(), history_columns.end());
    bool histories_continue = false; // (alike on every rank: rank 0 alone writes them)
    if (restart) {                   // the series and the histories go on from the checkpoint
      if (output.fields && (!gathered || comm.root()))
        writer = std::make_unique<AsyncExodusWriter>(
            opts.output_path(output.file), vars, int(restart->number("run.exodus_file")),
            int(restart->number("run.exodus_frames")), output.format, parts && !gathered ? comm.rank() : 0,
            parts && !gathered ? comm.size() : 1);
      if (output.fields && gathered && in.topology_changes()) output_mesh(in); // (where gather() places the fields)
      next_output = restart->number("run.next_output");
      checkpoint_due.set_next(restart->number("run.checkpoint_next"));
      histories_continue = !hc.file.empty() && restart->has("run.history_next");
      if (histories_continue) {
        if (comm.root())
          history = std::make_unique<HistoryWriter>(opts.output_path(hc.file), columns.size(),
                                                    std::uintmax_t(restart->number("run.history_bytes")));
        history_due.set_next(restart->number("run.history_next"));
      }
    } else if (output.fields) {
      const HostMesh mesh = output_mesh(in);
      if (!gathered || comm.root()) {
        const std::optional<ExodusPart> own = parts && !gathered ? in.output_part(mesh) : std::nullopt;
        writer =
            std::make_unique<AsyncExodusWriter>(opts.output_path(output.file), mesh, vars, in.title(), output.format,
                                                parts && !gathered ? (own ? &*own : &parts->exodus_part()) : nullptr);
      }
      if (writer && !writer->netcdf4_because().empty() && !opts.quiet)
        std::printf("output: netCDF-4 (as format: netcdf4), since the classic format cannot hold this mesh: %s\n",
                    writer->netcdf4_because().c_str());
      write_frame(writer.get(), in, s, e);
    }
    if (!hc.file.empty() && !histories_continue) { // (a restart's start here if its first run had none)
      if (comm.root()) history = std::make_unique<HistoryWriter>(opts.output_path(hc.file), columns, hc.units);
      history_due.due(in.steps(), in.time(), s.dt);
      const std::vector<double> row = history_row(in, s, e); // every rank: the values are sums over them
      if (history) history->write(row);
    }
  }
  // What the output will take, said before the run starts where it is large (uncompressed sizes).
  if (!opts.quiet && !restart && output.fields) {
    const HostMesh m = gathered ? parts->global_mesh() : in.output_mesh();
    const ExodusVariables v = in.output_variables();
    const double nn = double(m.xyz.size() / 3), ne = double(m.conn.size() / element_info(m.type).nodes);
    const double mesh_mb = (8.0 * 3 * nn + 4.0 * m.conn.size() + 8.0 * (nn + ne)) / 1e6;
    const double frame_mb = 8.0 * (v.nodal.size() * nn + v.element.size() * ne) / 1e6;
    const double frames = 1 + (every_steps > 0 ? double(s.steps / every_steps) : s.steps * s.dt / every_time);
    if (mesh_mb + frames * frame_mb > 100)
      std::printf("output: about %.0f MB: %.0f frames of %.1f MB%s and the mesh, %.1f MB%s\n",
                  mesh_mb + frames * frame_mb, frames, frame_mb,
                  output.format.compression > 0 ? " before compression" : "", mesh_mb,
                  m.extra_blocks.empty() ? "" : " (again in each file a new crack topology starts)");
  }
  if (!opts.quiet) {
    if (restart)
      std::printf("continuing from %s at step %ld (t = %.6e)\n", restart->path().c_str(), in.steps(), in.time());
    std::printf("time step %.6e (stability limit %.6e, ratio %.2f), %ld steps to t = %.6e\n", s.dt, s.dt_critical,
                s.dt / s.dt_critical, s.steps, s.steps * s.dt);
  }
  if (s.dt > s.dt_critical && comm.root())
    std::fprintf(stderr, "fegpu-kk: warning: the time step %.6e exceeds the estimated stability limit %.6e\n", s.dt,
                 s.dt_critical);

  // A checkpoint: the frames queued so far on disk first, so that the file it points into holds them.
  std::deque<std::string> written;
  std::string last_checkpoint;
  const auto checkpoint = [&](long n) {
    auto phase = timer.scope("checkpoint");
    if (writer) writer->drain();
    CheckpointWriter w;
    in.save(w);
    set_identity(w, identity);
    w.set("run.steps", double(n));
    w.set("run.dt", s.dt);
    w.set("run.exodus_file", writer ? double(writer->file_index()) : 0.0);
    w.set("run.exodus_frames", writer ? double(writer->frames_in_file()) : 0.0);
    w.set("run.next_output", next_output);
    w.set("run.checkpoint_next", checkpoint_due.next());
    if (!hc.file.empty()) {
      if (history) w.set("run.history_bytes", double(history->bytes()));
      w.set("run.history_next", history_due.next());
    }
    // Many ranks: a file a rank (name.N.r, as their output), each of its part, and the part itself
    // (its nodes' places in the whole mesh), which a restart must find again.
    if (parts) {
      w.set("run.ranks", double(comm.size()));
      std::vector<std::int64_t> places(parts->mesh().xyz.size() / 3);
      for (std::size_t k = 0; k < places.size(); ++k)
        places[k] = parts->node_index(Index(k));
      w.put("run.node_places", std::move(places));
    }
    last_checkpoint = opts.output_path(cc.file(n));
    written.push_back(rank_file(last_checkpoint, parts));
    w.write(written.back());
    while (written.size() > static_cast<std::size_t>(cc.keep)) {
      std::remove(written.front().c_str());
      written.pop_front();
    }
  };

  Progress progress(opts.progress, s.steps * s.dt);
  RunSummary sum;
  int stop_signal = 0; // SIGINT or SIGTERM, on any rank
  const auto start = std::chrono::steady_clock::now();
  try {
    {
      auto phase = timer.scope("time_loop");
      while (in.steps() < s.steps) {
        in.step();
        const long n = in.steps();
        const double t = in.time();
        // SIGINT or SIGTERM: this step is the last (on every rank: one rank may see it first).
        stop_signal = parts ? static_cast<int>(comm.max(long(stop_requested()))) : stop_requested();
        // Where the run stops short of its end (a signal, --max-steps), the frame, row and checkpoint
        // its cadences ask for come first, as in the run that goes on, so that the checkpoint holds
        // that run's state and counts its frames and rows; the stop's own frame and row follow, for
        // a restart to replace.
        const bool end = n == s.total;
        const bool stops = stop_signal != 0 || (n == s.steps && !end);
        const bool frame_due =
            (every_steps > 0 && n % every_steps == 0) || (every_time > 0 && t >= next_output - 1e-9 * s.dt) || end;
        const bool row_due = !hc.file.empty() && (history_due.due(n, t, s.dt) || end);
        const bool checkpoint_now = cc.enabled && (checkpoint_due.due(n, t, s.dt) || stops) && !end;
        const auto frame = [&] {
          auto out = timer.scope("output");
          sum.energies = checked_energies(in, s);
          if (output.fields) write_frame(writer.get(), in, s, sum.energies);
        };
        const auto row = [&](bool with_frame) {
          auto out = timer.scope("histories");
          const std::vector<double> values = history_row(in, s, with_frame ? sum.energies : checked_energies(in, s));
          if (history) history->write(values);
        };
        if (frame_due) {
          frame();
          while (every_time > 0 && next_output <= t + 1e-9 * s.dt)
            next_output += every_time;
        } else if (n % in.check_interval() == 0) {
          checked_energies(in, s);
        }
        if (row_due) row(frame_due);
        if (checkpoint_now) checkpoint(n);
        if (stops) {
          if (!frame_due) frame();
          if (!hc.file.empty() && !row_due) row(true);
        }
        progress.update(n, t);
        if (stop_signal) break;
      }
    }
    auto phase = timer.scope("output"); // the frames the writer's thread has not written yet
    if (writer) writer->finish();
    if (history) history->close();
  } catch (const RunError &e) {
    progress.finish();
    RunError failed(e.what() + (writer ? failed_output_note(writer->path(), writer->replaced()) : std::string()));
    failed.every_rank = e.every_rank;
    throw failed;
  }
  progress.finish();
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sum.steps = in.steps();
  sum.time = in.time();
  sum.outputs = writer ? writer->frames_in_file() : 0;
  sum.output_file = writer ? writer->path() : output_file(opts, output, parts);
  if (sum.steps == 0) sum.energies = checked_energies(in, s);
  if (const int sig = stop_signal) {
    char msg[256];
    std::snprintf(msg, sizeof msg, "stopped by %s after step %ld of %ld (t = %.6e); %s ends with that step",
                  signal_name(sig).c_str(), sum.steps, s.total, sum.time, sum.output_file.c_str());
    throw Stopped(msg + (last_checkpoint.empty() || !cc.enabled ? std::string()
                                                                : "; --restart " + last_checkpoint + " continues it"),
                  sig);
  }
  const std::string summary = in.summary(); // every rank: a module's summary may sum over them
  if (opts.quiet) return sum;
  if (output.fields)
    std::printf("done: %ld steps to t = %.6e; output %s (%d frames in the file)\n", sum.steps, sum.time,
                sum.output_file.c_str(), sum.outputs);
  else
    std::printf("done: %ld steps to t = %.6e; no field output (output: fields: false)\n", sum.steps, sum.time);
  if (sum.steps < s.total)
    std::printf("stopped short of the end (step %ld of %ld) by max_steps%s\n", sum.steps, s.total,
                last_checkpoint.empty() ? "" : ("; --restart " + last_checkpoint + " continues it").c_str());
  std::printf("energy:");
  for (const auto &t : sum.energies.terms)
    std::printf(" %s %.6e,", t.first.c_str(), t.second);
  std::printf(" balance error %.3e\n", sum.energies.balance_error);
  std::printf("%s", summary.c_str());
  const double elements = parts ? double(parts->global_elements()) : double(in.num_elements());
  if (sum.seconds > 0) // the steps this process took (a restart's from its checkpoint)
    std::printf("throughput: %.3e element-steps per second (time loop, output included%s)\n",
                static_cast<double>(sum.steps - first_step) * elements / sum.seconds, parts ? ", every rank" : "");
  std::printf("time per phase:\n%s", timer.summary().c_str());
  return sum;
}

std::vector<HistoryColumn> ExplicitIntegrator::history_columns(const HistorySpec &spec) {
  if (!spec.probes.empty()) spec.probes.front().where.error("this module gives no probes");
  if (!spec.reactions.empty()) spec.reactions.front().where.error("this module gives no reactions");
  if (spec.crack_tip) spec.crack_tip->where.error("a crack tip is a history of physics: cohesive_fracture only");
  return {};
}

ExplicitSimulation::ExplicitSimulation(const InputNode &root, const RunOptions &opts) : opts_(opts) {
  timer_.set_profiling(opts.profile);
  time_ = TimeConfig::parse(root.child("time"));
  if (opts.max_steps > 0)
    time_.max_steps = time_.max_steps > 0 ? std::min(time_.max_steps, opts.max_steps) : opts.max_steps;
  if (root.has("output")) output_ = OutputConfig::parse(root.child("output"));
  // On many ranks, whether the exchange flies while the interior elements' forces are computed
  // (read and ignored on one rank, as output.gather is).
  if (root.has("solver")) {
    const InputNode solver = root.child("solver");
    overlap_ = solver.get<bool>("overlap", true);
    // And how the shared rows move between GPUs (parallel::Exchange): nccl where the build has it.
    if (solver.has("exchange")) {
      exchange_ = solver.get_choice("exchange", {"nccl", "staged"}) == "nccl" ? parallel::Exchange::Nccl
                                                                              : parallel::Exchange::Staged;
      if (exchange_ == parallel::Exchange::Nccl && !parallel::have_nccl())
        solver.child("exchange").error("this build has no NCCL exchange (a CUDA build that finds NCCL has)");
    }
  }
  identity_ = {root.get<std::string>("physics"), fingerprint(root, {"time", "output"})};
}

const HostMesh &ExplicitSimulation::distribute(const HostMesh &global, bool ghosts) {
  const parallel::Comm &comm = parallel::world();
  if (comm.size() == 1) return global;
  decomposition_ = std::make_unique<parallel::Decomposition>(global, comm, output_.gather, overlap_, exchange_, ghosts);
  return decomposition_->mesh();
}

void ExplicitSimulation::setup() {
  const PhaseTimer::Activate active(timer_);
  {
    auto phase = timer_.scope("setup");
    integrator_ = build();
  }
  if (output_.fields) check_output_file(output_file(opts_, output_, decomposition_.get()), "output.file");
  if (!output_.histories.file.empty()) {
    check_output_file(opts_.output_path(output_.histories.file), "output.histories.file");
    history_columns_ = integrator_->history_columns(output_.histories.spec);
  }
  // The schedule now, so that --check refuses a run it would refuse, and warns as it would.
  const Schedule s(time_, integrator_->critical_time_step());
  if (!opts_.restart.empty()) // a bad checkpoint is bad input, found by --check too
    agree_on_input_errors([&] {
      restart_ = read_checkpoint(opts_.restart, decomposition_.get());
      check_identity(*restart_, identity_);
      check_restart(*restart_, s, decomposition_.get());
    });
  if (!opts_.quiet) {
    std::printf("%s%s\n", decomposition_ ? "rank 0: " : "", integrator_->description().c_str());
    if (decomposition_)
      std::printf("%s; exchange: %s\n", decomposition_->stats().str().c_str(),
                  parallel::exchange_name(decomposition_->exchange()).c_str());
  }
  if (s.steps > 1000000000L && parallel::world().root())
    std::fprintf(stderr, "fegpu-kk: warning: the run takes %.3e steps; check time.end_time and time.dt\n",
                 double(s.steps));
  if (const std::string w = warning(); !w.empty() && parallel::world().root())
    std::fprintf(stderr, "fegpu-kk: warning: %s\n", w.c_str());
}

void ExplicitSimulation::run() {
  const PhaseTimer::Activate active(timer_);
  if (restart_) {
    auto phase = timer_.scope("start");
    integrator_->restore(*restart_);
  }
  run_explicit(*integrator_, time_, output_, opts_, timer_, history_columns_, identity_, restart_.get());
}

} // namespace fegpu
