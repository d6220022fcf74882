#pragma once
// The one pool of the project for independent pieces of one computation: DTR-log sweeps
// (sim/dtr_sweep.hpp), the wave model's fits (costmodel/wave_fit.hpp) and the policies' plans of one
// search partition (policies/partition_visit.cpp) hand their pieces out here.
// The experiment runner keeps its own workers, which stream rows back to the one thread that writes
// the database.
#include <cstddef>
#include <functional>

namespace mutwo::support {

// How many threads `jobs` asks for: jobs itself when > 0, else one per hardware thread (at least 1).
size_t worker_threads(int jobs);

// Runs fn(0) ... fn(count - 1), each once, on up to worker_threads(jobs) threads taking indices in
// order; with one thread (or count <= 1) in order on the calling thread. fn must write only what its
// index owns. When calls throw, the exception of the lowest index that throws is rethrown once every
// started call has finished, as a run in order would report it whatever the threads; an index above one
// that has thrown is not started.
void parallel_for(size_t count, int jobs, const std::function<void(size_t)>& fn);

}  // namespace mutwo::support
