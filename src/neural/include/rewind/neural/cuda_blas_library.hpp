// rewind/neural/cuda_blas_library.hpp — cuBLAS's double-precision matrix product for
// rwd::nn::DeviceMlp, loaded when first asked for (dlopen), for .cu files (nvcc) only.
//
//   std::string why;
//   if (const rwd::nn::cublas::Library* blas = rwd::nn::cublas::Library::get(&why))
//     blas->gemm('N', 'N', m, n, k, A, lda, B, ldb, 0.0, C, ldc, "layer product");
//   else
//     use another path; `why` says what was tried and what failed
//
// Why loaded and not linked: cuBLAS's libraries are ~600 MB (libcublasLt alone 540 MB), more than
// a program carried to a GPU machine can take along, while such machines usually have them already
// (in the CUDA toolkit, or inside PyTorch's wheels). A program that links nothing of cuBLAS runs
// everywhere, and uses cuBLAS where the dynamic loader finds libcublas.so.<major> of the toolkit
// it was compiled with (LD_LIBRARY_PATH, the toolkit's lib64). Where it does not, DeviceMlp's own
// kernels run instead, and the reason is reported.
//
// Determinism: cuBLAS gives the same bits for the same call on the same GPU model (same
// architecture and SM count) and library version (NVIDIA's cuBLAS documentation, "Results
// reproducibility"); the handle runs every product on the default stream, in order with
// rewind's kernels, and no routine used here is among the documented exceptions. So the
// schedule-independence contract holds with it; bits differ from rewind's own kernels and from
// the CPU (another summation order), to round-off.
//
// The handle lives for the rest of the process (created once, never destroyed: destroying it
// from a static destructor could run after the CUDA runtime has shut down). Every cuBLAS status
// that is not success becomes an rwd::DeviceError naming the operation.
#pragma once

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cublas_api.h>  // types and declarations only: nothing of cuBLAS is linked

#include <mutex>
#include <string>

#include "rewind/backend/cuda_check.hpp"
#include "rewind/backend/device_error.hpp"
#include "rewind/error.hpp"
#include "rewind/types.hpp"

namespace rwd::nn::cublas {

class Library {
 public:
  // The process's cuBLAS, loaded on the first call; nullptr when it cannot be loaded, with the
  // reason in *why (when why is not null).
  static const Library* get(std::string* why = nullptr) {
    static Library* library = nullptr;
    static std::string failure;
    static std::once_flag once;
    std::call_once(once, [] { library = load(failure); });
    if (!library && why) *why = failure;
    return library;
  }

  // The name loaded, e.g. "libcublas.so.13".
  const std::string& name() const { return name_; }

  // C = α op(A) op(B) + β C with α = 1, column-major, op = 'N' (as stored) or 'T' (transposed);
  // C is m × n, the inner dimension k.
  void gemm(char op_a, char op_b, Index m, Index n, Index k, const double* A, Index lda,
            const double* B, Index ldb, double beta, double* C, Index ldc,
            const char* operation) const {
    const double alpha = 1.0;
    for (const Index v : {m, n, k, lda, ldb, ldc})
      if (v > 0x7fffffff)
        detail::fail<InvalidArgument>(operation, ": a matrix dimension of ", v,
                                      " is beyond cuBLAS's 32-bit sizes");
    check(dgemm_(handle_, op(op_a), op(op_b), static_cast<int>(m), static_cast<int>(n),
                 static_cast<int>(k), &alpha, A, static_cast<int>(lda), B, static_cast<int>(ldb),
                 &beta, C, static_cast<int>(ldc)),
          operation);
  }

 private:
  static cublasOperation_t op(char o) { return o == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N; }

  void check(cublasStatus_t status, const char* operation) const {
    if (status == CUBLAS_STATUS_SUCCESS) return;
    detail::fail<DeviceError>(
        operation, ": cuBLAS error ", static_cast<int>(status),
        status_string_ ? std::string(" (") + status_string_(status) + ")" : std::string());
  }

  template <class F>
  static bool find(void* so, const char* symbol, F& f) {
    f = reinterpret_cast<F>(dlsym(so, symbol));
    return f != nullptr;
  }

  static Library* load(std::string& failure) {
    const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* so = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!so) {
      const char* e = dlerror();
      failure = "cuBLAS not loaded: " + (e ? std::string(e) : name + " not found");
      return nullptr;
    }
    auto* library = new Library();
    library->name_ = name;
    if (!find(so, "cublasCreate_v2", library->create_) ||
        !find(so, "cublasDgemm_v2", library->dgemm_) ||
        !find(so, "cublasSetStream_v2", library->set_stream_)) {
      failure = "cuBLAS not used: " + name + " lacks cublasCreate_v2, cublasDgemm_v2 or " +
                "cublasSetStream_v2";
      delete library;
      return nullptr;
    }
    find(so, "cublasGetStatusString", library->status_string_);  // optional, for messages
    if (library->create_(&library->handle_) != CUBLAS_STATUS_SUCCESS ||
        library->set_stream_(library->handle_, nullptr) != CUBLAS_STATUS_SUCCESS) {
      failure = "cuBLAS not used: " + name + " loaded but cublasCreate failed (no usable device?)";
      delete library;
      return nullptr;
    }
    return library;
  }

  std::string name_;
  cublasHandle_t handle_ = nullptr;
  decltype(&cublasCreate_v2) create_ = nullptr;
  decltype(&cublasDgemm_v2) dgemm_ = nullptr;
  decltype(&cublasSetStream_v2) set_stream_ = nullptr;
  decltype(&cublasGetStatusString) status_string_ = nullptr;
};

}  // namespace rwd::nn::cublas
