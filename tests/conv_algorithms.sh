#!/usr/bin/env bash
# scripts/conv-algorithms.py on a held-out CSV and a NeuSight conv file built here (ctest conv_algorithms):
# three T4 rows, two that ran non-fused Winograd (held out +10 % and +30 %) and one an implicit GEMM
# (-40 %), table by algorithm per GPU and over all; DeepBench's rows are not NeuSight's; a held-out row
# with no NeuSight convolution of its shape, and a CSV without the held-out columns, are refused by name.
# Usage: tests/conv_algorithms.sh SCRATCH_DIR   (run from the source root)
set -euo pipefail
scratch=$1
rm -rf "$scratch"
mkdir -p "$scratch/neusight/conv"
wnf='";void cudnn::winograd_nonfused::winogradforwarddata4x4<float, float>(x);volta_sgemm_64x64_nn"'
cask='";void cask_cudnn_infer::computeoffsetskernel<false, false>(x);cudnn_infer_volta_scudnn_128x32"'
{
  echo "OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid y,Grid z,Block x,Block y,Block z,CUDA Version,Kernels,B,Input_Channel,Output_Channel,Kernel_Szie,Input_Size,Stride,Padding"
  # m = B x H x H, n = K, k = 9 C: (2, 16, 32, 8) -> 128, 32, 144; (4, ...) -> 256; (2, 16, 64, 8) -> 128, 64
  echo "conv,1.0,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,1,1,1,cu121,$wnf,2,16,32,3,8,1,1"
  echo "conv,1.0,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,1,1,1,cu121,$wnf,4,16,32,3,8,1,1"
  echo "conv,1.0,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,1,1,1,cu121,$cask,2,16,64,3,8,1,1"
} >"$scratch/neusight/conv/Tesla_T4.csv"
csv=$scratch/held.csv
echo "device,dataset,source,category,kernel,variant,precision,group,batch,m,n,k,flops,bytes,time_ns,harness_ns,kernel_ns,predicted_ns,error" >"$csv"
echo "t4,NeuSight,neusight conv,conv,conv2d_forward,3x3s1,fp32,g,1,128,32,144,1,1,1,0,1,1,0.1" >>"$csv"
echo "t4,NeuSight,neusight conv,conv,conv2d_forward,3x3s1,fp32,g,1,256,32,144,1,1,1,0,1,1,0.3" >>"$csv"
echo "t4,NeuSight,neusight conv,conv,conv2d_forward,3x3s1,fp32,g,1,128,64,144,1,1,1,0,1,1,-0.4" >>"$csv"
echo "t4,DeepBench,DeepSpeech,conv,conv2d_forward,3x3s1,fp32,g,1,7,7,7,1,1,1,0,1,1,0.9" >>"$csv"
/usr/bin/python3 scripts/conv-algorithms.py "$csv" "$scratch/FIDELITY.md" --neusight "$scratch/neusight"
section=$(sed -n '/begin: scripts\/conv-algorithms.py/,/end: scripts\/conv-algorithms.py/p' "$scratch/FIDELITY.md")
for want in "| t4 | Winograd, non-fused (4 kernels) | 2 | 20.0 % | +20.0 % |" \
            "| t4 | implicit GEMM (cask) | 1 | 40.0 % | -40.0 % |" \
            "| all five | Winograd, non-fused (4 kernels) | 2 | 20.0 % | +20.0 % |"; do
  grep -qxF -- "$want" <<<"$section" || { echo "conv_algorithms: missing: $want"; echo "$section"; exit 1; }
done
if grep -q "| 3 |" <<<"$section"; then echo "conv_algorithms: DeepBench's row was tabled"; exit 1; fi
echo "t4,NeuSight,neusight conv,conv,conv2d_forward,3x3s1,fp32,g,1,999,32,144,1,1,1,0,1,1,0.1" >>"$csv"
if out=$(/usr/bin/python3 scripts/conv-algorithms.py "$csv" "$scratch/FIDELITY.md" --neusight "$scratch/neusight" 2>&1); then
  echo "conv_algorithms: a row of no NeuSight shape was accepted"; exit 1
fi
grep -qF "held.csv:6: no NeuSight convolution on t4 with m=999 n=32 k=144" <<<"$out" || { echo "conv_algorithms: $out"; exit 1; }
echo "device,error" >"$scratch/bad.csv"
if out=$(/usr/bin/python3 scripts/conv-algorithms.py "$scratch/bad.csv" "$scratch/FIDELITY.md" --neusight "$scratch/neusight" 2>&1); then
  echo "conv_algorithms: a CSV without the held-out columns was accepted"; exit 1
fi
grep -qF "bad.csv: no column category, dataset, k, m, n" <<<"$out" || { echo "conv_algorithms: $out"; exit 1; }
echo "conv_algorithms: ok"
