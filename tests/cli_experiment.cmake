# `mutwo experiment` end to end. Included by tests/CMakeLists.txt inside its if(TARGET mutwo) block.
# The Python that draws the figures is Debian's (/usr/bin/python3 with python3-matplotlib, installed
# by scripts/setup.sh), found first so that another python3 on PATH does not shadow it.
find_program(MUTWO_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT MUTWO_PYTHON)
  find_program(MUTWO_PYTHON NAMES python3 REQUIRED)
endif()
add_test(NAME cli_experiment_end_to_end
         COMMAND ${CMAKE_COMMAND} -DMUTWO=$<TARGET_FILE:mutwo> -DSPECS=${MUTWO_TEST_FIXTURES}/experiments
                 -DPLOT=${PROJECT_SOURCE_DIR}/scripts/plot.py -DPYTHON=${MUTWO_PYTHON}
                 -DFIXTURE=$<TARGET_FILE:make_results_fixture>
                 -DWORKDIR=${MUTWO_CLI_OUT}/experiment-e2e -P ${CMAKE_CURRENT_SOURCE_DIR}/experiment_e2e.cmake)

mutwo_cli_test(experiment_help ARGS experiment --help
               DEFINES "STDOUT_REGEX=--db.*--shard.*--jobs.*--out.*--dry-run.*mutwo_throughput.*strategies .*hfta")
mutwo_cli_test(experiment_dry_run ARGS experiment mutwo_throughput --dry-run --db experiment-none.db --json
               DEFINES "JSON_CHECKS=experiment=mutwo_throughput\;tasks_total=96\;rows=384\;rows_stored=0\;tasks|0|label=vit-b16 x2, batch 32, a100-40gb, limit device\;tasks|0|rows=4")
mutwo_cli_test(experiment_unknown_spec ARGS experiment mutwo_thruput
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: unknown experiment 'mutwo_thruput': not a file, nor a shipped spec. shipped: dtr_pareto, fidelity, harmony, lean_ops, max_models, memory_sweep, mutwo_breakdown, mutwo_table1, mutwo_throughput, predicted_vs_measured\n$")
mutwo_cli_test(experiment_bad_spec ARGS experiment ${MUTWO_TEST_FIXTURES}/experiments/bad_key.toml --db experiment-bad.db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: [^\n]*bad_key.toml:11: 'sweep.model_count' is not a known key here. valid: models, model_counts")
mutwo_cli_test(experiment_bad_shard ARGS experiment mutwo_throughput --shard 4/4 --dry-run
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: --shard '4/4' must be i/n with whole numbers 0 <= i < n")
mutwo_cli_test(experiment_no_spec ARGS experiment DEFINES EXPECT_RC=2 "STDERR_REGEX=spec is required")
