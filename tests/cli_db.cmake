# `mutwo db merge` end to end. Included by tests/CMakeLists.txt inside its if(TARGET mutwo) block,
# after cli_compare.cmake (whose make_results_fixture writes the inputs):
#   db-merge-a.db  `runs`: six runs, six configurations
#   db-merge-b.db  `shard`: run 1 of `runs` again, two runs of experiment fixture_sweep, the experiment
# so a merge of both holds 6 + 3 - 1 = 8 runs and one experiment.
set(db_merge_out ${MUTWO_CLI_OUT}/db-merge-out.db)
add_test(NAME cli_db_fixture_a COMMAND make_results_fixture runs ${MUTWO_CLI_OUT}/db-merge-a.db)
add_test(NAME cli_db_fixture_b COMMAND make_results_fixture shard ${MUTWO_CLI_OUT}/db-merge-b.db)
# Outputs of earlier test runs go, so every run merges into a new file.
add_test(NAME cli_db_fixture_clean
         COMMAND ${CMAKE_COMMAND} -E rm -f ${db_merge_out} ${db_merge_out}-wal ${db_merge_out}-shm
                 ${MUTWO_CLI_OUT}/db-merge-bad-out.db ${MUTWO_CLI_OUT}/db-merge-self-out.db
                 ${MUTWO_CLI_OUT}/db-merge-cell-out.db)
set_tests_properties(cli_db_fixture_a cli_db_fixture_b cli_db_fixture_clean PROPERTIES FIXTURES_SETUP cli_db_inputs)

mutwo_cli_test(db_help ARGS db --help DEFINES "STDOUT_REGEX=merge")
mutwo_cli_test(db_merge_help ARGS db merge --help DEFINES "STDOUT_REGEX=OUT.*IN.*created when absent")
mutwo_cli_test(db_needs_subcommand ARGS db DEFINES EXPECT_RC=2 "STDERR_REGEX=A subcommand is required")
mutwo_cli_test(db_merge_needs_input ARGS db merge db-merge-none.db DEFINES EXPECT_RC=2 "STDERR_REGEX=IN is required")

# a: 6 new runs. b: 2 new runs, run 1 of `runs` already present (same config hash and mutwo version),
# and the experiment fixture_sweep.
mutwo_cli_test(db_merge ARGS db merge db-merge-out.db db-merge-a.db db-merge-b.db
               DEFINES "STDOUT_REGEX=^merged db-merge-a\\.db: 6 runs added, 0 already present\; 0 experiments added, 0 updated\nmerged db-merge-b\\.db: 2 runs added, 1 already present\; 1 experiment added, 0 updated\ntotal: 8 runs added, 1 already present\; 1 experiment added, 0 updated\; db-merge-out\\.db now holds 8 runs\n$"
               PROPERTIES FIXTURES_REQUIRED cli_db_inputs FIXTURES_SETUP cli_db_merged)
# Merging again adds nothing: 6 + 3 runs already present.
mutwo_cli_test(db_merge_again ARGS db merge db-merge-out.db db-merge-a.db db-merge-b.db
               DEFINES "STDOUT_REGEX=\ntotal: 0 runs added, 9 already present\; 0 experiments added, 0 updated\; db-merge-out\\.db now holds 8 runs\n$"
               PROPERTIES FIXTURES_REQUIRED cli_db_merged FIXTURES_SETUP cli_db_merged_twice)
# The merged file reads back: 8 runs, the 3 of `runs` with both figures compared as before.
mutwo_cli_test(db_merge_compare ARGS compare --db db-merge-out.db --json
               DEFINES "JSON_CHECKS=summary|runs=8\;summary|compared=3\;rows|0|run_id=1\;rows|0|step_rel_error=0.25\;rows|6|kind=simulate"
               PROPERTIES FIXTURES_REQUIRED "cli_db_merged;cli_db_merged_twice")

# Every input is checked before OUT is touched: a missing one is named, and OUT is not created.
mutwo_cli_test(db_merge_missing_input ARGS db merge db-merge-bad-out.db db-merge-a.db db-merge-missing.db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: results database 'db-merge-missing\\.db' does not exist\n$"
               PROPERTIES FIXTURES_REQUIRED cli_db_inputs)
mutwo_cli_test(db_merge_missing_input_no_out ARGS compare --db db-merge-bad-out.db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: results database 'db-merge-bad-out\\.db' does not exist\n$"
               PROPERTIES DEPENDS cli_db_merge_missing_input FIXTURES_REQUIRED cli_db_inputs)
mutwo_cli_test(db_merge_not_a_database
               ARGS db merge ${MUTWO_CLI_OUT}/db-merge-bad-out.db compare/not-a-database.txt
               DEFINES WORKDIR=${MUTWO_TEST_FIXTURES} EXPECT_RC=1
                       "STDERR_REGEX=^error: results database 'compare/not-a-database\\.txt' is not a SQLite database [(]file is not a database[)]\n$"
               PROPERTIES FIXTURES_REQUIRED cli_db_inputs)
