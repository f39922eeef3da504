// Order conditions of Runge–Kutta methods through Butcher's rooted trees.
//
// A rooted tree is the multiset of its root's subtrees. Trees of order n are enumerated as
// non-decreasing index sequences into the list of smaller trees whose orders sum to n − 1, so
// each tree appears once. For each tree τ we form the vector Φ(τ)_i (the elementary weight at
// stage i: the product over the root's subtrees σ of (A Φ(σ))_i, empty product = 1) and its
// density γ(τ) = |τ| Π γ(σ). The method with weights w has order p iff w·Φ(τ) = 1/γ(τ) for all
// τ with |τ| ≤ p (Butcher 1963; Hairer, Nørsett & Wanner, Solving ODEs I, Thm II.2.13).
#include <cmath>
#include <functional>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/integrators/butcher_tableau.hpp"

namespace rwd {
namespace {

struct Tree {
  int order;
  std::vector<int> children;  // indices into the tree list, non-decreasing
  double gamma;
  std::vector<double> phi;  // elementary weight per stage
};

std::vector<Tree> trees_up_to(const ButcherTableau& t, int max_order) {
  const int s = t.stages;
  std::vector<Tree> trees;
  // The single-node tree.
  trees.push_back(Tree{1, {}, 1.0, std::vector<double>(static_cast<std::size_t>(s), 1.0)});
  for (int n = 2; n <= max_order; ++n) {
    const std::size_t smaller = trees.size();
    std::vector<int> chosen;
    std::function<void(int, int)> extend = [&](int first, int remaining) {
      if (remaining == 0) {
        Tree tree{n, chosen, static_cast<double>(n), std::vector<double>(s, 1.0)};
        for (int child : chosen) {
          tree.gamma *= trees[static_cast<std::size_t>(child)].gamma;
          const auto& phi_child = trees[static_cast<std::size_t>(child)].phi;
          for (int i = 0; i < s; ++i) {
            double a_phi = 0.0;
            for (int j = 0; j < s; ++j)
              a_phi += t.a_at(i, j) * phi_child[static_cast<std::size_t>(j)];
            tree.phi[static_cast<std::size_t>(i)] *= a_phi;
          }
        }
        trees.push_back(std::move(tree));
        return;
      }
      for (std::size_t k = static_cast<std::size_t>(first); k < smaller; ++k) {
        if (trees[k].order > remaining) continue;
        chosen.push_back(static_cast<int>(k));
        extend(static_cast<int>(k), remaining - trees[k].order);
        chosen.pop_back();
      }
    };
    extend(0, n - 1);
  }
  return trees;
}

}  // namespace

double order_condition_defect(const ButcherTableau& tableau, const std::vector<double>& weights,
                              int order) {
  if (order < 1) return 0.0;
  double worst = 0.0;
  for (const Tree& tree : trees_up_to(tableau, order)) {
    if (tree.order != order) continue;
    double sum = 0.0;
    for (int i = 0; i < tableau.stages; ++i)
      sum += weights[static_cast<std::size_t>(i)] * tree.phi[static_cast<std::size_t>(i)];
    worst = std::max(worst, std::abs(sum - 1.0 / tree.gamma));
  }
  return worst;
}

}  // namespace rwd
