/// \file module.cpp
/// `physics: elastoplastic_wellbore`: the problem read, the model built with its linear solver,
/// and the load steps: each ramps the boundary tractions, iterates to equilibrium (nonlinear.hpp)
/// and writes its state.
#include "fegpu/core/module.hpp"
#include "direct.hpp"
#include "fegpu/core/error.hpp"
#include "fegpu/driver/progress.hpp"
#include "fegpu/io/output_files.hpp"
#include "problem.hpp"

#include <cstdio>
#include <deque>
#include <memory>

namespace fegpu::wellbore {

namespace {

class WellboreSimulation : public Simulation {
public:
  WellboreSimulation(const InputNode &root, const RunOptions &opts)
      : opts_(opts),
        p_(parse_problem(root, opts)), identity_{"elastoplastic_wellbore", fingerprint(root, {"time", "output"})} {
    timer_.set_profiling(opts.profile);
  }

  void setup() override {
    const PhaseTimer::Activate active(timer_);
    auto phase = timer_.scope("setup");
    model_ = std::make_unique<WellboreModel>(p_.mesh, p_.config);
    if (p_.direct) model_->set_direct_solver(std::make_shared<DirectSolver>());
    if (p_.annulus) {
      auto mg = std::make_shared<Multigrid>(*p_.annulus, p_.config);
      if (!opts_.quiet) std::printf("multigrid: %d levels\n", mg->levels());
      model_->set_multigrid(std::move(mg));
    }
    if (!opts_.restart.empty()) { // a bad checkpoint is bad input, found by --check too
      restart_ = std::make_unique<CheckpointReader>(opts_.restart);
      check_identity(*restart_, identity_);
    }
    if (opts_.quiet) return;
    std::printf("mesh: %d nodes, %d %s elements, %d integration points each; %d dofs, %d nonzeros\n",
                model_->num_nodes(), model_->num_elems(), type_name(p_.mesh.type).c_str(), model_->operators().points,
                model_->num_dofs(), static_cast<int>(model_->matrix().cols.extent(0)));
  }

  void run() override {
    const PhaseTimer::Activate active(timer_);
    std::unique_ptr<LoadStepOutput> continued;
    if (restart_) {
      model_->restore(*restart_);
      continued = std::make_unique<LoadStepOutput>(p_, opts_, *restart_);
      if (!opts_.quiet)
        std::printf("continuing from %s after load step %d\n", restart_->path().c_str(),
                    int(restart_->number("run.load_steps_done")));
    }
    std::unique_ptr<LoadStepOutput> fresh = continued ? nullptr : std::make_unique<LoadStepOutput>(p_, opts_);
    LoadStepOutput &output = continued ? *continued : *fresh;
    try {
      load_steps(output);
    } catch (const RunError &e) {
      throw RunError(e.what() + failed_output_note(output.path(), output.replaced()));
    }
    if (opts_.quiet) return;
    const Fields &f = output.fields();
    std::printf("done: %d load steps; %ld integration points yielded, out to r = %.5f; output %s\n", p_.load_steps,
                f.plastic_points, f.plastic_radius, output.path().c_str());
    std::printf("time per phase:\n%s", timer_.summary().c_str());
  }

private:
  /// Every load step: the loads ramped, the iteration to equilibrium, the state committed and
  /// written; then the profile.
  void load_steps(LoadStepOutput &output) {
    DofView u("fegpu::wellbore::u", model_->num_nodes(), 2);
    const int steps = p_.load_steps;
    int first = 1;
    if (restart_) {
      restart_->get_view("wellbore.u_n", u);
      first = int(restart_->number("run.load_steps_done")) + 1;
    }
    std::deque<std::string> written; // the checkpoints this run wrote, oldest first
    std::string last_checkpoint;
    for (int step = first; step <= steps; ++step) {
      const double lambda = double(step) / steps;
      model_->set_load_factor(lambda);
      bool converged = false;
      std::vector<IterationRecord> history;
      // The step's line grows by each iteration's residual as it ends (a long step shows progress).
      const char *linear = model_->krylov_method() == KrylovMethod::BiCGStab ? "BiCGStab" : "CG";
      if (!opts_.quiet) {
        std::printf("load step %d/%d (factor %.4f), %s:", step, steps, lambda, to_string(p_.solver.method).c_str());
        std::fflush(stdout);
      }
      const auto progress = [&](const IterationRecord &r) {
        if (opts_.quiet) return;
        std::printf(" %.2e", r.residual);
        std::fflush(stdout);
      };
      try {
        auto phase = timer_.scope("nonlinear_solve");
        history = solve_load_step(*model_, u, p_.solver, converged, progress);
      } catch (const RunError &e) {
        if (!opts_.quiet) std::printf(" failed\n");
        char where[96];
        std::snprintf(where, sizeof where, "load step %d of %d (factor %.4f): ", step, steps, lambda);
        throw RunError(where + std::string(e.what()));
      }
      if (!opts_.quiet) {
        int its = 0;
        for (const IterationRecord &r : history)
          its += r.linear;
        std::printf(" %.2e (%zu iterations, %d %s iterations)\n", history.back().residual, history.size() - 1, its,
                    linear);
      }
      if (!converged) {
        char msg[200];
        std::snprintf(msg, sizeof msg,
                      "load step %d did not converge: relative residual %.3e after %d iterations (tolerance %.1e); "
                      "relative residuals ",
                      step, history.back().residual, p_.solver.max_iterations, p_.solver.tolerance);
        throw RunError(msg + residual_history(history));
      }
      model_->commit(u);
      {
        auto phase = timer_.scope("output");
        output.write(*model_, u, lambda, history);
      }
      const int sig = stop_requested();
      const CheckpointConfig &cc = p_.checkpoint;
      if (cc.enabled && step < steps && (step % cc.every_steps == 0 || sig)) {
        auto phase = timer_.scope("checkpoint");
        CheckpointWriter w;
        set_identity(w, identity_);
        w.set("run.load_steps_done", double(step));
        model_->save(w);
        output.save(w);
        last_checkpoint = opts_.output_path(cc.file(step));
        w.write(last_checkpoint);
        written.push_back(last_checkpoint);
        while (written.size() > static_cast<std::size_t>(cc.keep)) {
          std::remove(written.front().c_str());
          written.pop_front();
        }
      }
      if (sig && step < steps)
        throw Stopped("stopped by " + signal_name(sig) + " after load step " + std::to_string(step) + " of " +
                          std::to_string(steps) + "; " + output.path() + " ends with it" +
                          (last_checkpoint.empty() ? "" : "; --restart " + last_checkpoint + " continues it"),
                      sig);
    }
    auto phase = timer_.scope("output");
    output.finish();
  }

  RunOptions opts_;
  Problem p_;
  PhaseTimer timer_;
  std::unique_ptr<WellboreModel> model_;
  RunIdentity identity_;
  std::unique_ptr<CheckpointReader> restart_; ///< --restart's checkpoint, read and checked at set-up
};

} // namespace

FEGPU_REGISTER_MODULE(elastoplastic_wellbore, "elastoplastic_wellbore",
                      "quasi-static Mohr-Coulomb elastoplasticity around a wellbore (integration-point operators)",
                      Ranks::One, [](const InputNode &root, const RunOptions &opts) -> std::unique_ptr<Simulation> {
                        return std::make_unique<WellboreSimulation>(root, opts);
                      });

} // namespace fegpu::wellbore
