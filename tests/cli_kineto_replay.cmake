# CLI tests of the Kineto replay (issue 16, part 2): `mutwo simulate --trace` on a PyTorch profiler
# trace predicts the step the trace profiled and prints both. Included by tests/CMakeLists.txt
# inside its `if(TARGET mutwo)` block. Figures: tests/test_kineto_replay.cpp's header.
set(kineto ${MUTWO_TEST_FIXTURES}/kineto)

# MI250: ProfilerStep#1 took 9,288,291 ns; the host timeline predicts 9,239,161 ns (-0.53 %).
mutwo_cli_test(simulate_kineto_replay_json ARGS simulate --trace ${kineto}/mi250_minitoy_train.json.gz --json
               DEFINES "JSON_CHECKS=profiled_step_ns=9288291\;prediction|step_time_ns=9239161\;host_mode=eager")
mutwo_cli_test(simulate_kineto_replay_table ARGS simulate --trace ${kineto}/mi250_minitoy_train.json.gz
               DEFINES "STDOUT_REGEX=step time +9\\.239 ms.*profiled step +9\\.288 ms \\(the trace's ProfilerStep. prediction -0\\.53 %\\).*host +eager: busy 9\\.193 ms")
# Without the host the step is the GPU time: 149,042 ns of kernels on one stream.
mutwo_cli_test(simulate_kineto_replay_no_host
               ARGS simulate --trace ${kineto}/mi250_minitoy_train.json.gz --host-mode none --json
               DEFINES "JSON_CHECKS=prediction|step_time_ns=149042\;host_mode=none")
mutwo_cli_test(simulate_bad_host_mode ARGS simulate --trace ${kineto}/mi250_minitoy_train.json.gz --host-mode lazy
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--host-mode: lazy not in")
