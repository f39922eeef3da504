// src/cli/builtin_problems.hpp — the one list of the problems built into the `rewind` tool.
//
//   rwd::cli::with_builtin_problem(info, /*n=*/40, [](const auto& problem) { ... });
//   rwd::cli::for_each_declaration(rwd::cli::BuiltinProblems{}, []<class D>(std::type_identity<D>)
//   {
//     const rwd::ProblemFacts facts = D::facts();  // and D::make(n), D::DeviceModel<B>
//   });
//
// Each problem declares itself in its own header, next to its equations: a declaration type with
// its facts (rewind/problems/problem_facts.hpp), make(n) building it on the Eigen backend, and,
// where it has one, DeviceModel<B>, its form on a device backend. Adding a built-in problem is its
// header and one line in BuiltinProblems below; problem_table() (builtin_problems.cpp) turns the
// list into the registry's values, and the device runs (device_gradient_run.hpp) pick their
// models from it. (A form split across MPI ranks lives in src/distributed, which the problems may
// not include: distributed_run.cpp lists those.)
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "problem_registry.hpp"
#include "rewind/error.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/heat2d.hpp"
#include "rewind/problems/linear.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/problems/lotka_volterra.hpp"
#include "rewind/problems/ornstein_uhlenbeck.hpp"
#include "rewind/problems/robertson.hpp"
#include "rewind/problems/stochastic_lorenz63.hpp"
#include "rewind/problems/van_der_pol.hpp"
#include "rewind/types.hpp"

namespace rwd::cli {

template <class... Declarations>
struct ProblemDeclarationList {};

// The built-in problems, in the order --help lists them.
using BuiltinProblems =
    ProblemDeclarationList<LinearOdeDeclaration, Lorenz63Declaration, Lorenz96Declaration,
                           LotkaVolterraDeclaration, VanDerPolDeclaration, GrayScottDeclaration,
                           Heat2DDeclaration, RobertsonDeclaration, BrusselatorDeclaration,
                           OrnsteinUhlenbeckDeclaration, StochasticLorenz63Declaration>;

// Calls f(std::type_identity<D>{}) for every declaration D of the list, in order.
template <class... Declarations, class F>
void for_each_declaration(ProblemDeclarationList<Declarations...>, F&& f) {
  (f(std::type_identity<Declarations>{}), ...);
}

// Whether declaration D has a form on the device backend B.
template <class D, class B>
inline constexpr bool kHasDeviceModel = requires {
  typename D::template DeviceModel<B>;
};

namespace detail {
template <class F, class D, class... Rest>
decltype(auto) with_declared_problem(const ProblemInfo& info, Index n, F&& f,
                                     ProblemDeclarationList<D, Rest...>) {
  if (D::facts().name == info.name) return std::forward<F>(f)(D::make(n));
  if constexpr (sizeof...(Rest) > 0)
    return with_declared_problem(info, n, std::forward<F>(f), ProblemDeclarationList<Rest...>{});
  else
    rwd::detail::fail<InvalidArgument>(info.name, " is not a built-in problem");
}
}  // namespace detail

// Builds the built-in problem `info` names, of size n (ignored for fixed-size problems), on the
// Eigen backend, and returns f(problem); the problem lives for the duration of the call. Throws
// InvalidArgument for a size the problem refuses, or a problem that is not built in.
template <class F>
decltype(auto) with_builtin_problem(const ProblemInfo& info, Index n, F&& f) {
  return detail::with_declared_problem(info, n, std::forward<F>(f), BuiltinProblems{});
}

}  // namespace rwd::cli
