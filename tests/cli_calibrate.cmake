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
               DEFINES "STDOUT_REGEX=device +t4 .*cost source +calibrated [(]t4 profile of 2025-06-01, 320 kernels: [0-9]+ of [0-9]+ ops; rest analytic[)]"
               PROPERTIES FIXTURES_REQUIRED cli_t4_profile)
# The shipped V100 profile, with no --profile.
mutwo_cli_test(simulate_calibrated_shipped ARGS simulate --model resnet18 --batch 8 --gpu v100-16gb --cost-source calibrated
               DEFINES "STDOUT_REGEX=cost source +calibrated [(]v100-16gb profile of [0-9-]+, 864 kernels: [0-9]+ of [0-9]+ ops; rest analytic")
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
