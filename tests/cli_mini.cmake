# CLI tests of the test-scale model variants (zoo/mini_models.cpp), included by
# tests/CMakeLists.txt inside its `if(TARGET mutwo)` block, where mutwo_cli_test is defined.

mutwo_cli_test(mini_models_help ARGS models --help DEFINES "STDOUT_REGEX=--mini")
# `mutwo models --mini` lists the 8 test-scale variants instead of the zoo (the plain listing keeps
# its 13 published models, cli_models_json); bert-mini: 31,458 parameters, derived in
# test_mini_models.cpp.
mutwo_cli_test(mini_models_table ARGS models --mini
               DEFINES "STDOUT_REGEX=^model .*bert-mini +bert +31\\.5K .*test-scale variant of bert-base.*resnet-mini +resnet +45\\.1K.*dlrm-mini +dlrm +9\\.4K.*8 models, fp32")
mutwo_cli_test(mini_models_json ARGS models --mini --json
               DEFINES JSON_LENGTH=8
                       "JSON_CHECKS=0|name=bert-mini\;0|parameters=31458\;0|batch_size=2\;0|seq_len=8\;0|reference=test-scale variant of bert-base\;3|name=resnet-mini\;3|parameters=45102\;3|image_size=32\;7|name=dlrm-mini\;7|parameters=9393")
# A mini traces like a zoo model: resnet-mini x2 at its default batch 2 holds 2 x 45,102 = 90.2K
# parameters.
mutwo_cli_test(mini_trace_resnet_mini ARGS trace --model resnet-mini --models 2 -o resnet-mini-x2.json
               DEFINES "STDOUT_REGEX=^resnet-mini x2: [0-9]+ ops, [0-9]+ tensors, 90\\.2K params, .* -> resnet-mini-x2\\.json"
               PROPERTIES FIXTURES_SETUP cli_resnet_mini_trace)
mutwo_cli_test(mini_trace_check_resnet_mini ARGS trace --check resnet-mini-x2.json
               DEFINES "STDOUT_REGEX=graph +resnet-mini x2.*width +2 model.*batch +2 per model.*90\\.2K.*45\\.1K per model"
               PROPERTIES FIXTURES_REQUIRED cli_resnet_mini_trace)
mutwo_cli_test(mini_trace_unknown_model ARGS trace --model bert-tiny -o x.json DEFINES EXPECT_RC=1
               "STDERR_REGEX=^error: unknown model 'bert-tiny'. valid: bert-base, .*dlrm. test-scale: bert-mini, gpt2-mini, .*dlrm-mini")
# 2 bert-mini at batch 2, fused in one sub-array: 4 samples per step, no OOM (oom is null).
mutwo_cli_test(mini_simulate_bert_mini ARGS simulate --model bert-mini --models 2 --json
               DEFINES "JSON_CHECKS=schedule|samples_per_step=4\;schedule|sub_arrays|0|name=bert-mini x2\;prediction|oom=")
# stderr is not a terminal here: no progress line unless --progress asks for one.
mutwo_cli_test(mini_search_resnet_mini ARGS search --model resnet-mini:2 --policies none --top 1 --json
               DEFINES "JSON_CHECKS=samples_per_step=4\;feasible=ON\;rows|0|strategy=hfta\;rows|0|partition=resnet-mini:2"
                       "STDERR_NOT_REGEX=search: partition")
# Two models have two partitions (2, 1+1); --progress 0 shows the first before it is planned.
mutwo_cli_test(mini_search_progress ARGS search --model resnet-mini:2 --policies none --top 1 --progress 0
               DEFINES "STDERR_REGEX=^search: partition 1/2 by compute bound, 0:0[0-9] elapsed \\(the rest")
mutwo_cli_test(mini_search_progress_negative ARGS search --model resnet-mini:2 --progress -1
               DEFINES EXPECT_RC=2 "STDERR_REGEX=--progress: '-1' must be a finite number >= 0")
# --order best keeps the faster order under the host timeline simulated (tests/order_best.sh).
add_test(NAME cli_simulate_order_best COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/order_best.sh $<TARGET_FILE:mutwo>)
# --top never changes the winner (tests/search_top.sh).
add_test(NAME cli_search_top COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/search_top.sh $<TARGET_FILE:mutwo>)
