// tests/integrators/thrust_nvector_harness.hpp — the conformance suite's way to the Thrust
// N_Vector (rwd::ThrustNVector, rewind/integrators/thrust_cvodes.hpp) on this translation unit's
// device system: the CPP system (cvodes_nvector_conformance_test.cpp), the OMP system
// (cvodes_nvector_conformance_omp_test.cpp) and CUDA (cvodes_nvector_conformance_cuda_test.cu).
#pragma once

#include <deque>
#include <span>

#include "cvodes_nvector_conformance.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "rewind/integrators/thrust_cvodes.hpp"

namespace rwd::nvector_conformance {

// Vectors made by ThrustNVector::make (`views` false) or views of device vectors kept here.
class ThrustHarness : public Harness {
 public:
  explicit ThrustHarness(bool views, double elementwise_tolerance = 0.0)
      : views_(views), tolerance_(elementwise_tolerance) {
    if (SUNContext_Create(nullptr, &context_) != 0) ADD_FAILURE() << "no SUNDIALS context";
  }
  ~ThrustHarness() override { SUNContext_Free(&context_); }
  ThrustHarness(const ThrustHarness&) = delete;
  ThrustHarness& operator=(const ThrustHarness&) = delete;

  const char* name() const override { return views_ ? "Thrust (views)" : "Thrust"; }
  N_Vector make(const Values& global) override {
    using B = ThrustBackend;
    const auto n = static_cast<Index>(global.size());
    N_Vector v;
    if (views_) {
      kept_.push_back(B::zeros(n));
      v = ThrustNVector::view(kept_.back(), context_);
    } else {
      v = ThrustNVector::make(B::Vector(), n, context_);
    }
    B::copy_from_host(std::span<const double>(global), *ThrustNVector::vector(v));
    return v;
  }
  Values read(N_Vector v) override {
    const ThrustBackend::Vector& x = *ThrustNVector::vector(v);
    Values h(static_cast<std::size_t>(ThrustBackend::size(x)));
    ThrustBackend::copy_to_host(x, h);
    return h;
  }
  Values mine(const Values& global) override { return global; }
  N_Vector_ID id() const override { return SUNDIALS_NVEC_CUSTOM; }
  bool host_arrays() const override { return false; }
  double elementwise_tolerance() const override { return tolerance_; }

 private:
  bool views_;
  double tolerance_;
  std::deque<ThrustBackend::Vector> kept_;
};

}  // namespace rwd::nvector_conformance
