// libFuzzer target: a PyTorch profiler (Kineto / Chrome-trace) JSON import (io/kineto_trace.hpp),
// plain or gzip-compressed as torch.profiler commonly stores it (the bytes decoded as a file's are,
// support/text_file.hpp: a corrupt stream must be a FormatError), and the same document read at
// the runtime level and replayed with what-ifs (io/kineto_runtime.hpp, sim/runtime_replay.hpp), its
// work moved to another GPU with its shaped ops priced (sim/runtime_other_gpu.hpp).
#include <nlohmann/json.hpp>

#include "costmodel/device_catalog.hpp"
#include "fuzz/fuzz_input.hpp"
#include "io/kineto_op_records.hpp"
#include "io/kineto_runtime.hpp"
#include "io/kineto_trace.hpp"
#include "sim/runtime_other_gpu.hpp"
#include "sim/runtime_replay.hpp"
#include "support/text_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mutwo::fuzz::refuse_only_with_errors([&] {
    const std::string text = mutwo::support::text_of_bytes(mutwo::fuzz::text_of(data, size), "fuzz.json.gz");
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !mutwo::io::is_kineto_document(doc)) return;
    mutwo::fuzz::refuse_only_with_errors([&] { mutwo::io::import_kineto_trace(doc, "fuzz.json"); });
    const mutwo::ir::RuntimeTrace trace = mutwo::io::read_kineto_runtime(doc, "fuzz.json");
    mutwo::sim::replay_runtime(trace);
    mutwo::sim::RuntimeWhatIf what_if;
    what_if.host_free = true;
    what_if.kernel_speedup = 3.0;
    what_if.collectives_at_floor = true;
    mutwo::sim::replay_runtime(trace, what_if);
    static const mutwo::costmodel::DeviceSpec a100 = mutwo::costmodel::find_device("a100-40gb");
    static const mutwo::costmodel::DeviceSpec h100 = mutwo::costmodel::find_device("h100-sxm-80gb");
    const mutwo::io::KinetoOpRecords records = mutwo::io::kineto_op_records_if_shaped(doc, "fuzz.json");
    const mutwo::sim::OtherGpuWork moved = mutwo::sim::move_work_to_gpu(trace, records, a100, h100, "waves");
    mutwo::sim::RuntimeWhatIf on_h100;
    on_h100.work_scale = &moved.work_scale;
    mutwo::sim::replay_runtime(trace, on_h100);
  });
  return 0;
}
