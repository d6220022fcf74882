# CLI tests of the executor commands (`mutwo run`, `mutwo profile`) on the CPU, included by
# tests/CMakeLists.txt inside its `if(TARGET mutwo)` block. Without LibTorch the commands exist
# and refuse with how to build them.
# The program allocates with jemalloc where cli/CMakeLists.txt linked it: asked for its statistics
# at exit, jemalloc prints them, which glibc's malloc would ignore.
get_target_property(mutwo_allocator mutwo MUTWO_ALLOCATOR)
if(mutwo_allocator STREQUAL "jemalloc")
  mutwo_cli_test(mutwo_allocates_with_jemalloc ARGS models DEFINES "STDERR_REGEX=Begin jemalloc statistics"
                 PROPERTIES ENVIRONMENT MALLOC_CONF=stats_print:true)
endif()
if(NOT TARGET mutwo_exec)
  mutwo_cli_test(run_without_torch ARGS run --model resnet-mini DEFINES EXPECT_RC=1
                 "STDERR_REGEX=^error: 'mutwo run' needs the LibTorch executor")
  return()
endif()

# Databases the tests write are removed first, so that re-running ctest starts from run 1.
add_test(NAME cli_exec_clean
         COMMAND ${CMAKE_COMMAND} -E rm -f exec-run.db exec-run.db-wal exec-run.db-shm exec-oom.db exec-oom.db-wal
                 exec-oom.db-shm exec-profile.db exec-profile.db-wal exec-profile.db-shm
         WORKING_DIRECTORY ${MUTWO_CLI_OUT})
set_tests_properties(cli_exec_clean PROPERTIES FIXTURES_SETUP cli_exec_clean)

mutwo_cli_test(run_help ARGS run --help
               DEFINES "STDOUT_REGEX=--model.*--schedule.*--partition.*--lr.*--policy.*--order.*--gpu.*--cost-source.*--trace.*--device.*--memory-cap.*--seed.*--iters.*--warmup.*--cuda-graph.*--db.*--state-offload.*--allow-oom")
mutwo_cli_test(profile_help ARGS profile --help
               DEFINES "STDOUT_REGEX=--model.*--schedule.*--device.*--warmup.*--iters.*--output.*--db")
# 2 resnet-mini in two sub-arrays of one, multiplexed, at their default batch 2: 4 samples per
# step. On the cpu the peak is the accounted one, which equals the simulator's for a plan without
# swaps (test_exec_interpreter): 1,799,680 B for this array, at the optimizer step of the largest
# weight (two Adam temporaries of its size beside the resident state, ir/optimizer_kernels.hpp).
mutwo_cli_test(run_cpu_json
               ARGS run --cost-source analytic --model resnet-mini --models 2 --partition 1,1 --device cpu --iters 2 --warmup 1 --db exec-run.db --json
               DEFINES "JSON_CHECKS=run_id=1\;device=cpu\;gpu=a100-40gb\;schedule|samples_per_step=4\;schedule|multiplexed=ON\;schedule|policy=none\;measurement|iterations=2\;measurement|warmup_iterations=1\;measurement|peak_source=accounted\;measurement|oom=OFF\;measurement|peak_bytes=1799680\;prediction|peak_bytes=1799680"
               PROPERTIES FIXTURES_SETUP cli_exec_run_db FIXTURES_REQUIRED cli_exec_clean)
# The prediction beside a run puts the host in front of the GPU as the executor issues the step:
# PyTorch's dispatch and a launch per kernel, every op issued from C++ (libtorch: the catalog's C++
# figure, 14.1 us an op) unless --cuda-graph or --host-mode says otherwise. 2 resnet-mini on the A100,
# host-bound: iteration 3 issues 404 ops x 14,100 ns + 4 batch copies x 4,600 ns = 5,714,800 ns, the
# step; the host busy 3 x 404 x 14,100 + 8 x 4,600 = 17,126,000 ns over 3 iterations; exactly what
# `mutwo simulate --schedule --host-mode libtorch` of the saved plan predicts. From a Python loop
# (eager: forward ops 55.2 us) 10,365,200 ns; 3,060,672 ns of GPU time alone.
mutwo_cli_test(run_cpu_prediction_host_libtorch
               ARGS run --cost-source analytic --model resnet-mini --models 2 --partition 1,1 --device cpu --iters 1 --warmup 0 --no-db --json
               DEFINES "JSON_CHECKS=prediction|host_mode=libtorch\;prediction|step_time_ns=5714800\;prediction|host_busy_ns=17126000\;prediction|host_bound_idle_ns=7991377")
