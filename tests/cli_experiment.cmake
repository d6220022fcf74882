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

# Everything is checked before a file is created or a configuration run: the spec's values, the
# sweep's size (counted, not listed), where the CSV goes and the database's schema. Each refusal
# leaves no database behind (the `compare` after it finds none).
add_test(NAME cli_experiment_refused_clean
         COMMAND ${CMAKE_COMMAND} -E rm -f ${MUTWO_CLI_OUT}/experiment-huge.db ${MUTWO_CLI_OUT}/experiment-zero.db
                 ${MUTWO_CLI_OUT}/experiment-fraction.db ${MUTWO_CLI_OUT}/experiment-out-file.db
                 ${MUTWO_CLI_OUT}/experiment-out-proc.db ${MUTWO_CLI_OUT}/experiment-one-limit.db
                 ${MUTWO_CLI_OUT}/tiny_dtr.csv ${MUTWO_CLI_OUT}/experiment-samep)
set_tests_properties(cli_experiment_refused_clean PROPERTIES FIXTURES_SETUP cli_experiment_refused)
function(experiment_refused name db)
  mutwo_cli_test(${name} ${ARGN} PROPERTIES FIXTURES_REQUIRED cli_experiment_refused)
  mutwo_cli_test(${name}_no_db ARGS compare --db ${MUTWO_CLI_OUT}/${db}
                 DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: results database '[^']*${db}' does not exist\n$"
                 PROPERTIES DEPENDS cli_${name} FIXTURES_REQUIRED cli_experiment_refused)
endfunction()
experiment_refused(experiment_huge_sweep experiment-huge.db
                   ARGS experiment ${MUTWO_TEST_FIXTURES}/experiments/huge_sweep.toml --dry-run --db experiment-huge.db
                   DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: [^\n]*huge_sweep\\.toml: sweep has 1075200 configurations [(]20 model/batch pairs x 64 model_counts x 21 gpus x 10 memory_limits x 4 strategies[)], more than the limit 100000. split it into several specs\n$")
experiment_refused(experiment_zero_limit experiment-zero.db
                   ARGS experiment ${MUTWO_TEST_FIXTURES}/experiments/zero_limit.toml --db experiment-zero.db
                   DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: [^\n]*zero_limit\\.toml: 'sweep\\.memory_limits' = '0' is 0 bytes: a memory limit must be at least 1 byte")
experiment_refused(experiment_fraction_limit experiment-fraction.db
                   ARGS experiment ${MUTWO_TEST_FIXTURES}/experiments/fraction_limit.toml --db experiment-fraction.db
                   DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: [^\n]*fraction_limit\\.toml: 'sweep\\.memory_limits' = '1\\.5B': invalid memory size '1\\.5B': a size in bytes [(]B[)] is a whole number of bytes")
experiment_refused(experiment_one_limit_twice experiment-one-limit.db
                   ARGS experiment ${MUTWO_TEST_FIXTURES}/experiments/one_limit_twice.toml --db experiment-one-limit.db
                   DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$" "STDERR_REGEX=^error: [^\n]*one_limit_twice\\.toml: the sweep gives one configuration twice, as 'bert-mini x2, batch 4, a100-40gb, limit device' and as 'bert-mini x2, batch 4, a100-40gb, limit 40GiB' [(]resolved: [{][^\n]*\"memory_limit_bytes\":42949672960,[^\n]*[}][)]. two of its values name one setting")
experiment_refused(experiment_out_is_file experiment-out-file.db
                   ARGS experiment experiments/tiny_strategies.toml --db ${MUTWO_CLI_OUT}/experiment-out-file.db
                        --out compare/not-a-database.txt
                   DEFINES WORKDIR=${MUTWO_TEST_FIXTURES} EXPECT_RC=1 "STDERR_REGEX=^error: --out 'compare/not-a-database\\.txt': cannot write 'compare/not-a-database\\.txt/tiny_strategies\\.csv': 'compare/not-a-database\\.txt' is a file, not a folder\n$")
experiment_refused(experiment_out_cannot_create experiment-out-proc.db
                   ARGS experiment ${MUTWO_TEST_FIXTURES}/experiments/tiny_strategies.toml --db experiment-out-proc.db
                        --out /proc/mutwo-results
                   DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: --out '/proc/mutwo-results': cannot write '/proc/mutwo-results/tiny_strategies\\.csv': cannot create folder '/proc/mutwo-results' in '/proc': ")
# The database is neither the CSV (which overwrote it) nor a folder on the CSV's way (refused only
# after the sweep had run).
experiment_refused(experiment_db_is_csv tiny_dtr.csv
                   ARGS experiment ${MUTWO_TEST_FIXTURES}/experiments/tiny_dtr.toml --db tiny_dtr.csv --out .
                   DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: --db 'tiny_dtr\\.csv' is the CSV --out '\\.' writes [(]\\./tiny_dtr\\.csv[)]: give each its own file\n$")
experiment_refused(experiment_db_is_out experiment-samep
                   ARGS experiment ${MUTWO_TEST_FIXTURES}/experiments/tiny_dtr.toml --db experiment-samep --out experiment-samep
                   DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: --out 'experiment-samep' needs 'experiment-samep' to be a folder, and it is the --db file: give each its own path\n$")
# A database with a renamed column is refused before a run is inserted (not after 16, at the table).
mutwo_cli_test(experiment_renamed_column ARGS experiment ${MUTWO_TEST_FIXTURES}/experiments/tiny_strategies.toml
                   --db compare-renamecol.db --out experiment-renamecol
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: results database 'compare-renamecol\\.db' has no column 'peak_bytes' in table measurements"
               PROPERTIES FIXTURES_REQUIRED cli_compare_renamecol_db)
