#pragma once
// The wave model's fitted groups as docs/FIDELITY.md shows them (a part of wave_fidelity_markdown,
// wave_validation.hpp): the cross-GPU groups, which GPUs carry refinements and on what kernels, and the
// power limit with the energy each held-out fit found.
#include <string>

#include "costmodel/wave_fit.hpp"
#include "costmodel/wave_model.hpp"
#include "costmodel/wave_validation.hpp"

namespace mutwo::costmodel {

std::string wave_groups_markdown(const WaveRows& rows, const WaveModel& model, const WaveHeldOut& held_out);

}  // namespace mutwo::costmodel
