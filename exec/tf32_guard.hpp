#pragma once
// TF32 in cuBLAS and cuDNN set to one value for a scope, PyTorch's flags restored after: the process
// may run other work. Used by bench-ops (a precision's math: fp32 off, tf32 on) and by the grouped 1x1
// convolution run as a batched GEMM (exec/pointwise_conv.hpp: cuBLAS under cuDNN's flag, the math of
// the convolution it replaces).
#include <ATen/Context.h>

namespace mutwo::exec {

class Tf32Guard {
 public:
  explicit Tf32Guard(bool allow)
      : cublas_(at::globalContext().allowTF32CuBLAS()), cudnn_(at::globalContext().allowTF32CuDNN()) {
    at::globalContext().setAllowTF32CuBLAS(allow);
    at::globalContext().setAllowTF32CuDNN(allow);
  }
  ~Tf32Guard() {
    at::globalContext().setAllowTF32CuBLAS(cublas_);
    at::globalContext().setAllowTF32CuDNN(cudnn_);
  }
  Tf32Guard(const Tf32Guard&) = delete;
  Tf32Guard& operator=(const Tf32Guard&) = delete;

 private:
  bool cublas_;
  bool cudnn_;
};

}  // namespace mutwo::exec
