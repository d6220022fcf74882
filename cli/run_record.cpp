#include "cli/run_record.hpp"

#include <algorithm>

#include "experiments/build_info.hpp"
#include "experiments/content_hash.hpp"
#include "profiles/schedule_json.hpp"

namespace mutwo::cli {

experiments::RunRecord base_run_record(std::string kind, const ArrayFlags& array,
                                       const profiles::Schedule& schedule, const ExecTarget& target) {
  experiments::RunRecord r;
  r.kind = std::move(kind);
  const bool from_file = !array.schedule.empty();
  r.model = from_file ? array.schedule : array.model;
  r.models =
      static_cast<int32_t>(samples_per_step(schedule) / std::max<int64_t>(1, schedule.graph.batch_size));
  for (const profiles::SubArray& s : schedule.sub_arrays) {
    r.partition += (r.partition.empty() ? "" : ",") + std::to_string(s.width);
  }
  r.policy = schedule.policy;
  r.batch_size = schedule.graph.batch_size;
  r.seq_len = array.seq_len;
  r.image_size = array.image_size;
  r.dtype = array.dtype;
  r.optimizer = from_file ? "" : array.optimizer;
  r.device = target.label;
  r.mutwo_version = std::string(experiments::mutwo_version());
  r.git_revision = std::string(experiments::git_revision());
  r.schedule_hash = experiments::content_hash(profiles::schedule_to_json(schedule));
  return r;
}

}  // namespace mutwo::cli
