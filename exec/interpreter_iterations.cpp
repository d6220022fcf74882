// Several iterations back to back (Interpreter::run_iterations; ir/unrolled_schedule.hpp): the
// unrolled program's instructions issued in its order, each iteration's boundary marked, later
// iterations' batches uploaded (upload_input) as the simulator accounts them.
#include <algorithm>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "exec/interpreter.hpp"
#include "support/error.hpp"

namespace mutwo::exec {

StepResult Interpreter::run_iterations(const ir::UnrolledSchedule& program) {
  const std::vector<ir::Instruction>& list = program.schedule.instructions;
  if (program.schedule.graph.ops.size() != graph_.ops.size() || list.size() != program.iteration_of.size() ||
      list.size() != program.original_of.size() || program.iterations < 1) {
    throw Error(
        fmt::format("run_iterations: the unrolled program ({} instructions, {} iterations) is not of this "
                    "schedule's graph '{}'",
                    list.size(), program.iterations, graph_.name));
  }
  const auto iterations = static_cast<size_t>(program.iterations);
  std::vector<size_t> last_of(iterations, 0);  // per iteration: its last instruction in the program
  for (size_t u = 0; u < list.size(); ++u) {
    const auto k = static_cast<size_t>(program.iteration_of[u]);
    if (k < iterations) last_of[k] = u;
    const ir::InstrId original = program.original_of[u];
    if (original != ir::kNoId && static_cast<size_t>(original) >= schedule_.instructions.size()) {
      throw Error(
          fmt::format("run_iterations: program instruction {} repeats instruction {}, which the schedule "
                      "has not",
                      u, original));
    }
  }
  std::vector<std::vector<at::Tensor>> losses(iterations + 1, std::vector<at::Tensor>(graph_.tensors.size()));
  ir::InstrId current = ir::kNoId;
  StepResult result = guarded(
      [&](StepResult& r) {
        upload_step_inputs();
        r.resident_bytes = in_use_bytes_;
        for (size_t u = 0; u < list.size(); ++u) {
          const ir::Instruction& issued = list[u];
          const ir::InstrId original = program.original_of[u];
          const auto k = static_cast<size_t>(program.iteration_of[u]);
          current = original;
          loss_sink_ = &losses[std::min(k, iterations)];
          if (ir::runs_on_host(schedule_, issued)) {
            backend_.before_host(issued);
          } else {
            backend_.before(issued);
          }
          if (original == ir::kNoId) {
            upload_input(issued);
          } else {
            const ir::Instruction& instruction = schedule_.instructions[static_cast<size_t>(original)];
            if (ir::runs_op(instruction.kind)) {
              runtime_[static_cast<size_t>(instruction.op)].optimizer_step = step_ + static_cast<int64_t>(k);
            }
            execute(instruction);
          }
          backend_.after(issued);
          if (k < iterations && u == last_of[k]) {
            backend_.end_step();
            backend_.mark_step_end();
          }
        }
        for (size_t k = 0; k < iterations; ++k) back_to_back_losses_.push_back(std::move(losses[k]));
      },
      &current);
  step_ += static_cast<int64_t>(iterations);
  return result;
}

}  // namespace mutwo::exec
