// rewind/backend/eigen_backend.hpp — the CPU backend over Eigen::VectorXd.
//
//   using B = rwd::EigenBackend;
//   B::Vector y = B::zeros(3);
//   B::axpy(0.5, x, y);          // y += 0.5 x
//
// Fused linear combinations are computed in cache-sized blocks so that one pass over memory
// serves every term; the order of floating-point operations is fixed (a·x first, then the terms
// in the order given), so results are reproducible bit for bit.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>

#include "rewind/backend/backend.hpp"
#include "rewind/error.hpp"
#include "rewind/types.hpp"

namespace rwd {

struct EigenBackend {
  using Vector = Eigen::VectorXd;
  static constexpr const char* name = "eigen";
  static constexpr bool deterministic = true;

  static Vector zeros(Index n) { return Vector::Zero(static_cast<Eigen::Index>(n)); }
  static Index size(const Vector& x) { return static_cast<Index>(x.size()); }
  static double* data(Vector& x) { return x.data(); }
  static const double* data(const Vector& x) { return x.data(); }

  static void fill(Vector& x, double a) { x.setConstant(a); }
  static void copy(const Vector& src, Vector& dst) { dst = src; }
  static void scale(double a, Vector& x) { x *= a; }
  static void axpy(double a, const Vector& x, Vector& y) { y.noalias() += a * x; }

  static void linear_combination(Vector& out, double a, const Vector& x, std::span<const double> c,
                                 std::span<const Vector* const> v) {
    combine(out.data(), a, x.data(), c, v, out.size());
  }
  static void linear_combination(Vector& out, std::span<const double> c,
                                 std::span<const Vector* const> v) {
    combine(out.data(), 0.0, nullptr, c, v, out.size());
  }

  static double dot(const Vector& x, const Vector& y) { return x.dot(y); }
  static double max_norm(const Vector& x) { return x.size() ? x.cwiseAbs().maxCoeff() : 0.0; }
  static double wrms_norm(const Vector& x, const Vector& w) {
    if (x.size() == 0) return 0.0;
    return std::sqrt(x.cwiseProduct(w).squaredNorm() / static_cast<double>(x.size()));
  }
  static double error_norm(const Vector& e, const Vector& y0, const Vector& y1, double rtol,
                           double atol) {
    const Eigen::Index n = e.size();
    if (n == 0) return 0.0;
    double sum = 0.0;
    for (Eigen::Index i = 0; i < n; ++i) {
      const double scale = atol + rtol * std::max(std::abs(y0[i]), std::abs(y1[i]));
      const double r = e[i] / scale;
      sum += r * r;
    }
    return std::sqrt(sum / static_cast<double>(n));
  }
  static bool all_finite(const Vector& x) {
    // x − x is 0 for finite values and NaN for NaN/Inf: one branch-free pass, with eight
    // independent accumulators so the additions do not form one long dependency chain.
    const double* d = x.data();
    const Eigen::Index n = x.size();
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    Eigen::Index i = 0;
    for (; i + 8 <= n; i += 8)
      for (int j = 0; j < 8; ++j) acc[j] += d[i + j] - d[i + j];
    for (; i < n; ++i) acc[0] += d[i] - d[i];
    double total = 0.0;
    for (double a : acc) total += a;
    return total == 0.0;
  }

  static void copy_to_host(const Vector& x, std::span<double> host) {
    check_host_size(x.size(), host.size());
    std::memcpy(host.data(), x.data(), host.size() * sizeof(double));
  }
  static void copy_from_host(std::span<const double> host, Vector& x) {
    check_host_size(x.size(), host.size());
    std::memcpy(x.data(), host.data(), host.size() * sizeof(double));
  }

  template <class F>
  static void for_each_index(Index n, F&& f) {
    for (Index i = 0; i < n; ++i) f(i);
  }
  template <int K, class F>
  static Sums<K> sum_index(Index n, F&& f) {
    Sums<K> s = Sums<K>::zero();
    for (Index i = 0; i < n; ++i) s = s + f(i);
    return s;
  }

 private:
  static void check_host_size(Eigen::Index n, std::size_t host) {
    if (static_cast<std::size_t>(n) != host)
      detail::fail<InvalidArgument>("host buffer has ", host, " elements but the vector has ", n,
                                    "; they must match");
  }

  // out = a·x + Σ c_j v_j, in blocks that stay in L1 so every term is one streaming pass.
  static void combine(double* out, double a, const double* x, std::span<const double> c,
                      std::span<const Vector* const> v, Eigen::Index n) {
    constexpr Eigen::Index kBlock = 512;
    const std::size_t terms = c.size();
    for (Eigen::Index start = 0; start < n; start += kBlock) {
      const Eigen::Index len = std::min(kBlock, n - start);
      double* o = out + start;
      if (x != nullptr) {
        const double* xs = x + start;
        for (Eigen::Index i = 0; i < len; ++i) o[i] = a * xs[i];
      } else {
        for (Eigen::Index i = 0; i < len; ++i) o[i] = 0.0;
      }
      for (std::size_t j = 0; j < terms; ++j) {
        const double cj = c[j];
        const double* vj = v[j]->data() + start;
        for (Eigen::Index i = 0; i < len; ++i) o[i] += cj * vj[i];
      }
    }
  }
};

static_assert(VectorBackend<EigenBackend>);

}  // namespace rwd
