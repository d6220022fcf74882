# End to end, as a user runs it: the tiny specs into one database (rows, CSVs), a second run that
# skips everything, a run killed part-way (SIGKILL: no chance to clean up) and one interrupted
# (SIGINT, as Ctrl-C) that each resume to byte-identical CSVs, and scripts/plot.py drawing every
# figure of that database. Run as a CMake script:
#   cmake -DMUTWO=<binary> -DSPECS=<tests/fixtures/experiments> -DPLOT=<scripts/plot.py>
#         -DPYTHON=<python3 with matplotlib> -DFIXTURE=<make_results_fixture> -DWORKDIR=<scratch dir>
#         -P experiment_e2e.cmake
cmake_minimum_required(VERSION 3.25)

file(REMOVE_RECURSE ${WORKDIR})
file(MAKE_DIRECTORY ${WORKDIR})

function(run expect_rc)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT "${expect_rc}" STREQUAL "any" AND NOT rc STREQUAL expect_rc)
    message(FATAL_ERROR "expected exit status ${expect_rc}, got ${rc}: ${ARGN}\n--- stdout ---\n${out}--- stderr ---\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

function(expect_match text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what} does not match '${regex}':\n${text}")
  endif()
endfunction()

function(expect_lines file n)
  file(STRINGS ${file} lines)
  list(LENGTH lines count)
  if(NOT count EQUAL n)
    message(FATAL_ERROR "${file}: ${count} lines, expected ${n}")
  endif()
endfunction()

# 1. Every tiny spec into full.db: rows counted on stdout, progress on stderr, a CSV each
#    (header + 16, 9 and 4 rows).
foreach(spec tiny_strategies tiny_policies tiny_dtr)
  run(0 ${MUTWO} experiment ${SPECS}/${spec}.toml --db full.db --out full --jobs 2)
endforeach()
run(0 ${MUTWO} experiment ${SPECS}/tiny_strategies.toml --db fresh.db --out fresh --jobs 2)
expect_match("${out}" "^tiny_strategies: 4 configurations in the whole sweep: 4 run, 0 already stored; 16 rows written to fresh.db in" "first run")
expect_match("${err}" "tiny_strategies: 4 configurations in the whole sweep, 0 already in fresh.db; running 4\n" "progress header")
expect_match("${err}" "\\[4/4\\] 100%  0:0[0-9] elapsed  bert-mini x" "progress")
expect_lines(${WORKDIR}/full/tiny_strategies.csv 17)
expect_lines(${WORKDIR}/full/tiny_policies.csv 10)
expect_lines(${WORKDIR}/full/tiny_dtr.csv 5)

# 2. A second run finds every configuration stored and writes nothing new.
run(0 ${MUTWO} experiment ${SPECS}/tiny_strategies.toml --db fresh.db --out fresh --json)
string(JSON skipped GET "${out}" tasks_skipped)
string(JSON written GET "${out}" rows_written)
if(NOT skipped EQUAL 4 OR NOT written EQUAL 0)
  message(FATAL_ERROR "second run: ${skipped} skipped, ${written} rows written; expected 4 and 0\n${out}")
endif()

# 3. Killed (SIGKILL) and interrupted (SIGINT) runs, wherever they stop, resume to the same CSV.
foreach(signal KILL INT)
  run(any timeout -s ${signal} 0.3 ${MUTWO} experiment ${SPECS}/tiny_strategies.toml --db ${signal}.db
      --out ${signal} --jobs 1)
  if(signal STREQUAL "INT" AND rc EQUAL 1)
    expect_match("${err}" "error: interrupted: [0-9] of 4 configurations written, each row whole; run the same command again" "interrupt message")
  endif()
  run(0 ${MUTWO} experiment ${SPECS}/tiny_strategies.toml --db ${signal}.db --out ${signal} --jobs 2)
  file(READ ${WORKDIR}/${signal}/tiny_strategies.csv resumed)
  file(READ ${WORKDIR}/full/tiny_strategies.csv whole)
  if(NOT resumed STREQUAL whole)
    message(FATAL_ERROR "after SIG${signal} and a resume the CSV differs from an uninterrupted run's:\n${resumed}\n---\n${whole}")
  endif()
endforeach()

# 4. Shards 0/2 and 1/2 merged equal the whole sweep: the merged file's run writes the same CSV.
foreach(i 0 1)
  run(0 ${MUTWO} experiment ${SPECS}/tiny_strategies.toml --db shard-${i}.db --out shard-${i} --shard ${i}/2)
endforeach()
run(0 ${MUTWO} db merge merged.db shard-0.db shard-1.db)
run(0 ${MUTWO} experiment ${SPECS}/tiny_strategies.toml --db merged.db --out merged)
expect_match("${out}" ": 4 configurations in the whole sweep: 0 run, 4 already stored; 0 rows written" "merged run")
file(READ ${WORKDIR}/merged/tiny_strategies.csv merged)
file(READ ${WORKDIR}/full/tiny_strategies.csv whole)
if(NOT merged STREQUAL whole)
  message(FATAL_ERROR "merged shards' CSV differs from the whole sweep's")
endif()

# 5. scripts/plot.py draws every figure of full.db as PNG and PDF.
run(0 ${PYTHON} ${PLOT} full.db --out figures)
foreach(figure tiny_dtr-overhead_vs_budget tiny_policies-throughput_vs_memory tiny_strategies-breakdown
               tiny_strategies-step_time_vs_models)
  foreach(ext png pdf)
    set(f ${WORKDIR}/figures/${figure}.${ext})
    if(NOT EXISTS ${f})
      message(FATAL_ERROR "plot.py did not write ${f}\n${out}${err}")
    endif()
    file(SIZE ${f} bytes)
    file(READ ${f} magic LIMIT 4 HEX)
    if(bytes LESS 10000 OR NOT magic MATCHES "^(89504e47|25504446)$")
      message(FATAL_ERROR "${f}: ${bytes} bytes, starts ${magic}; expected a PNG or PDF of at least 10 kB")
    endif()
  endforeach()
endforeach()
# predicted_vs_measured over make_results_fixture's runs (kind 'run': predicted and measured).
run(0 ${FIXTURE} runs ${WORKDIR}/measured.db)
run(0 ${MUTWO} experiment predicted_vs_measured --db measured.db --out measured)
expect_lines(${WORKDIR}/measured/predicted_vs_measured.csv 4)  # header + runs 1, 2, 5 (both, neither OOM)
run(0 ${PYTHON} ${PLOT} measured.db --out figures)
if(NOT EXISTS ${WORKDIR}/figures/predicted_vs_measured-predicted_vs_measured.png)
  message(FATAL_ERROR "plot.py did not draw predicted_vs_measured\n${out}${err}")
endif()
# An experiment the database does not hold is an error naming it.
run(1 ${PYTHON} ${PLOT} full.db --experiment nope --out figures)
expect_match("${err}" "plot.py: error: .*nope" "plot.py error")
