// rewind/integrators/declared_jacobian.hpp — how a problem declares its Jacobian ∂f/∂y, for the
// solvers that factor it or multiply by it (the CVODES stepper's Newton iteration, the implicit
// engines' stage matrices). Each is optional: a solver that finds none assembles J from vjps or
// goes matrix-free, and one that needs a form refuses a problem without it, naming the members.
#pragma once

#include <concepts>
#include <cstddef>
#include <span>
#include <string>

#include <Eigen/Core>

#include "rewind/types.hpp"

namespace rwd::detail {

// Dense: jacobian(t, y, θ, J) fills the n × n matrix J.
template <class P>
concept HasJacobian = requires(const P& p, double t, const Eigen::VectorXd& y, Eigen::MatrixXd& J) {
  p.jacobian(t, y, y, J);
};

// A band as wide on both sides: band_width() is the upper and the lower half-bandwidth (the
// built-in PDEs); J itself comes from vjps.
template <class P>
concept HasBandWidth = requires(const P& p) {
  { p.band_width() } -> std::convertible_to<Index>;
};

// A band with its values: half-bandwidths and ∂f/∂y in LAPACK band storage,
// bands(upper + i − j, j) = ∂f_i/∂y_j (rwd::auto_problem for a model that declares its band).
template <class P>
concept HasBandJacobian = requires(const P& p, double t, const Eigen::VectorXd& y,
                                   Eigen::MatrixXd& bands) {
  { p.band_upper() } -> std::convertible_to<Index>;
  { p.band_lower() } -> std::convertible_to<Index>;
  p.band_jacobian(t, y, y, bands);
};

template <class P>
concept HasBand = HasBandWidth<P> || HasBandJacobian<P>;

// A band known only at run time (rwd::PluginModel: a model loaded from a plugin declares its band,
// or not, in its description): declares_band() says whether band_upper(), band_lower() and
// band_jacobian() may be called, and band_refusal() says why not — naming the model and how to
// declare a band — for a solver that needs one.
template <class P>
concept RuntimeBandProblem = HasBandJacobian<P> && requires(const P& p) {
  { p.declares_band() } -> std::convertible_to<bool>;
  { p.band_refusal() } -> std::convertible_to<std::string>;
};

// Whether `problem` states a band (band_width(), or band_upper(), band_lower() and
// band_jacobian()) that a solver may use: known at compile time, except for a RuntimeBandProblem.
template <class P>
bool states_band(const P& problem) {
  if constexpr (RuntimeBandProblem<P>)
    return problem.declares_band();
  else
    return HasBand<P>;
}

// Whether `problem` gives its band Jacobian's values (band_jacobian()) now.
template <class P>
bool gives_band_jacobian(const P& problem) {
  if constexpr (RuntimeBandProblem<P>)
    return problem.declares_band();
  else
    return HasBandJacobian<P>;
}

// What a refusal of the band solver adds after its own words: for a RuntimeBandProblem, why it
// has no band and how to declare one; otherwise "".
template <class P>
std::string band_refusal(const P& problem) {
  if constexpr (RuntimeBandProblem<P>) {
    return ": " + std::string(problem.band_refusal());
  } else {
    (void)problem;
    return {};
  }
}

// Sparse: sparsity() is ∂f/∂y's pattern in compressed rows (`size` = the state size,
// `row_starts` = size + 1 offsets from 0, `columns` = each row's, ascending and distinct;
// rwd::SparsityPattern), and jacobian_values(t, y, θ, values) its entries in that order
// (rwd::StencilProblem).
template <class P>
concept HasSparseJacobian = requires(const P& p, double t, const typename P::Backend::Vector& y,
                                     std::span<double> values) {
  { p.sparsity().size } -> std::convertible_to<Index>;
  { p.sparsity().row_starts[0] } -> std::convertible_to<Index>;
  { p.sparsity().columns[0] } -> std::convertible_to<Index>;
  { p.sparsity().columns.size() } -> std::convertible_to<std::size_t>;
  p.jacobian_values(t, y, y, values);
};

// Jacobian–vector products: jvp(t, y, θ, v, out) gives out = (∂f/∂y) v, for matrix-free
// (GMRES) solves.
template <class P>
concept HasJvp = requires(const P& p, double t, const typename P::Backend::Vector& y,
                          typename P::Backend::Vector& out) {
  p.jvp(t, y, y, y, out);
};

}  // namespace rwd::detail
