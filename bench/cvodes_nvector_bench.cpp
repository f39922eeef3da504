// bench/cvodes_nvector_bench.cpp — BDF (CVODES) gradients on rewind's N_Vectors, timed, with a
// digest of every result bit: the side-by-side check that a change to the N_Vector code neither
// slows CVODES down nor moves a bit of a gradient (bench/results/nvector.md).
//
//   build/bench/cvodes_nvector_bench                 # every case, best of 5
//   build/bench/cvodes_nvector_bench --repeats 9 --case eigen-gmres
//
// Cases (J = ½|y(T)|², store-all over the intervals, GMRES or the problem's own matrix solver):
//   eigen-dense     Robertson, dense LU, rewind's Eigen N_Vector
//   eigen-band      Brusselator2D n = 24 (1152 values), band LU (LAPACK), Eigen N_Vector
//   eigen-gmres     Brusselator2D n = 64 (8192 values), GMRES, Eigen N_Vector
//   serial-gmres    the same on SUNDIALS' serial N_Vector as Debian packages it (for scale)
//   thrust-gmres    DeviceBrusselator2D<ThrustBackend> n = 32 (2048 values), GMRES, on the CPP
//                   device system
// One line per case: the best and median seconds of a whole gradient (forward sweep and reverse
// sweep), the loss in hexadecimal, and a 64-bit FNV-1a digest of the bytes of dJ/dy0 and dJ/dθ:
// two builds agree on a case's bits exactly when the loss and both digests agree.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/integrators/thrust_cvodes.hpp"
#include "rewind/objective.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/device_brusselator2d.hpp"
#include "rewind/problems/robertson.hpp"

namespace {

// FNV-1a over the bytes of `values` (a digest of their bits, not a checksum against tampering).
std::uint64_t digest(const std::vector<double>& values) {
  std::uint64_t h = 14695981039346656037ull;
  for (double v : values) {
    unsigned char bytes[sizeof(double)];
    std::memcpy(bytes, &v, sizeof(double));
    for (unsigned char b : bytes) h = (h ^ b) * 1099511628211ull;
  }
  return h;
}

template <class Backend>
std::vector<double> on_host(const typename Backend::Vector& v) {
  std::vector<double> h(static_cast<std::size_t>(Backend::size(v)));
  Backend::copy_to_host(v, h);
  return h;
}

struct Outcome {
  double best = 0.0, median = 0.0, loss = 0.0;
  std::uint64_t grad_y0 = 0, grad_theta = 0;
};

template <class Backend, class Problem>
Outcome time_gradient(const Problem& problem, const rwd::CvodesOptions& options,
                      const rwd::IntervalGrid& grid, int repeats) {
  rwd::CvodesIntervalStepper stepper(problem, options, grid);
  rwd::StoreAllAdjoint driver(stepper, rwd::Objective<Backend>::terminal_squared_norm());
  std::vector<double> seconds;
  Outcome o;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const auto result = driver.run(problem.default_initial_state(), problem.default_parameters());
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    o.loss = result.loss;
    o.grad_y0 = digest(on_host<Backend>(result.grad_y0));
    o.grad_theta = digest(on_host<Backend>(result.grad_theta));
  }
  std::sort(seconds.begin(), seconds.end());
  o.best = seconds.front();
  o.median = seconds[seconds.size() / 2];
  return o;
}

rwd::CvodesOptions options(rwd::CvodesLinearSolver solver, double rtol, double atol) {
  rwd::CvodesOptions o;
  o.linear_solver = solver;
  o.rtol = rtol;
  o.atol = {atol};
  o.rtol_adjoint = rtol;
  o.atol_adjoint = atol;
  return o;
}

void report(const char* name, const Outcome& o) {
  std::printf("%-13s best %.4f s  median %.4f s  loss %a  grad_y0 %016llx  grad_theta %016llx\n",
              name, o.best, o.median, o.loss, static_cast<unsigned long long>(o.grad_y0),
              static_cast<unsigned long long>(o.grad_theta));
  std::fflush(stdout);
}

int option(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return fallback;
}

std::string text_option(int argc, char** argv, const char* name) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = std::max(1, option(argc, argv, "--repeats", 5));
  const std::string only = text_option(argc, argv, "--case");
  const auto wanted = [&](const char* name) { return only.empty() || only == name; };
  using rwd::CvodesLinearSolver;
  if (wanted("eigen-dense")) {
    const rwd::Robertson problem;
    report("eigen-dense", time_gradient<rwd::EigenBackend>(
                              problem, options(CvodesLinearSolver::dense, 1e-8, 1e-12),
                              rwd::IntervalGrid{0.0, 40.0, 8}, repeats));
  }
  if (wanted("eigen-band")) {
    const rwd::Brusselator2D problem(24);
    report("eigen-band",
           time_gradient<rwd::EigenBackend>(problem, options(CvodesLinearSolver::band, 1e-7, 1e-9),
                                            rwd::IntervalGrid{0.0, 2.0, 8}, repeats));
  }
  for (const auto vectors : {rwd::CvodesVectors::rewind, rwd::CvodesVectors::serial}) {
    const char* name = vectors == rwd::CvodesVectors::rewind ? "eigen-gmres" : "serial-gmres";
    if (!wanted(name)) continue;
    const rwd::Brusselator2D problem(64);
    rwd::CvodesOptions o = options(CvodesLinearSolver::gmres, 1e-5, 1e-7);
    o.vectors = vectors;
    report(name,
           time_gradient<rwd::EigenBackend>(problem, o, rwd::IntervalGrid{0.0, 2.0, 8}, repeats));
  }
  if (wanted("thrust-gmres")) {
    const rwd::DeviceBrusselator2D<rwd::ThrustBackend> problem(32);
    report("thrust-gmres", time_gradient<rwd::ThrustBackend>(
                               problem, options(CvodesLinearSolver::gmres, 1e-5, 1e-7),
                               rwd::IntervalGrid{0.0, 2.0, 8}, repeats));
  }
  return 0;
}