mutwo_cli_test(db_merge_into_itself ARGS db merge db-merge-a.db db-merge-b.db ./db-merge-a.db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: cannot merge results database '\\./db-merge-a\\.db' into itself [(]it is OUT, 'db-merge-a\\.db'[)]\n$"
               PROPERTIES FIXTURES_REQUIRED cli_db_inputs)

# Every cell of every input is read through before OUT is touched: a bad one is named (the table, the
# run, the column and the value), never copied in as a clean number, and OUT is not created.
mutwo_cli_test(db_merge_bad_cell ARGS db merge db-merge-cell-out.db db-merge-a.db compare-meastext.db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: results database 'compare-meastext\\.db': table measurements, run 1, column step_time_ns = 'abc': not an integer [(]a TEXT value[)]\n$"
               PROPERTIES FIXTURES_REQUIRED "cli_db_inputs;cli_compare_meastext_db")
mutwo_cli_test(db_merge_bad_cell_no_out ARGS compare --db db-merge-cell-out.db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: results database 'db-merge-cell-out\\.db' does not exist\n$"
               PROPERTIES DEPENDS cli_db_merge_bad_cell)

# An OUT that exists gets the same checks as the inputs, before anything is written to it: one with
# damaged pages (it opens; reading every page does not) or a bad cell is refused and left byte for byte.
set(db_damaged ${MUTWO_CLI_OUT}/db-merge-damaged.db)
set(db_bad_out ${MUTWO_CLI_OUT}/db-merge-bad-cell-out.db)
add_test(NAME cli_db_fixture_damaged COMMAND make_results_fixture pages ${db_damaged})
add_test(NAME cli_db_fixture_bad_out COMMAND make_results_fixture runs ${db_bad_out}
                                             "UPDATE predictions SET peak_bytes = 1.5 WHERE run_id = 2")
set_tests_properties(cli_db_fixture_damaged cli_db_fixture_bad_out PROPERTIES FIXTURES_SETUP cli_db_bad_outs)
add_test(NAME cli_db_fixture_damaged_copy COMMAND ${CMAKE_COMMAND} -E copy ${db_damaged} ${db_damaged}.orig)
add_test(NAME cli_db_fixture_bad_out_copy COMMAND ${CMAKE_COMMAND} -E copy ${db_bad_out} ${db_bad_out}.orig)
set_tests_properties(cli_db_fixture_damaged_copy PROPERTIES FIXTURES_SETUP cli_db_bad_outs
                     DEPENDS cli_db_fixture_damaged)
set_tests_properties(cli_db_fixture_bad_out_copy PROPERTIES FIXTURES_SETUP cli_db_bad_outs
                     DEPENDS cli_db_fixture_bad_out)
mutwo_cli_test(db_merge_into_damaged ARGS db merge db-merge-damaged.db db-merge-a.db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: results database 'db-merge-damaged\\.db' is corrupt [(]"
               PROPERTIES FIXTURES_REQUIRED "cli_db_inputs;cli_db_bad_outs")
mutwo_cli_test(db_merge_into_bad_cell ARGS db merge db-merge-bad-cell-out.db db-merge-a.db
               DEFINES EXPECT_RC=1 "STDERR_REGEX=^error: results database 'db-merge-bad-cell-out\\.db': table predictions, run 2, column peak_bytes = 1\\.5: not an integer [(]a REAL value[)]\n$"
               PROPERTIES FIXTURES_REQUIRED "cli_db_inputs;cli_db_bad_outs")
add_test(NAME cli_db_merge_damaged_unchanged
         COMMAND ${CMAKE_COMMAND} -E compare_files ${db_damaged} ${db_damaged}.orig)
add_test(NAME cli_db_merge_bad_cell_unchanged
         COMMAND ${CMAKE_COMMAND} -E compare_files ${db_bad_out} ${db_bad_out}.orig)
set_tests_properties(cli_db_merge_damaged_unchanged PROPERTIES DEPENDS cli_db_merge_into_damaged
                     FIXTURES_REQUIRED cli_db_bad_outs)
set_tests_properties(cli_db_merge_bad_cell_unchanged PROPERTIES DEPENDS cli_db_merge_into_bad_cell
                     FIXTURES_REQUIRED cli_db_bad_outs)
# Readers by a user who may not write the database or its folder leave nothing beside it and do not
# fail (tests/read_only_db.sh; skipped where no such user can run mutwo).
add_test(NAME cli_db_read_only
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/read_only_db.sh $<TARGET_FILE:mutwo> ${MUTWO_CLI_OUT}/read-only-db
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_db_read_only PROPERTIES SKIP_RETURN_CODE 77)