mutwo_cli_test(run_cpu_prediction_host_eager
               ARGS run --cost-source analytic --model resnet-mini --models 2 --partition 1,1 --device cpu --iters 1 --warmup 0 --no-db --json --host-mode eager
               DEFINES "JSON_CHECKS=prediction|host_mode=eager\;prediction|step_time_ns=10365200\;prediction|host_busy_ns=31077200\;prediction|host_bound_idle_ns=21964291")
mutwo_cli_test(run_cpu_prediction_host_none
               ARGS run --cost-source analytic --model resnet-mini --models 2 --partition 1,1 --device cpu --iters 1 --warmup 0 --no-db --json --host-mode none
               DEFINES "JSON_CHECKS=prediction|host_mode=none\;prediction|step_time_ns=3060672\;prediction|host_busy_ns=0")
# A server plan's GPU part run alone (issue 21, item 5; written by cli_search_server_parts): GPU 0's
# two fused gpt2-mini under mutwo's swap and recompute plan train on LibTorch's CPU kernels within the
# 1 MiB the search planned for; the accounted peak equals the prediction, 1,048,064 B, priced by the
# source the search planned with (analytic): the predicted peak depends on when each swap and
# recompute lands, which the prices set (under the waves source it comes to 1,047,552 B).
mutwo_cli_test(run_cpu_server_part
               ARGS run --schedule server-parts/gpu0.json --gpu gtx1080ti --memory 1048576 --host-mode none --cost-source analytic --device cpu --iters 1 --warmup 0 --no-db --json
               DEFINES "JSON_CHECKS=memory_limit_bytes=1048576\;schedule|policy=mutwo\;measurement|oom=OFF\;measurement|peak_bytes=1048064\;prediction|peak_bytes=1048064"
               PROPERTIES FIXTURES_REQUIRED cli_server_parts)
# The same kind of array with every model's state on the host between uses (4 bert-mini as 2+2,
# multiplexed, no activation policy), the optimizer on the device: the executor's accounted peak
# equals the prediction, 1,297,920 B against 2,321,920 B with the state resident (weights,
# gradients and Adam moments of the idle sub-array off the device).
mutwo_cli_test(run_cpu_state_offload
               ARGS run --cost-source analytic --model bert-mini --models 4 --partition 2,2 --policy none --order multiplexed --state-offload --optimizer-on device --device cpu --iters 1 --warmup 1 --no-db --json
               DEFINES "JSON_CHECKS=schedule|policy=none+offload\;schedule|multiplexed=ON\;schedule|model_state=host\;schedule|optimizer=device\;measurement|oom=OFF\;measurement|peak_bytes=1297920\;prediction|peak_bytes=1297920")
# With the optimizer on the host (the default picks it: the faster plan), the Adam moments never
# reach the device and gradients leave as backward writes them: 509,440 B, predicted = accounted.
mutwo_cli_test(run_cpu_host_optimizer
               ARGS run --cost-source analytic --model bert-mini --models 4 --partition 2,2 --policy none --order multiplexed --state-offload --device cpu --iters 1 --warmup 1 --no-db --json
               DEFINES "JSON_CHECKS=schedule|policy=none+offload\;schedule|model_state=host\;schedule|optimizer=host\;measurement|oom=OFF\;measurement|peak_bytes=509440\;prediction|peak_bytes=509440")
# Wrapped boundaries (--wrap, ir/unrolled_schedule.hpp): the executor runs the timed steps as
# the simulator's merged program; with no swaps the accounting equals the prediction, 2,321,920 B,
# the unwrapped step's peak too: Adam's temporaries beside the resident state set it, above the
# boundary where sub-array 1's next forward meets sub-array 2's backward (3,072 B over the
# unwrapped peak before the temporaries were counted).
mutwo_cli_test(run_cpu_wrap
               ARGS run --cost-source analytic --model bert-mini --models 4 --partition 2,2 --order multiplexed --device cpu --iters 3 --warmup 1 --no-db --json --wrap
               DEFINES "JSON_CHECKS=schedule|multiplexed=ON\;measurement|wrapped=ON\;measurement|iterations=3\;measurement|oom=OFF\;measurement|peak_bytes=2321920\;prediction|peak_bytes=2321920")
