// rewind/problems/device_brusselator2d.hpp — rwd::Brusselator2D on a backend whose kernels run
// one index at a time (rwd::ThrustBackend: the GPU under CUDA, or Thrust's CPU device systems),
// for BDF with the state on the device (rewind/integrators/thrust_cvodes.hpp).
//
//   rwd::DeviceBrusselator2D<rwd::ThrustBackend> problem(1024);   // 2·1024² unknowns
//   auto y0 = problem.default_initial_state();                    // on the device
//   auto theta = problem.default_parameters();                    // (A, B, α), on the device
//
// The same model, layout, parameters and initial state as Brusselator2D (see its header), with
// the same per-cell arithmetic (detail::brusselator_*_cell): rhs, jvp and (∂f/∂y)ᵀ w are the CPU
// problem's bits on a CPU device system. The parameter gradient's three sums are the backend's
// fixed-order reduction over the cells instead of the CPU's row sums — deterministic, and equal
// to the CPU's to round-off. One thread per cell; θ stays on the device (the kernels read it).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/host_device.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/types.hpp"

namespace rwd {
namespace detail {

// The rows a cell's stencil reads: its own, and the rows above and below (itself at a wall).
struct BrusselatorRows {
  Index r, c;
  const double *row, *up, *down;
  REWIND_HOST_DEVICE BrusselatorRows(const double* y, Index n, Index cell)
      : r(cell / n),
        c(cell % n),
        row(y + 2 * r * n),
        up(y + 2 * (r > 0 ? r - 1 : 0) * n),
        down(y + 2 * (r + 1 < n ? r + 1 : n - 1) * n) {}
};

struct BrusselatorRhsKernel {
  const double* y;
  const double* theta;
  double* f;
  Index n;
  REWIND_HOST_DEVICE void operator()(Index cell) const {
    const BrusselatorRows at(y, n, cell);
    const double k = theta[2] * static_cast<double>(n * n);  // α / h², as Brusselator2D
    brusselator_rhs_cell(theta[0], theta[1], k, n, at.row, at.up, at.down, at.c, f + 2 * at.r * n);
  }
};

struct BrusselatorJvpKernel {
  const double* y;
  const double* theta;
  const double* v;
  double* out;
  Index n;
  REWIND_HOST_DEVICE void operator()(Index cell) const {
    const BrusselatorRows yr(y, n, cell), vr(v, n, cell);
    const double k = theta[2] * static_cast<double>(n * n);
    brusselator_jvp_cell(theta[1], k, n, yr.row, vr.row, vr.up, vr.down, yr.c, out + 2 * yr.r * n);
  }
};

// Writes out_y's two values at the cell and returns its three parameter terms.
struct BrusselatorVjpKernel {
  const double* y;
  const double* theta;
  const double* w;
  double* out_y;
  Index n;
  REWIND_HOST_DEVICE Sums<3> operator()(Index cell) const {
    const BrusselatorRows yr(y, n, cell), wr(w, n, cell);
    const double k = theta[2] * static_cast<double>(n * n);
    Sums<3> s;
    brusselator_vjp_cell(theta[1], k, n, yr.row, yr.up, yr.down, wr.row, wr.up, wr.down, yr.c,
                         out_y + 2 * yr.r * n, s.v[0], s.v[1], s.v[2]);
    return s;
  }
};

}  // namespace detail

template <class B>
class DeviceBrusselator2D {
 public:
  using Backend = B;
  using Vector = typename B::Vector;
  static constexpr const char* name = "brusselator";

  explicit DeviceBrusselator2D(Index n) : n_(n) {
    if (n < 2) detail::fail<InvalidArgument>("brusselator: grid n = ", n, " must be >= 2");
  }

  Index grid() const { return n_; }
  Index state_size() const { return 2 * n_ * n_; }
  Index parameter_size() const { return 3; }
  std::vector<std::string> parameter_names() const { return {"A", "B", "alpha"}; }

  Vector default_parameters() const { return detail::vector_from_host<B>({1.0, 3.4, 0.002}); }

  Vector default_initial_state() const {
    std::vector<double> y(static_cast<std::size_t>(state_size()));
    for (Index r = 0; r < n_; ++r)
      for (Index c = 0; c < n_; ++c)
        detail::brusselator_initial_cell(n_, r, c, y[static_cast<std::size_t>(2 * (r * n_ + c))],
                                         y[static_cast<std::size_t>(2 * (r * n_ + c) + 1)]);
    return detail::vector_from_host<B>(std::span<const double>(y));
  }

  void rhs(double, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<B>(name, state_size(), 3, y, theta, f);
    B::for_each_index(n_ * n_,
                      detail::BrusselatorRhsKernel{B::data(y), B::data(theta), B::data(f), n_});
  }

  // out = (∂f/∂y) v (GMRES's Jacobian products).
  void jvp(double, const Vector& y, const Vector& theta, const Vector& v, Vector& out) const {
    detail::require_length(name, "state y", B::size(y), state_size());
    detail::require_length(name, "parameter vector theta", B::size(theta), 3);
    detail::require_length(name, "tangent v", B::size(v), state_size());
    detail::require_length(name, "output out", B::size(out), state_size());
    B::for_each_index(n_ * n_, detail::BrusselatorJvpKernel{B::data(y), B::data(theta), B::data(v),
                                                            B::data(out), n_});
  }

  // out_y = (∂f/∂y)ᵀ w, out_theta = (∂f/∂θ)ᵀ w (the Laplacian is symmetric; see Brusselator2D).
  void vjp(double, const Vector& y, const Vector& theta, const Vector& w, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<B>(name, state_size(), 3, y, theta, w, out_y, out_theta);
    const Sums<3> s = B::template sum_index<3>(
        n_ * n_,
        detail::BrusselatorVjpKernel{B::data(y), B::data(theta), B::data(w), B::data(out_y), n_});
    const double host[3] = {s.v[0], s.v[1], s.v[2] * static_cast<double>(n_ * n_)};
    B::copy_from_host(std::span<const double>(host, 3), out_theta);
  }

 private:
  Index n_;
};

}  // namespace rwd
