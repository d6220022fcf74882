# `mutwo calibrate` and the calibrated cost source end to end (issue 16).
mutwo_cli_test(calibrate_help ARGS calibrate --help
               DEFINES "STDOUT_REGEX=inputs.*--output.*--out-dir.*--device.*--kfold.*--fidelity")
# T4's 160 fp32 and 160 fp16 GEMMs fitted into one profile, its in-sample error printed.
mutwo_cli_test(calibrate_t4_gemm
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/deepbench_gemm.csv --device t4 --date 2025-06-01
                    -o t4-gemm.json
               DEFINES "STDOUT_REGEX=fit on t4.*t4 +gemm +fp16 +160 .*t4 +gemm +fp32 +160 .*wrote t4-gemm.json"
               PROPERTIES FIXTURES_SETUP cli_t4_profile)
mutwo_cli_test(simulate_calibrated_profile
               ARGS simulate --model resnet18 --batch 8 --cost-source calibrated --profile t4-gemm.json
               DEFINES "STDOUT_REGEX=device +t4 .*cost source +calibrated [(]t4 profile of 2025-06-01, 320 kernels: [0-9]+ of [0-9]+ ops, [0-9]+ with kernels the profile lacks priced by waves[)]"
               PROPERTIES FIXTURES_REQUIRED cli_t4_profile)
# The shipped V100 profile, with no --profile: its GEMM and convolution kernels are 42 of resnet18's ops;
# the others' kernels (norms, elementwise, Adam) are priced by the wave model.
mutwo_cli_test(simulate_calibrated_shipped ARGS simulate --model resnet18 --batch 8 --gpu v100-16gb --cost-source calibrated
               DEFINES "STDOUT_REGEX=cost source +calibrated [(]v100-16gb profile of [0-9-]+, 864 kernels: 42 of 202 ops, 160 with kernels the profile lacks priced by waves[)]")
