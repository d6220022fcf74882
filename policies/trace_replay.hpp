#pragma once
// The schedule that replays a measured trace the way it ran, for `mutwo simulate --trace`: every
// op once in the trace's order, each on the stream its GPU work ran on, with the host side
// (op_host_ns, host_sync) the engine's host timeline reads.
//
// Rules (a trace with op_streams, as the Kineto importer writes; any other trace replays as the
// plain schedule of its graph, unchanged):
// - Streams: the traced stream most ops launched work on (ties: more GPU time, then first used)
//   becomes the compute stream 0; every other traced stream an extra compute stream 3, 4, ... in
//   the order ops first used it. NCCL, memcpy and side streams are all compute streams: copy
//   streams 1 and 2 carry tensor swaps only. An op that launched nothing runs (0 ns) on stream 0.
// - An op with GPU work on several streams becomes one op per stream, in the order they were
//   issued: the original op keeps the last part (its tensors, host_sync, its host share), the
//   earlier parts are appended to the graph as ops named "<op> [stream S]" with attribute
//   "trace_stream" = S and no tensors, and are issued just before it.
// - Durations and host times: the replay trace holds each (part) op's GPU time on its stream and
//   its share of host time; its cost model therefore replays them (measured source).
// - Cross-stream order: only what the trace shows. A 0-byte tensor (the importer's order links)
//   carries no data, so a read of one made on another stream is dropped from the replay graph;
//   a tensor with bytes read on another stream than the one that made it gives the reader a wait
//   on its maker, and a free waits on the maker and readers on other streams. The Kineto traces
//   mutwo reads do not say which stream a cudaStreamWaitEvent waits on, so no other cross-stream
//   wait is made: each stream runs in issue order (docs/ARCHITECTURE.md "The Schedule": the stream rule).
// - An op with attribute "device_sync" (cudaDeviceSynchronize) hands its host_sync to a 0 ns op
//   issued right after it, "<op> [device sync]" on stream 0, which waits for the last instruction
//   of every other stream: the host, waiting for that op, waits for the whole device, and no
//   kernel is held back by the synchronisation.
#include "io/trace_file.hpp"
#include "ir/schedule.hpp"

namespace mutwo::policies {

struct TraceReplay {
  ir::Trace trace;        // the graph the schedule runs, with its durations and host times
  ir::Schedule schedule;  // over trace.graph; validates
};

// Throws mutwo::Error when op_streams does not match the graph (io::trace_from_json checks
// files; this checks traces built in memory).
TraceReplay build_trace_replay(const ir::Trace& trace);

}  // namespace mutwo::policies
