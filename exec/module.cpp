// libmutwo_exec.so: the LibTorch executor as a module that experiments::load_executor() opens on
// demand (only `mutwo run`, `mutwo profile` and measured experiment sweeps do). It exports this
// one factory; everything else, the static mutwo libraries linked into it included, is hidden.
#include "exec/executor.hpp"

extern "C" __attribute__((visibility("default"))) mutwo::ir::Executor* mutwo_exec_create_executor() {
  return mutwo::exec::make_executor().release();
}
