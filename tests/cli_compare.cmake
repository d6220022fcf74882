# `mutwo compare` end to end. Included by tests/CMakeLists.txt inside its if(TARGET mutwo) block.
# The databases are written by make_results_fixture through the library (no binary fixture is
# checked in); its six runs and their hand-derived errors are listed in make_results_fixture.cpp.
add_executable(make_results_fixture make_results_fixture.cpp)
target_link_libraries(make_results_fixture PRIVATE mutwo::experiments mutwo_warnings mutwo_glue_flags)
add_test(NAME cli_compare_fixture_runs COMMAND make_results_fixture runs ${MUTWO_CLI_OUT}/compare-runs.db)
add_test(NAME cli_compare_fixture_empty COMMAND make_results_fixture empty ${MUTWO_CLI_OUT}/compare-empty.db)
set_tests_properties(cli_compare_fixture_runs PROPERTIES FIXTURES_SETUP cli_compare_runs_db)
set_tests_properties(cli_compare_fixture_empty PROPERTIES FIXTURES_SETUP cli_compare_empty_db)

mutwo_cli_test(compare_help ARGS compare --help DEFINES "STDOUT_REGEX=--db.*must exist.*--json.*--run")
# The whole table and summary line, golden: runs 1, 2, 5 compared; |step errors| 0, 0.25, 0.5 ->
# median 25.0 %, max 50.0 %; |peak errors| 0.125, 0.125, 0.5 -> median 12.5 %, max 50.0 %.
mutwo_cli_test(compare_table ARGS compare --db compare-runs.db
               DEFINES STDOUT_FILE=${MUTWO_TEST_FIXTURES}/compare/compare_runs.out
               PROPERTIES FIXTURES_REQUIRED cli_compare_runs_db)
mutwo_cli_test(compare_table_summary ARGS compare --db compare-runs.db
               DEFINES "STDOUT_REGEX=\n3 runs compared [(]of 6[)]: step time error median 25\\.0 %, max 50\\.0 %. peak memory error median 12\\.5 %, max 50\\.0 %\n$"
               PROPERTIES FIXTURES_REQUIRED cli_compare_runs_db)
mutwo_cli_test(compare_table_rows ARGS compare --db compare-runs.db
               DEFINES "STDOUT_REGEX=\n +1  bert-base x4 [[]2,2[]] capuchin on cuda:0 +125\\.000 ms +100\\.000 ms +[+]25\\.0 % +28\\.00 GiB +32\\.00 GiB +-12\\.5 % +ok\n.*\n +3  gpt2-small x2 [[]2[]] none on cuda:0 +OOM +200\\.000 ms +- +OOM +30\\.00 GiB +- +predicted OOM\n +4  vit-b16 x8 [[]4,4[]] mutwo on h100-sxm-80gb +400\\.000 ms +- +- +60\\.00 GiB +- +- +no measurement\n"
               PROPERTIES FIXTURES_REQUIRED cli_compare_runs_db)
# Exact integers and the exact binary fractions 0.25, -0.5, 0.125; CMake reads a JSON null as "".
mutwo_cli_test(compare_json ARGS compare --db compare-runs.db --json
               DEFINES "JSON_CHECKS=database=compare-runs.db\;rows|0|run_id=1\;rows|0|predicted_step_ns=125000000\;rows|0|measured_step_ns=100000000\;rows|0|step_rel_error=0.25\;rows|0|predicted_peak_bytes=30064771072\;rows|0|measured_peak_bytes=34359738368\;rows|0|peak_rel_error=-0.125\;rows|0|status=ok\;rows|1|step_rel_error=-0.5\;rows|1|peak_rel_error=0.125\;rows|2|status=predicted OOM\;rows|2|predicted_oom=ON\;rows|2|predicted_step_ns=\;rows|2|measured_step_ns=200000000\;rows|3|status=no measurement\;rows|3|kind=simulate\;rows|5|status=measured OOM\;rows|5|measured_peak_bytes=\;summary|runs=6\;summary|compared=3\;summary|step_time|count=3\;summary|step_time|median_abs_rel_error=0.25\;summary|step_time|max_abs_rel_error=0.5\;summary|peak_memory|median_abs_rel_error=0.125\;summary|peak_memory|max_abs_rel_error=0.5"
               PROPERTIES FIXTURES_REQUIRED cli_compare_runs_db)
# Runs 2 and 5 only: |step errors| 0.5, 0 -> median (0 + 0.5) / 2 = 0.25, max 0.5.
mutwo_cli_test(compare_selected_runs ARGS compare --db compare-runs.db --run 2 --run 5 --json
               DEFINES "JSON_CHECKS=rows|0|run_id=2\;rows|1|run_id=5\;summary|runs=2\;summary|compared=2\;summary|step_time|median_abs_rel_error=0.25\;summary|step_time|max_abs_rel_error=0.5"
               PROPERTIES FIXTURES_REQUIRED cli_compare_runs_db)
# A run given twice counted twice in the summary (--run 2 --run 2 --run 5: median 0.5 instead of 0.25).
mutwo_cli_test(compare_run_twice ARGS compare --db compare-runs.db --run 2 --run 5 --run 2
               DEFINES EXPECT_RC=1 "STDOUT_REGEX=^$" "STDERR_REGEX=^error: run id 2 is given twice. give each run once\n$"
               PROPERTIES FIXTURES_REQUIRED cli_compare_runs_db)
mutwo_cli_test(compare_unknown_run ARGS compare --db compare-runs.db --run 99
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: no run 99 in results database 'compare-runs.db'\n$"
               PROPERTIES FIXTURES_REQUIRED cli_compare_runs_db)
