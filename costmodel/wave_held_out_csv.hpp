#pragma once
// Every scored row of a leave-one-GPU-out run (wave_validation.hpp) as CSV, one kernel per line:
// what the fit that held its GPU out priced it at, beside the time measured, so a reader can see
// which kernels miss and by how much (`mutwo calibrate --waves --leave-one-out --held-out-csv FILE`).
//
// Columns:
//   device, dataset (NeuSight / DeepBench / bench-ops), source, category (wave_category), kernel,
//   variant, precision, group (wave_group_text), batch, m, n, k, flops, bytes,
//   time_ns       the row's measured time as read (NeuSight: the whole op timed from Python),
//   harness_ns    the held-out harness taken out of it (0 for kernel-timed rows),
//   kernel_ns     time_ns - harness_ns: the kernel time the price is scored against,
//   predicted_ns  the held-out price,
//   error         (predicted_ns - kernel_ns) / kernel_ns: below 0 where the model is too fast.
// Rows in the order they were read; unscored rows (below the kernel-bound cut, or of a source no
// other GPU measured) are left out.
#include <string>
#include <string_view>

#include "costmodel/wave_fit.hpp"
#include "costmodel/wave_validation.hpp"

namespace mutwo::costmodel {

inline constexpr std::string_view kWaveHeldOutCsvHeader =
    "device,dataset,source,category,kernel,variant,precision,group,batch,m,n,k,flops,bytes,time_ns,"
    "harness_ns,kernel_ns,predicted_ns,error";

// The CSV text (header first). Throws Error when held_out was made for other rows (sizes differ).
std::string wave_held_out_csv(const WaveRows& rows, const WaveHeldOut& held_out);

}  // namespace mutwo::costmodel
