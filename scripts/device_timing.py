"""The device time of a call, as the device check's PyTorch samples take it (scripts/fused-conv-sample.py,
scripts/conv-layout-sample.py): CUDA events around `repeat` back-to-back calls after `warmup` calls, the
median of `trials`; on the CPU, wall-clock (a dry run)."""
import statistics
import time

import torch


def time_call(call, cuda, repeat, trials, warmup):
    """Microseconds per call."""
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(trials):
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            for _ in range(repeat):
                call()
            end.record()
            torch.cuda.synchronize()
            samples.append(start.elapsed_time(end) * 1e3 / repeat)
        else:
            t0 = time.perf_counter()
            for _ in range(repeat):
                call()
            samples.append((time.perf_counter() - t0) * 1e6 / repeat)
    return statistics.median(samples)