mutwo_cli_test(simulate_calibrated_no_profile ARGS simulate --model resnet18 --gpu a100-40gb --cost-source calibrated
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: cost source 'calibrated': no calibration profile for device 'a100-40gb'")
mutwo_cli_test(calibrate_bad_row ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/bad_time.csv
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: .*bad_time.csv:2: field 'time_ns' = '-5': must be > 0")
mutwo_cli_test(calibrate_o_needs_one_device ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/deepbench_gemm.csv -o x.json
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: calibrate: -o writes one profile, the inputs have rows for 5 devices")
# A profiler trace recorded with record_shapes calibrates too: its device from deviceProperties, or --device.
mutwo_cli_test(calibrate_kineto_trace ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/kineto_shapes.json -o k.json
               DEFINES "STDOUT_REGEX=kineto_shapes.json: 3 rows on v100-16gb from 4 shaped ops.*wrote k.json")
mutwo_cli_test(calibrate_kineto_trace_no_device
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/kineto/sampled_training_rank0.json.gz
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: .*sampled_training_rank0.json.gz: the trace names no GPU")
# Inputs are read on several threads; a bad one is reported as read in order: the first bad file (a
# trace that names no GPU), though a later one (one bad row, read in no time) fails first.
mutwo_cli_test(calibrate_first_bad_input
               ARGS calibrate --jobs 4 ${MUTWO_TEST_FIXTURES}/calibration/deepbench_gemm.csv
                    ${MUTWO_TEST_FIXTURES}/kineto/sampled_training_rank0.json.gz
                    ${MUTWO_TEST_FIXTURES}/calibration/bad_time.csv
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: .*sampled_training_rank0.json.gz: the trace names no GPU")
# The wave model (issue 32): fitted across every GPU of the inputs (a folder reads every CSV in it),
# written, then priced with; held out a GPU at a time; refusals.
mutwo_cli_test(calibrate_waves_ln
               ARGS calibrate --waves ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln --date 2026-11-26 -o waves-ln.json
               DEFINES "STDOUT_REGEX=wave model across GPUs.*norm +[0-9]+ +5 .*wrote waves-ln.json"
               PROPERTIES FIXTURES_SETUP cli_waves_ln)
# The power limit's energy from DeepBench's five GPUs alone: the 70 W T4's kernels set it (17.45 pJ, the
# grid's 16 * 2^(1/8)), the 250-300 W boards hold their boost clock; the ln rows have no GEMM to tell.
mutwo_cli_test(calibrate_waves_power_limit
               ARGS calibrate --waves ${MUTWO_TEST_FIXTURES}/calibration/deepbench_gemm.csv
               DEFINES "STDOUT_REGEX=power limit: 17.45 pJ per FP32 FLOP on TSMC 16FF[+]. share of boost clock on math: v100-16gb 1.00 p100-pcie-16gb 1.00 gtx1080ti 1.00 titan-xp 1.00 t4 0.66")
mutwo_cli_test(calibrate_waves_no_power_limit
               ARGS calibrate --waves ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln
               DEFINES "STDOUT_REGEX=power limit: none")
mutwo_cli_test(calibrate_waves_leave_one_out
               ARGS calibrate --waves --leave-one-out ${MUTWO_TEST_FIXTURES}/calibration/neusight/softmax
                    ${MUTWO_TEST_FIXTURES}/calibration/neusight/relu
                    --held-out-csv held-out.csv
               DEFINES "STDOUT_REGEX=held out a GPU at a time.*a100-pcie-40gb +NeuSight +elementwise .*t4 +NeuSight +softmax .*per category over every GPU.*by measured kernel time.*wrote held-out.csv")
# The H100 lease's linears refine the H100 alone: the cross-GPU gemm group is the A100's 5,217 NeuSight rows.
mutwo_cli_test(calibrate_waves_refine_only
               ARGS calibrate --waves ${MUTWO_TEST_FIXTURES}/calibration/neusight/linear
                    --refine-only ${MUTWO_TEST_FIXTURES}/device/h100-2026-11-27/call3-kernels-seed37/linear
               DEFINES "STDOUT_REGEX=gemm \\(cuda\\) +<=[0-9]+x[0-9]+ +27333 +5 .*refined on their own kernels:.* h100-sxm-80gb \\(1 groups\\)")
# The shipped model scored on the H100 lease's linears (its own refinement's rows: in-sample).
mutwo_cli_test(calibrate_waves_score
               ARGS calibrate --waves --score ${MUTWO_TEST_FIXTURES}/device/h100-2026-11-27/call3-kernels-seed37/linear
               DEFINES "STDOUT_REGEX=the shipped wave model [(]fitted [0-9-]+[)], per GPU and category:\n.*h100-sxm-80gb +NeuSight +GEMM/linear +[0-9]+ .*per category over every GPU")
mutwo_cli_test(calibrate_waves_score_fits_nothing
               ARGS calibrate --waves --score --leave-one-out ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: calibrate --waves --score prices the inputs by a fitted model")
mutwo_cli_test(calibrate_wave_model_needs_score
               ARGS calibrate --waves ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln
                    --wave-model ${CMAKE_SOURCE_DIR}/costmodel/models/waves.json
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: calibrate --waves: --wave-model needs --score")
# Each file once: a file inside a folder given too, or an input given again as --refine-only (by
# another path), weighed its rows twice in the fit and counted them twice.
mutwo_cli_test(calibrate_file_in_folder_twice
               ARGS calibrate --waves ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln
                    ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln/Tesla_T4.csv.gz -o twice.json
               DEFINES EXPECT_RC=1 ABSENT_FILE=twice.json "STDOUT_REGEX=^$"
               "STDERR_REGEX=^error: calibrate: input '[^']*/neusight/ln/Tesla_T4.csv.gz' is read already as input '[^']*/neusight/ln/Tesla_T4.csv.gz' [(]folders expanded[)]. give each file once\n$")
mutwo_cli_test(calibrate_refine_only_file_twice
               ARGS calibrate --waves ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln
                    --refine-only ${MUTWO_TEST_FIXTURES}/calibration/neusight/../neusight/ln/Tesla_P4.csv.gz
               DEFINES EXPECT_RC=1
               "STDERR_REGEX=^error: calibrate: --refine-only input '[^']*/neusight/[.][.]/neusight/ln/Tesla_P4.csv.gz' is read already as input '[^']*/neusight/ln/Tesla_P4.csv.gz'")
mutwo_cli_test(calibrate_refine_only_needs_waves
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln
                    --refine-only ${MUTWO_TEST_FIXTURES}/device/h100-2026-11-27/call3-kernels-seed37/ln
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: calibrate: --refine-only needs --waves")
mutwo_cli_test(calibrate_leave_one_out_needs_waves
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln --leave-one-out
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: calibrate: --leave-one-out needs --waves")
mutwo_cli_test(calibrate_held_out_csv_needs_held_out
               ARGS calibrate --waves ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln --held-out-csv h.csv
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: calibrate --waves: --held-out-csv needs --leave-one-out")
mutwo_cli_test(calibrate_waves_fidelity_needs_held_out
               ARGS calibrate --waves ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln --fidelity f.md
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: calibrate --waves: --fidelity needs --leave-one-out")
mutwo_cli_test(calibrate_waves_no_kfold
               ARGS calibrate --waves ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln --kfold 5
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: calibrate --waves fits one model across every GPU")
mutwo_cli_test(calibrate_empty_folder ARGS calibrate --waves ${MUTWO_TEST_FIXTURES}/calibration/neusight/device_configs
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: calibrate: folder '.*device_configs' holds no [*].csv")
# The default source names the wave model and covers every op of a zoo step.
mutwo_cli_test(simulate_waves_default ARGS simulate --model resnet18 --batch 8 --gpu l4
               DEFINES "STDOUT_REGEX=device +l4 [(]NVIDIA L4[)].*cost source +waves [(]kernel model fitted [0-9-]+ across 9 GPUs, from its datasheet alone, math at 0.49 of the boost clock on a 72 W board: 202 of 202 ops[)]")
# The validation report's layout section (scripts/validation_kernels.py) on hand-made rows of
# scripts/conv-layout-sample.py's format: the measured sums, the shipped model's price, a refused setting.
if(EXISTS /usr/bin/python3)
  add_test(NAME conv_layout_report COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/conv_layout_report.py
                                           $<TARGET_FILE:mutwo>)
endif()
# Bad input (the audit of calibrate): every option and output checked before anything is fitted or
# written, so a refusal leaves no file behind.
mutwo_cli_test(calibrate_kfold_past_rows
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/deepbench_gemm.csv --device t4 -o kf.json --kfold 1000
               DEFINES EXPECT_RC=1 ABSENT_FILE=kf.json
                       "STDERR_REGEX=^error: k-fold: device 't4', kernel 'gemm', precision 'fp16' has 160 rows, fewer than 1000 folds")
mutwo_cli_test(calibrate_kfold_past_rows_out_dir
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/deepbench_gemm.csv --out-dir kfold-dir --kfold 1000
               DEFINES EXPECT_RC=1 ABSENT_FILE=kfold-dir
                       "STDERR_REGEX=^error: k-fold: device '[a-z0-9-]+', kernel 'gemm', precision 'fp[0-9]+' has 160 rows, fewer than 1000 folds")
mutwo_cli_test(calibrate_fidelity_missing_folder
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/deepbench_gemm.csv --device t4 -o kf-fid.json --kfold 2
                    --fidelity /nonexist/x.md
               DEFINES EXPECT_RC=1 ABSENT_FILE=kf-fid.json
                       "STDERR_REGEX=^error: cannot write --fidelity '/nonexist/x.md': no directory '/nonexist'")
mutwo_cli_test(calibrate_same_output_twice
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/deepbench_gemm.csv --device t4 -o twice.md --kfold 2
                    --fidelity twice.md
               DEFINES EXPECT_RC=1 ABSENT_FILE=twice.md
                       "STDERR_REGEX=^error: calibrate: -o and --fidelity are the same file 'twice.md'")
mutwo_cli_test(calibrate_waves_held_out_csv_missing_folder
               ARGS calibrate --waves --leave-one-out ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln/Tesla_P4.csv.gz
                    ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln/Tesla_T4.csv.gz -o wl.json --held-out-csv /nonexist/h.csv
               DEFINES EXPECT_RC=1 ABSENT_FILE=wl.json
                       "STDERR_REGEX=^error: cannot write --held-out-csv '/nonexist/h.csv': no directory '/nonexist'")
mutwo_cli_test(calibrate_out_dir_not_a_folder
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/deepbench_gemm.csv --out-dir /dev/null
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: calibrate: cannot write --out-dir '/dev/null': '/dev/null' is not a folder")
# /proc takes no folder: named with the reason (root passes the up-front check and fails creating it).
mutwo_cli_test(calibrate_out_dir_uncreatable
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/deepbench_gemm.csv --device t4 --out-dir /proc/x
               DEFINES EXPECT_RC=1
                       "STDERR_REGEX=^error: calibrate: cannot (create --out-dir folder '/proc/x': |write --out-dir '/proc/x': folder '/proc': )[A-Za-z]")
mutwo_cli_test(calibrate_header_only
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/header_only.csv --out-dir header-only-dir
               DEFINES EXPECT_RC=1 ABSENT_FILE=header-only-dir
                       "STDERR_REGEX=^error: calibrate: no rows in the inputs [(][^)]*header_only.csv[)]: nothing to fit")
mutwo_cli_test(calibrate_header_only_o
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/header_only.csv -o header-only.json
               DEFINES EXPECT_RC=1 ABSENT_FILE=header-only.json
                       "STDERR_REGEX=^error: calibrate: no rows in the inputs [(][^)]*header_only.csv[)]: nothing to fit")
# Two GPUs' layer norms hold no batched GEMM: no pair, so no median (it printed a made-up 0.0 %).
mutwo_cli_test(calibrate_waves_no_fusion_pairs
               ARGS calibrate --waves --leave-one-out ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln/Tesla_P4.csv.gz
                    ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln/Tesla_T4.csv.gz
               DEFINES "STDOUT_REGEX=\nfusion: no matched pairs [(][^\n]*[)]: no median error\n$")
mutwo_cli_test(calibrate_score_huge_model
               ARGS calibrate --waves --score ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln/Tesla_T4.csv.gz
                    --wave-model ${MUTWO_TEST_FIXTURES}/calibration/wave_model_huge.json
               DEFINES EXPECT_RC=1
                       "STDERR_REGEX=^error: wave model '[^']*wave_model_huge.json': groups 0 [(]norm[)]: field 'compute'.0. [(]c0[)] = 1e[+]308 is more than 3.6e[+]12 ns")
mutwo_cli_test(calibrate_score_negative_harness
               ARGS calibrate --waves --score ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln/Tesla_T4.csv.gz
                    --wave-model ${MUTWO_TEST_FIXTURES}/calibration/wave_model_negative_harness.json
               DEFINES EXPECT_RC=1
                       "STDERR_REGEX=^error: wave model '[^']*': harness 0 [(][a-z0-9-]+, 'neusight ln', norm[)]: field 'floor_ns' = -1 must be > 0")
mutwo_cli_test(calibrate_score_prices_nothing
               ARGS calibrate --waves --score ${MUTWO_TEST_FIXTURES}/calibration/neusight/ln/Tesla_T4.csv.gz
                    --wave-model ${MUTWO_TEST_FIXTURES}/calibration/wave_model_bare.json --held-out-csv scored-nothing.csv
               DEFINES EXPECT_RC=1 ABSENT_FILE=scored-nothing.csv
                       "STDERR_REGEX=^error: calibrate --waves --score: no kernel of the inputs is priced by the model: '[^']*wave_model_bare.json' [(]0 groups, 0 refinements[)]")
mutwo_cli_test(calibrate_too_fast
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/too_fast.csv -o too-fast.json
               DEFINES EXPECT_RC=1 ABSENT_FILE=too-fast.json
                       "STDERR_REGEX=^error: [^\n]*too_fast.csv:4: field 'time_ns' = '1': 137438953472 FLOPs in 1 ns is 1.37e[+]11 FLOP/ns, more than 2.25e[+]07")
mutwo_cli_test(calibrate_deepbench_too_fast
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/deepbench_too_fast.csv -o db-too-fast.json
               DEFINES EXPECT_RC=1 ABSENT_FILE=db-too-fast.json
                       "STDERR_REGEX=^error: [^\n]*deepbench_too_fast.csv:4: field 'time_ms' = '0.0000001': 99123200 FLOPs in 1 ns")
mutwo_cli_test(calibrate_shape_overflow
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/shape_overflow.csv
               DEFINES EXPECT_RC=1
                       "STDERR_REGEX=^error: [^\n]*shape_overflow.csv:3: gemm 4611686018427387904 x [^\n]* overflows 64-bit integers")
mutwo_cli_test(calibrate_bad_date
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/deepbench_gemm.csv --device t4 -o bad-date.json --date notadate
               DEFINES EXPECT_RC=1 ABSENT_FILE=bad-date.json
                       "STDERR_REGEX=^error: calibrate: --date 'notadate' is not a date YYYY-MM-DD")
mutwo_cli_test(calibrate_no_such_day
               ARGS calibrate ${MUTWO_TEST_FIXTURES}/calibration/deepbench_gemm.csv --device t4 -o no-such-day.json --date 2026-02-29
               DEFINES EXPECT_RC=1 ABSENT_FILE=no-such-day.json
                       "STDERR_REGEX=^error: calibrate: --date '2026-02-29' is not a date YYYY-MM-DD")
