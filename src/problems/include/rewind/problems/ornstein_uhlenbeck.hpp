// rewind/problems/ornstein_uhlenbeck.hpp — n independent Ornstein–Uhlenbeck processes, the linear
// SDE with closed-form moments.
//
//   dy_i = κ (μ − y_i) dt + σ dW_i,   i = 0..n−1,   θ = (κ, μ, σ)
//
// Drift f_i = κ(μ − y_i), additive diagonal noise g_i = σ. Defaults: n = 1, θ = (2, 1, 0.5),
// y_0 = 0. An rwd::SdeProblem (rewind/integrators/sde_problem.hpp): run it with
// rwd::StochasticStepper (Euler–Maruyama or Milstein — identical for additive noise).
//
//   rwd::OrnsteinUhlenbeck<> ou(/*components=*/4);
//   rwd::StochasticStepper stepper(ou, rwd::SdeScheme::euler_maruyama,
//                                  rwd::StepControl::fixed(0.0, 0.01, 100), /*seed=*/7);
//
// Why it is here: the Euler–Maruyama map of OU is linear, so the moments of the computed y_N are
// known exactly — E[y_N] = μ + (y_0 − μ)(1 − κh)^N, Var[y_N] = σ² h Σ_{k<N} (1 − κh)^{2k} — and
// the mean of pathwise gradients over seeds can be tested against their derivatives.
//
// Kernels are REWIND_HOST_DEVICE functors over raw pointers; the θ-sums of the VJPs go through
// B::sum_index (an ordered fold: the same bits for any thread count).
#pragma once

#include <array>
#include <span>
#include <string>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/host_device.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/problems/problem_facts.hpp"
#include "rewind/types.hpp"

namespace rwd {
namespace detail {

struct OuDriftKernel {
  const double* y;
  const double* theta;
  double* f;
  REWIND_HOST_DEVICE void operator()(Index i) const { f[i] = theta[0] * (theta[1] - y[i]); }
};

struct OuDriftStateVjpKernel {
  const double* theta;
  const double* v;
  double* out_y;
  REWIND_HOST_DEVICE void operator()(Index i) const { out_y[i] = -theta[0] * v[i]; }
};

// (∂f/∂κ)ᵀv = Σ (μ − y_i) v_i,  (∂f/∂μ)ᵀv = Σ κ v_i.
struct OuDriftParameterTerms {
  const double* y;
  const double* theta;
  const double* v;
  REWIND_HOST_DEVICE Sums<2> operator()(Index i) const {
    Sums<2> s;
    s.v[0] = (theta[1] - y[i]) * v[i];
    s.v[1] = theta[0] * v[i];
    return s;
  }
};

struct OuDiffusionKernel {
  const double* theta;
  double* g;
  REWIND_HOST_DEVICE void operator()(Index i) const { g[i] = theta[2]; }
};

struct SumTerms {
  const double* v;
  REWIND_HOST_DEVICE Sums<1> operator()(Index i) const {
    Sums<1> s;
    s.v[0] = v[i];
    return s;
  }
};

}  // namespace detail

template <class B = EigenBackend>
class OrnsteinUhlenbeck {
 public:
  using Backend = B;
  using Vector = typename B::Vector;
  static constexpr const char* name = "ornstein_uhlenbeck";

  explicit OrnsteinUhlenbeck(Index components = 1) : n_(components) {
    if (components < 1)
      detail::fail<InvalidArgument>(name, ": components = ", components, " must be >= 1");
  }

  Index state_size() const { return n_; }
  Index parameter_size() const { return 3; }
  Index noise_size() const { return n_; }

  // θ = (κ, μ, σ): mean reversion rate, long-run mean, noise amplitude.
  static Vector default_parameters(double kappa = 2.0, double mu = 1.0, double sigma = 0.5) {
    return detail::vector_from_host<B>({kappa, mu, sigma});
  }
  static std::vector<std::string> parameter_names() { return {"kappa", "mu", "sigma"}; }

  // Every component at `value` (0 unless given).
  Vector default_initial_state(double value = 0.0) const {
    Vector y = B::zeros(n_);
    B::fill(y, value);
    return y;
  }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<B>(name, n_, 3, y, theta, f);
    B::for_each_index(n_, detail::OuDriftKernel{B::data(y), B::data(theta), B::data(f)});
  }

  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<B>(name, n_, 3, y, theta, v, out_y, out_theta);
    const Sums<2> s = B::template sum_index<2>(
        n_, detail::OuDriftParameterTerms{B::data(y), B::data(theta), B::data(v)});
    B::for_each_index(n_,
                      detail::OuDriftStateVjpKernel{B::data(theta), B::data(v), B::data(out_y)});
    const std::array<double, 3> host{s.v[0], s.v[1], 0.0};
    B::copy_from_host(std::span<const double>(host), out_theta);
  }

  // g_i = σ.
  void diffusion(double /*t*/, const Vector& y, const Vector& theta, Vector& g) const {
    detail::require_rhs_sizes<B>(name, n_, 3, y, theta, g);
    B::for_each_index(n_, detail::OuDiffusionKernel{B::data(theta), B::data(g)});
  }

  // (∂g/∂y)ᵀv = 0,  (∂g/∂θ)ᵀv = (0, 0, Σ v_i).
  void diffusion_vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v,
                     Vector& out_y, Vector& out_theta) const {
    detail::require_vjp_sizes<B>(name, n_, 3, y, theta, v, out_y, out_theta);
    const Sums<1> s = B::template sum_index<1>(n_, detail::SumTerms{B::data(v)});
    B::fill(out_y, 0.0);
    const std::array<double, 3> host{0.0, 0.0, s.v[0]};
    B::copy_from_host(std::span<const double>(host), out_theta);
  }

 private:
  Index n_ = 1;
};

// What the tools that run problems by name know about OrnsteinUhlenbeck
// (rewind/problems/problem_facts.hpp).
struct OrnsteinUhlenbeckDeclaration {
  static ProblemFacts facts() {
    return {.name = "ornstein_uhlenbeck",
            .alias = "ou",
            .description =
                "Ornstein-Uhlenbeck SDE dy = kappa (mu - y) dt + sigma dW, n "
                "independent components; theta = (kappa, mu, sigma) = (2, 1, 0.5)",
            .size_meaning = "components n",
            .default_n = 1,
            .default_dt = 0.01,
            .default_steps = 200,
            .noise = true,
            // The mean may have either sign; no noise is allowed.
            .parameters = {{"kappa", ParameterDomain::positive},
                           {"mu", ParameterDomain::any},
                           {"sigma", ParameterDomain::nonnegative}}};
  }
  static OrnsteinUhlenbeck<> make(Index n) { return OrnsteinUhlenbeck<>(n); }
};

}  // namespace rwd