mutwo_cli_test(compare_empty ARGS compare --db compare-empty.db DEFINES "STDOUT_REGEX=^no runs in compare-empty.db\n$"
               PROPERTIES FIXTURES_REQUIRED cli_compare_empty_db)
mutwo_cli_test(compare_empty_json ARGS compare --db compare-empty.db --json
               DEFINES "JSON_CHECKS=summary|runs=0\;summary|compared=0\;summary|step_time|median_abs_rel_error="
               PROPERTIES FIXTURES_REQUIRED cli_compare_empty_db)
# A missing database is an error and is not created: the second run fails the same way.
mutwo_cli_test(compare_missing_db ARGS compare --db compare-missing.db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: results database 'compare-missing.db' does not exist\n$")
mutwo_cli_test(compare_missing_db_not_created ARGS compare --db compare-missing.db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: results database 'compare-missing.db' does not exist\n$"
               PROPERTIES DEPENDS cli_compare_missing_db)
mutwo_cli_test(compare_default_db_missing ARGS compare
               DEFINES WORKDIR=${MUTWO_TEST_FIXTURES}/compare EXPECT_RC=1
                       "STDERR_REGEX=^error: results database 'results.db' does not exist\n$")
mutwo_cli_test(compare_not_a_database ARGS compare --db compare/not-a-database.txt
               DEFINES WORKDIR=${MUTWO_TEST_FIXTURES} EXPECT_RC=1
                       "STDERR_REGEX=^error: results database 'compare/not-a-database.txt' is not a SQLite database [(]file is not a database[)]\n$")

# Cells the schema does not allow, as another program could have written them (make_results_fixture
# runs the SQL with CHECK constraints off): each is an error naming the database, the table, the run,
# the column and the value, never a number read from it (1.5 read as 1, 'abc' as 0).
set(compare_bad_cells
    "measreal|UPDATE measurements SET step_time_ns = 1.5 WHERE run_id = 1|table measurements, run 1, column step_time_ns = 1\\.5: not an integer [(]a REAL value[)]"
    "meastext|UPDATE measurements SET step_time_ns = 'abc' WHERE run_id = 1|table measurements, run 1, column step_time_ns = 'abc': not an integer [(]a TEXT value[)]"
    "measneg|UPDATE measurements SET step_time_ns = -100 WHERE run_id = 1|table measurements, run 1, column step_time_ns = -100: must be >= 0"
    "meas0|UPDATE measurements SET step_time_ns = 0 WHERE run_id = 1|table measurements, run 1, column step_time_ns = 0: a measurement without OOM must have a positive step time"
    "oom2|UPDATE measurements SET oom = 2 WHERE run_id = 1|table measurements, run 1, column oom = 2: must be 0 or 1"
    "badkind|UPDATE runs SET kind = 'zzz' WHERE id = 1|table runs, run 1, column kind = 'zzz': must be one of run, simulate, profile")
foreach(case IN LISTS compare_bad_cells)
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 sql)
  list(GET parts 2 message)
  add_test(NAME cli_compare_fixture_${name}
           COMMAND make_results_fixture runs ${MUTWO_CLI_OUT}/compare-${name}.db "${sql}")
  set_tests_properties(cli_compare_fixture_${name} PROPERTIES FIXTURES_SETUP cli_compare_${name}_db)
  mutwo_cli_test(compare_${name} ARGS compare --db compare-${name}.db
                 DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: results database 'compare-${name}\\.db': ${message}\n$"
                 PROPERTIES FIXTURES_REQUIRED cli_compare_${name}_db)
endforeach()
# A renamed column is found when the file is opened, not at the first query that names it.
add_test(NAME cli_compare_fixture_renamecol
         COMMAND make_results_fixture runs ${MUTWO_CLI_OUT}/compare-renamecol.db
                 "ALTER TABLE measurements RENAME COLUMN peak_bytes TO peakb")
set_tests_properties(cli_compare_fixture_renamecol PROPERTIES FIXTURES_SETUP cli_compare_renamecol_db)
mutwo_cli_test(compare_renamed_column ARGS compare --db compare-renamecol.db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: results database 'compare-renamecol\\.db' has no column 'peak_bytes' in table measurements [(]schema version 2: run_id, step_time_ns, .*the file's: .*peakb"
               PROPERTIES FIXTURES_REQUIRED cli_compare_renamecol_db)
# --run takes positive run ids that fit in int64: a usage error, not a 300-digit range or a clamped id.
mutwo_cli_test(compare_run_zero ARGS compare --db compare-runs.db --run 0
               DEFINES EXPECT_RC=2 "STDERR_REGEX=^--run: must be a positive run id [(]1, 2, ...[)], not '0'\n"
               PROPERTIES FIXTURES_REQUIRED cli_compare_runs_db)
mutwo_cli_test(compare_run_negative ARGS compare --db compare-runs.db --run=-3
               DEFINES EXPECT_RC=2 "STDERR_REGEX=^--run: must be a positive run id [(]1, 2, ...[)], not '-3'\n"
               PROPERTIES FIXTURES_REQUIRED cli_compare_runs_db)
mutwo_cli_test(compare_run_huge ARGS compare --db compare-runs.db --run 99999999999999999999
               DEFINES EXPECT_RC=2 "STDERR_REGEX=^--run: '99999999999999999999' must be a whole number from -9223372036854775808 to 9223372036854775807\n"
               PROPERTIES FIXTURES_REQUIRED cli_compare_runs_db)
mutwo_cli_test(compare_run_largest ARGS compare --db compare-runs.db --run 9223372036854775807
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: no run 9223372036854775807 in results database 'compare-runs\\.db'\n$"
               PROPERTIES FIXTURES_REQUIRED cli_compare_runs_db)
