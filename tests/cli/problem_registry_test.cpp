// The `rewind` tool's registry of problems (src/cli/problem_registry.hpp, builtin_problems.hpp):
// one list with unique names, and every entry's declared facts complete and consistent with the
// problem they describe — state size against the fields, θ's size against its names, defaults
// within the declared domains, the declared forms against the declarations.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "../../src/cli/builtin_problems.hpp"
#include "../../src/cli/problem_fields.hpp"
#include "../../src/cli/problem_registry.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/integrators/sde_problem.hpp"

namespace rwd::cli {
namespace {

// The sizes an entry is checked at: its default, and a small one for sized problems.
std::vector<Index> sizes_to_check(const ProblemInfo& info) {
  if (!info.sized()) return {0};
  return {info.default_n, 4};
}

TEST(ProblemRegistryList, HoldsEveryDeclarationOnceInOrder) {
  std::vector<std::string> declared;
  for_each_declaration(BuiltinProblems{}, [&]<class D>(std::type_identity<D>) {
    declared.push_back(D::facts().name);
  });
  ASSERT_EQ(declared.size(), problem_table().size());
  for (std::size_t i = 0; i < declared.size(); ++i) EXPECT_EQ(problem_table()[i].name, declared[i]);
}

TEST(ProblemRegistryList, NamesAndAliasesAreUniqueAndCanonical) {
  std::set<std::string> seen;
  for (const ProblemInfo& info : problem_table()) {
    // Canonical: what find_problem's spelling rules turn it into.
    EXPECT_EQ(detail::normalise_problem_name(info.name), info.name);
    EXPECT_TRUE(seen.insert(info.name).second) << "name twice: " << info.name;
    if (!info.alias.empty()) {
      const std::string alias = detail::normalise_problem_name(info.alias);
      EXPECT_TRUE(seen.insert(alias).second) << "alias taken: " << info.alias;
      EXPECT_EQ(find_problem(info.alias), &info);
    }
  }
}

TEST(ProblemRegistryList, EveryEntryIsComplete) {
  for (const ProblemInfo& info : problem_table()) {
    SCOPED_TRACE(info.name);
    EXPECT_FALSE(info.description.empty());
    EXPECT_GT(info.default_dt, 0.0);
    EXPECT_GT(info.default_steps, 0);
    if (info.sized()) {
      EXPECT_GT(info.default_n, 0);
      EXPECT_EQ(info.fixed_state_size, 0);
    } else {
      EXPECT_EQ(info.default_n, 0);
      EXPECT_GT(info.fixed_state_size, 0);
    }
    EXPECT_FALSE(info.stiff && info.noise) << "one default method each";
    EXPECT_TRUE(info.parameter_names && info.defaults && info.run && info.observe && info.fit);
    if (info.grid_fields) {
      EXPECT_TRUE(info.sized()) << "a grid has a side n";
    }
  }
}

TEST(ProblemRegistryFacts, StateAndParametersMatchTheProblem) {
  for (const ProblemInfo& info : problem_table())
    for (const Index n : sizes_to_check(info)) {
      SCOPED_TRACE(info.name + " n = " + std::to_string(n));
      const ProblemDefaults defaults = info.defaults(n);
      const Index state_size = static_cast<Index>(defaults.initial_state.size());
      if (!info.sized()) {
        EXPECT_EQ(state_size, info.fixed_state_size);
      }
      if (info.grid_fields) {
        EXPECT_EQ(state_size % (n * n), 0);
      }
      ASSERT_EQ(defaults.parameter_names.size(),
                static_cast<std::size_t>(defaults.parameters.size()));
      EXPECT_EQ(info.parameter_names(n), defaults.parameter_names);
      if (!info.parameters.empty()) {
        ASSERT_EQ(info.parameters.size(), defaults.parameter_names.size());
        for (std::size_t i = 0; i < info.parameters.size(); ++i)
          EXPECT_EQ(info.parameters[i].name, defaults.parameter_names[i]);
      }
      // The defaults lie in the declared domains: --parameters with a default value is accepted.
      for (Eigen::Index i = 0; i < defaults.parameters.size(); ++i) {
        const std::string& name = defaults.parameter_names[static_cast<std::size_t>(i)];
        EXPECT_TRUE(in_parameter_domain(info.parameter_domain(name), defaults.parameters[i]))
            << name << " = " << defaults.parameters[i];
      }
      with_builtin_problem(info, n, [&](const auto& problem) {
        EXPECT_EQ(problem.state_size(), state_size);
        EXPECT_EQ(problem.parameter_size(), defaults.parameters.size());
        using P = std::remove_cvref_t<decltype(problem)>;
        EXPECT_EQ(info.noise, SdeProblem<P>) << "noise is declared exactly for the SDEs";
        return 0;
      });
    }
}

TEST(ProblemRegistryFacts, FieldsCutTheStateIntoNamedBlocks) {
  for (const ProblemInfo& info : problem_table())
    for (const Index n : sizes_to_check(info)) {
      SCOPED_TRACE(info.name + " n = " + std::to_string(n));
      const Index state_size = static_cast<Index>(info.defaults(n).initial_state.size());
      std::set<std::string> names = {"all"};
      for (const StateFieldFact& field : info.fields) {
        EXPECT_TRUE(names.insert(field.name).second) << "field twice: " << field.name;
        EXPECT_GE(field.block, 0);
        EXPECT_LT(field.block, field.blocks);
        EXPECT_EQ(state_size % field.blocks, 0) << field.name;
      }
      const std::vector<ObservedField> fields = problem_fields(info, state_size);
      ASSERT_EQ(fields.size(), info.fields.size() + 1);
      EXPECT_EQ(fields[0].count, state_size);
      for (const ObservedField& field : fields) {
        EXPECT_GE(field.count, 1) << field.name;
        EXPECT_LE(field.offset + field.count, state_size) << field.name;
      }
    }
}

TEST(ProblemRegistryFacts, DeclaredDeviceFormsExist) {
  for_each_declaration(BuiltinProblems{}, [&]<class D>(std::type_identity<D>) {
    EXPECT_EQ(D::facts().device_form, (kHasDeviceModel<D, EigenBackend>)) << D::facts().name;
  });
}

TEST(ProblemRegistryFacts, RefusesAProblemThatIsNotBuiltIn) {
  ProblemInfo stranger;
  stranger.name = "not_built_in";
  EXPECT_THROW(with_builtin_problem(stranger, 0, [](const auto&) { return 0; }), InvalidArgument);
}

}  // namespace
}  // namespace rwd::cli