mutwo_cli_test(run_wrap_one_sub_array ARGS run --model bert-mini --models 4 --device cpu --no-db --wrap
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: wrap: the schedule has 1 sub-array[(]s[)]. merging")
mutwo_cli_test(run_wrap_sync_each_step ARGS run --model bert-mini --models 4 --partition 2,2 --device cpu --no-db --wrap --sync-each-step
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: --wrap merges the boundaries of steps run back to back: not with --sync-each-step")
# An exported user model (scripts/export_model.py, tests/fixtures/exported/) trains on LibTorch's
# CPU kernels, 3 copies fused: the accounted peak equals the prediction (1,680,384 B, no swaps).
mutwo_cli_test(run_cpu_exported_model
               ARGS run --model exported/tiny_resnet.json --models 3 --device cpu --iters 2 --warmup 1 --no-db --json
               DEFINES WORKDIR=${MUTWO_TEST_FIXTURES} "JSON_CHECKS=measurement|oom=OFF\;measurement|peak_bytes=1680384\;prediction|peak_bytes=1680384")
mutwo_cli_test(run_compare_reads_it ARGS compare --db exec-run.db
               DEFINES "STDOUT_REGEX=resnet-mini x2 [[]1,1[]] none on cpu +[0-9.]+ [mu]s +[0-9.]+ [mu]s .* 1.7 MiB +1.7 MiB +[+]0.0 %  ok"
               PROPERTIES FIXTURES_REQUIRED cli_exec_run_db)
# Under a 7 MiB cap (resident state 5.9 MiB, plain peak 9.3 MiB) capuchin's best plan needs 7.4 MiB
# with the analytic cost model: refused before running, naming the limit and what the plan needs.
mutwo_cli_test(run_infeasible_plan
               ARGS run --model resnet-mini --models 4 --partition 2,2 --batch 16 --image-size 64 --policy capuchin --device cpu --memory-cap 7MiB --no-db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: policy 'capuchin' finds no plan for 4 x resnet-mini [[]2,2[]] within the 7.0 MiB memory limit: its best plan needs 7.4 MiB")
# At 7.5 MiB the DTR plan fits; its swaps/recomputes run and the accounted peak stays under it.
mutwo_cli_test(run_dtr_under_cap
               ARGS run --model resnet-mini --models 4 --partition 2,2 --batch 16 --image-size 64 --policy dtr --device cpu --memory-cap 7.5MiB --iters 1 --warmup 0 --no-db
               DEFINES "STDOUT_REGEX=policy dtr.*memory limit 7.5 MiB [(]enforced by accounting on the cpu[)].*peak memory +7.5 MiB +7.5 MiB")
# --allow-oom runs the infeasible plan: the measured step runs out of memory, is reported with the
# instruction and exits 1 (after storing the row when a database is given).
mutwo_cli_test(run_measured_oom
               ARGS run --model resnet-mini --models 4 --partition 2,2 --batch 16 --image-size 64 --policy capuchin --device cpu --memory-cap 7MiB --allow-oom --iters 1 --warmup 0 --db exec-oom.db
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=step time +OOM +OOM.*stored as run 1 in exec-oom.db"
                       "STDERR_REGEX=^error: the measured step ran out of memory: out of memory at instruction [0-9]+ [(][a-z_]+ op [0-9]+ '[^']+'[)].*[(]stored as run 1 in exec-oom.db[)]"
               PROPERTIES FIXTURES_REQUIRED cli_exec_clean)
mutwo_cli_test(run_cap_fraction_on_cpu ARGS run --model resnet-mini --device cpu --memory-cap 0.5 --no-db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: --memory-cap 0.5: a fraction needs a CUDA device")
mutwo_cli_test(run_bad_cap ARGS run --model resnet-mini --device cpu --memory-cap 1.5 --no-db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: --memory-cap 1.5: a fraction must be in [(]0, 1[]]")
mutwo_cli_test(run_unknown_device ARGS run --model resnet-mini --device tpu --no-db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: unknown device 'tpu'. valid: cpu, cuda, cuda:N")
mutwo_cli_test(run_unknown_policy ARGS run --model resnet-mini --device cpu --policy lru --no-db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: unknown policy 'lru'. valid: none, checkpoint")
mutwo_cli_test(run_unknown_order ARGS run --model resnet-mini --device cpu --order zigzag --no-db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: unknown sub-array order 'zigzag'. valid: multiplexed, back-to-back, best")
mutwo_cli_test(run_needs_model_or_schedule ARGS run --device cpu DEFINES EXPECT_RC=2 "STDERR_REGEX=--model or --schedule")
mutwo_cli_test(run_corrupt_db ARGS run --model resnet-mini --device cpu --iters 1 --warmup 0
                                   --db ${MUTWO_TEST_FIXTURES}/compare/not-a-database.txt
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: results database '[^']*not-a-database.txt' is not a SQLite database")
# Every output is checked before the step is planned or measured: a database that cannot be written
# used to fail after the measurement, with the schedule saved and the profiled trace written.
mutwo_cli_test(run_db_missing_dir_saves_nothing
               ARGS run --model resnet-mini --device cpu --iters 1 --warmup 0 --db no-such-dir/x.db
                    --save-schedule exec-db-refused.schedule.json
               DEFINES EXPECT_RC=1 ABSENT_FILE=exec-db-refused.schedule.json
                       "STDERR_REGEX=^error: cannot write --db 'no-such-dir/x.db': no directory 'no-such-dir'\n$")
mutwo_cli_test(run_db_is_schedule ARGS run --model resnet-mini --device cpu --iters 1 --warmup 0
                                       --db exec-twice.json --save-schedule exec-twice.json
               DEFINES EXPECT_RC=1 ABSENT_FILE=exec-twice.json
                       "STDERR_REGEX=^error: --save-schedule and --db are the same file 'exec-twice.json'")
mutwo_cli_test(profile_corrupt_db_writes_no_trace
               ARGS profile --model bert-mini --device cpu --iters 1 -o exec-refused.measured.json
                    --db ${MUTWO_TEST_FIXTURES}/compare/not-a-database.txt
               DEFINES EXPECT_RC=1 ABSENT_FILE=exec-refused.measured.json
                       "STDERR_REGEX=^error: results database '[^']*not-a-database.txt' is not a SQLite database")
mutwo_cli_test(profile_unknown_gpu_writes_no_trace
               ARGS profile --model bert-mini --device cpu --iters 1 -o exec-refused-gpu.measured.json
                    --db exec-refused-gpu.db --gpu h300
               DEFINES EXPECT_RC=1 ABSENT_FILE=exec-refused-gpu.measured.json
                       "STDERR_REGEX=^error: unknown device 'h300'")
# `mutwo profile` writes a measured trace that `trace --check` validates and the measured cost source
# replays with every op measured.
mutwo_cli_test(profile_bert_mini
               ARGS profile --model bert-mini --models 2 --device cpu --iters 3 -o bert-mini-x2.measured.json --db exec-profile.db
               DEFINES "STDOUT_REGEX=^profiled bert-mini x2 on cpu: 152 ops, 1 warm-up [+] 3 measured steps.*wrote bert-mini-x2.measured.json.*stored as run 1 in exec-profile.db"
               PROPERTIES FIXTURES_SETUP cli_exec_profile FIXTURES_REQUIRED cli_exec_clean)
# On the cpu host issue times only when asked (on a GPU always); without --host-times none is written.
mutwo_cli_test(profile_host_times
               ARGS profile --model bert-mini --models 2 --device cpu --iters 3 -o bert-mini-x2.host.json --host-times
               DEFINES "STDOUT_REGEX=^profiled bert-mini x2 on cpu: 152 ops.*sum of op host issue times [0-9.]+ [mu]s [(]dispatch and launches, the executor's own[)]"
               PROPERTIES FIXTURES_REQUIRED cli_exec_clean)
mutwo_cli_test(profile_no_host_times
               ARGS profile --model bert-mini --models 2 --device cpu --iters 1 -o bert-mini-x2.nohost.json --json
               DEFINES "JSON_CHECKS=ops=152\;sum_op_host_ns="
               PROPERTIES FIXTURES_REQUIRED cli_exec_clean)
mutwo_cli_test(profile_trace_checks ARGS trace --check bert-mini-x2.measured.json
               DEFINES "STDOUT_REGEX=valid mutwo-trace version 1.*graph +bert-mini x2.*cpu"
               PROPERTIES FIXTURES_REQUIRED cli_exec_profile)
mutwo_cli_test(profile_replays ARGS simulate --model bert-mini --models 2 --cost-source measured --trace bert-mini-x2.measured.json
               DEFINES "STDOUT_REGEX=measured [(]152 of 152 ops from 1 trace on cpu[)]"
               PROPERTIES FIXTURES_REQUIRED cli_exec_profile)
mutwo_cli_test(profile_needs_output ARGS profile --model bert-mini --device cpu DEFINES EXPECT_RC=2 "STDERR_REGEX=--output is required")

# The program never links LibTorch: run and profile load exec/'s module (libmutwo_exec.so, beside
# the program) on demand, and errors thrown inside it read as any other mutwo error.
add_test(NAME cli_exec_mutwo_links_no_torch
         COMMAND sh -c "ldd \"$1\" | grep torch && exit 1 || exit 0" sh $<TARGET_FILE:mutwo>)
if(NOT MUTWO_WITH_CUDA)
  mutwo_cli_test(run_cuda_in_cpu_build ARGS run --model resnet-mini --device cuda --no-db
                 DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: device 'cuda' needs mutwo built against a LibTorch with CUDA [^\n]*\n$")
endif()
mutwo_cli_test(run_module_missing ARGS run --model resnet-mini --device cpu --no-db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: 'mutwo run' needs the LibTorch executor module, which cannot be loaded from '/nonexistent/libmutwo_exec.so'"
               PROPERTIES ENVIRONMENT MUTWO_EXEC_MODULE=/nonexistent/libmutwo_exec.so)
mutwo_cli_test(models_without_module ARGS models
               DEFINES "STDOUT_REGEX=bert-base"
               PROPERTIES ENVIRONMENT MUTWO_EXEC_MODULE=/nonexistent/libmutwo_exec.so)

# A measured experiment sweep runs each configuration through the run pipeline (plan, simulate,
# execute on the cpu, store): 2 configurations, both stored as runs with prediction and measurement.
add_test(NAME cli_exec_measured_clean
         COMMAND ${CMAKE_COMMAND} -E rm -rf exec-measured.db exec-measured.db-wal exec-measured.db-shm exec-measured
         WORKING_DIRECTORY ${MUTWO_CLI_OUT})
set_tests_properties(cli_exec_measured_clean PROPERTIES FIXTURES_SETUP cli_exec_measured_clean)
mutwo_cli_test(experiment_measured_sweep
               ARGS experiment ${MUTWO_TEST_FIXTURES}/experiments/tiny_measured.toml --db exec-measured.db --out exec-measured --jobs 2
               DEFINES "STDOUT_REGEX=tiny_measured.*exec-measured/tiny_measured.csv"
               PROPERTIES FIXTURES_SETUP cli_exec_measured FIXTURES_REQUIRED cli_exec_measured_clean)
mutwo_cli_test(experiment_measured_compare ARGS compare --db exec-measured.db
               DEFINES "STDOUT_REGEX=resnet-mini x1 .* none on cpu .*resnet-mini x2 .* none on cpu "
               PROPERTIES FIXTURES_REQUIRED cli_exec_measured)
# Per-model learning rates and losses follow the user's model index under a reordered partition
# (tests/partition_losses.sh).
add_test(NAME cli_run_partition_losses COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/partition_losses.sh $<TARGET_FILE:mutwo>)
# A schedule file runs as planned: the flags that plan a model array are refused, not ignored.
mutwo_cli_test(run_schedule_policy ARGS run --schedule ${MUTWO_TEST_FIXTURES}/traces/tiny_relu.schedule.json --policy checkpoint --no-db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: --policy plans a model array [(]--model[)], not a --schedule file\n$")
mutwo_cli_test(run_schedule_allow_oom ARGS run --schedule ${MUTWO_TEST_FIXTURES}/traces/tiny_relu.schedule.json --allow-oom --no-db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: --allow-oom plans a model array [(]--model[)], not a --schedule file\n$")
# A database that fails at the insert (here a trigger; in use, a lock held past the busy timeout)
# does not cost the measurement: the run is printed, then the failure reported (it printed nothing).
add_test(NAME cli_exec_fixture_refusing_db
         COMMAND make_results_fixture runs ${MUTWO_CLI_OUT}/exec-refusing.db
                 "CREATE TRIGGER no_insert BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'disk full (test)')$<SEMICOLON> END$<SEMICOLON>")
set_tests_properties(cli_exec_fixture_refusing_db PROPERTIES FIXTURES_SETUP cli_exec_refusing_db)
mutwo_cli_test(run_db_fails_at_insert ARGS run -m resnet-mini --iters 1 --warmup 0 --db exec-refusing.db
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=step time .*peak memory"
                       "STDERR_REGEX=^error: results database 'exec-refusing\\.db': cannot insert into runs: disk full [(]test[)]. measured, not stored: the run printed above\n$"
               PROPERTIES FIXTURES_REQUIRED cli_exec_refusing_db)
