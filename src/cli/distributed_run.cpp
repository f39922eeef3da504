// src/cli/distributed_run.cpp — see distributed_run.hpp.
#include "distributed_run.hpp"

#include <vector>

#include "problem_parameters.hpp"
#include "process_group.hpp"
#include "rewind/distributed/distributed_brusselator.hpp"
#include "rewind/distributed/distributed_cvodes.hpp"  // CVODES on the distributed N_Vector
#include "rewind/distributed/distributed_gray_scott.hpp"
#include "rewind/distributed/distributed_heat2d.hpp"
#include "rewind/distributed/distributed_lorenz96.hpp"

namespace rwd::cli {
namespace {

template <class P>
RunReport run_split(const P& problem, const RunSettings& settings, const PlanCallback& on_plan) {
  using B = typename P::Backend;
  const typename B::Vector y0 = problem.default_initial_state();
  typename B::Vector theta = problem.default_parameters();  // replicated: every rank all of it
  std::vector<double> values = host_values<B>(theta);
  apply_parameter_values(settings.parameters, values);
  B::copy_from_host(values, theta);
  ProcessGroup::begin_work();
  return run_gradient(problem, y0, theta, P::parameter_names(), settings, on_plan);
}

}  // namespace

bool splits_across_ranks(const ProblemInfo& problem) {
  switch (problem.id) {
    case ProblemId::gray_scott:
    case ProblemId::heat2d:
    case ProblemId::lorenz96:
    case ProblemId::brusselator:
      return true;
    default:
      return false;
  }
}

std::string problems_split_across_ranks() {
  std::string names;
  for (const ProblemInfo& p : problem_table())
    if (splits_across_ranks(p)) names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

RunReport run_gradient_across_ranks(const RunSettings& settings, const PlanCallback& on_plan) {
  const Communicator world = Communicator::world();
  switch (settings.problem->id) {
    case ProblemId::gray_scott:
      return run_split(DistributedGrayScott(settings.n, world), settings, on_plan);
    case ProblemId::heat2d:
      return run_split(DistributedHeat2D(settings.n, world), settings, on_plan);
    case ProblemId::lorenz96:
      return run_split(DistributedLorenz96(settings.n, world), settings, on_plan);
    case ProblemId::brusselator:
      return run_split(DistributedBrusselator(settings.n, world), settings, on_plan);
    default:
      rwd::detail::fail<InvalidArgument>(
          settings.problem->name, " does not split its state across ranks (", world.size(),
          " ranks here); the problems that do: ", problems_split_across_ranks(),
          ". Run it without mpirun");
  }
}

}  // namespace rwd::cli
