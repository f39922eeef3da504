// bench/ad_choice/derived_vjps.hpp — the built-in problems' vector–Jacobian products derived by
// three automatic-differentiation libraries, for choosing one by measurement (issue 42, item 3).
//
//   rwd::ad_choice::Lorenz63Model model;                    // the rhs, generic in the scalar
//   rwd::ad_choice::dense_vjp<rwd::ad_choice::SacadoForward<6>>(model, y, theta, v, out_y,
//                                                               out_theta);
//
// Each model is written once, generic in the scalar type, as a user of rewind/model.hpp would
// write it: Lorenz-63 as a whole right-hand side (a small dense model), Lorenz-96, Gray–Scott and
// Heat2D as the update of one cell from its neighbourhood (a stencil model). The vjp
// (∂f/∂y)ᵀv, (∂f/∂θ)ᵀv is then derived in the way that suits each library:
//
//   forward mode, one derivative component per input (SacadoForward<K>: Sacado's SFad;
//   EigenForward<K>: Eigen's AutoDiffScalar over a fixed-size vector): one evaluation of the
//   model (or of one cell) gives its whole local Jacobian, K = states + parameters for a dense
//   model, K = neighbourhood + parameters for a cell; the vjp is vᵀ times it, and for a stencil
//   each cell's row of contributions is added into the cells it read ("scattered");
//   reverse mode by operator overloading (SacadoReverse: Sacado's Rad): the model (or cell) is
//   recorded on Rad's tape at every call and one weighted reverse sweep gives vᵀJ;
//   a recorded tape (AdolcTape: ADOL-C): the whole right-hand side is taped once at construction
//   (it has no branches on the values, so the tape is valid at every point), and every vjp is a
//   zero-order forward sweep at the new point (zos_forward, keeping the values) followed by one
//   first-order reverse sweep (fos_reverse).
//
// Every derived vjp here is checked against the problem's hand-written one to 1e-13
// (tests/problems/derived_vjp_libraries_test.cpp); bench/ad_choice/ad_choice_bench.cpp times them.
// Single-threaded: the scattering loops add into shared entries in cell order.
#pragma once

#include <Eigen/Core>
#include <unsupported/Eigen/AutoDiff>

#include <adolc/adolc.h>
#include <Sacado_Fad_SFad.hpp>
#include <Sacado_trad.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/types.hpp"

namespace rwd::ad_choice {

// --- the models, generic in the scalar type --------------------------------------------------

// Lorenz-63: y = (x, y, z), θ = (σ, ρ, β); the expressions of rewind/problems/lorenz63.hpp.
// A dense model: its inputs are the whole state, its outputs the whole right-hand side.
struct Lorenz63Model {
  static constexpr int inputs = 3;
  static constexpr int outputs = 3;
  static constexpr int parameters = 3;
  template <class T>
  void operator()(const T* y, const T* p, const double* /*constants*/, T* f) const {
    f[0] = p[0] * (y[1] - y[0]);
    f[1] = y[0] * (p[1] - y[2]) - y[1];
    f[2] = y[0] * y[1] - p[2] * y[2];
  }
};

// One Lorenz-96 site: in = (y_{i−2}, y_{i−1}, y_i, y_{i+1}), θ = (F).
struct Lorenz96Cell {
  static constexpr int inputs = 4;
  static constexpr int outputs = 1;
  static constexpr int parameters = 1;
  template <class T>
  void operator()(const T* in, const T* p, const double* /*constants*/, T* f) const {
    f[0] = (in[3] - in[0]) * in[1] - in[2] + p[0];
  }
};

// One Gray–Scott cell: in = (u: centre, up, down, left, right; v: the same five),
// θ = (D_u, D_v, F, k); the Laplacian summed in rewind/problems/gray_scott.hpp's order.
struct GrayScottCell {
  static constexpr int inputs = 10;
  static constexpr int outputs = 2;
  static constexpr int parameters = 4;
  template <class T>
  void operator()(const T* in, const T* p, const double* /*constants*/, T* f) const {
    const T lap_u = (((in[1] + in[2]) + in[3]) + in[4]) - 4.0 * in[0];
    const T lap_v = (((in[6] + in[7]) + in[8]) + in[9]) - 4.0 * in[5];
    const T uvv = in[0] * in[5] * in[5];
    f[0] = p[0] * lap_u - uvv + p[2] * (1.0 - in[0]);
    f[1] = p[1] * lap_v + uvv - (p[2] + p[3]) * in[5];
  }
};

// One Heat2D cell: in = (centre, up, down, left, right; 0 beyond a wall), θ = (κ, s₀), and the
// constants (p_r, p_c) of the heater g_{r,c} = p_r p_c.
struct Heat2DCell {
  static constexpr int inputs = 5;
  static constexpr int outputs = 1;
  static constexpr int parameters = 2;
  template <class T>
  void operator()(const T* in, const T* p, const double* constants, T* f) const {
    const T lap = (((in[1] + in[2]) + in[3]) + in[4]) - 4.0 * in[0];
    f[0] = p[0] * lap + (p[1] * constants[0]) * constants[1];
  }
};

// --- one evaluation's weighted gradient, per library -----------------------------------------
// Library::Evaluator<Cell> computes g[j] = Σ_k w_k ∂f_k/∂x_j for the K = inputs + parameters
// variables x = (in, θ) of one model or cell evaluation; one evaluator serves every cell of a vjp.

// Forward mode with a fixed number of derivative components: Sacado's SFad<double, K>. Each
// call seeds local copies of the inputs with the unit vectors, element by element: with the
// seeds known at compile time the compiler folds much of the derivative arithmetic away.
// Measured at -O3 (Gray–Scott 2·71² / Lorenz-96 10^5): SFad's seeding constructor
// Ad(K, j, value), which zero-fills with a memset of run-time length, 0.83 / 3.6 ms; seeds kept
// in the evaluator and only the values set per cell, 0.15 / 0.28 ms; local seeds set element by
// element (this), 0.064 / 0.29 ms.
template <int K>
struct SacadoForward {
  template <class Cell>
  class Evaluator {
    using Ad = Sacado::Fad::SFad<double, K>;
    static constexpr int ni = Cell::inputs, np = Cell::parameters, no = Cell::outputs;
    static_assert(ni + np == K, "SacadoForward<K>: K must be inputs + parameters");

   public:
    void operator()(const Cell& cell, const double* in, const double* theta,
                    const double* constants, const double* w, double* g) const {
      Ad x[ni], p[np], f[no];
      for (int j = 0; j < ni; ++j) seed(x[j], in[j], j);
      for (int j = 0; j < np; ++j) seed(p[j], theta[j], ni + j);
      cell(x, p, constants, f);
      for (int j = 0; j < K; ++j) {
        double s = w[0] * f[0].fastAccessDx(j);
        for (int k = 1; k < no; ++k) s += w[k] * f[k].fastAccessDx(j);
        g[j] = s;
      }
    }

   private:
    static void seed(Ad& a, double value, int j) {
      a.val() = value;
      for (int i = 0; i < K; ++i) a.fastAccessDx(i) = i == j ? 1.0 : 0.0;
    }
  };
};

// Forward mode with a fixed-size derivative vector: Eigen's AutoDiffScalar<Matrix<double, K, 1>>,
// seeded by its own constructor (unit vectors of a fixed size, no memset).
template <int K>
struct EigenForward {
  template <class Cell>
  class Evaluator {
    using Ad = Eigen::AutoDiffScalar<Eigen::Matrix<double, K, 1>>;
    static constexpr int ni = Cell::inputs, np = Cell::parameters, no = Cell::outputs;
    static_assert(ni + np == K, "EigenForward<K>: K must be inputs + parameters");

   public:
    void operator()(const Cell& cell, const double* in, const double* theta,
                    const double* constants, const double* w, double* g) const {
      Ad x[ni], p[np], f[no];
      for (int j = 0; j < ni; ++j) x[j] = Ad(in[j], K, j);
      for (int j = 0; j < np; ++j) p[j] = Ad(theta[j], K, ni + j);
      cell(x, p, constants, f);
      for (int j = 0; j < K; ++j) {
        double s = w[0] * f[0].derivatives()(j);
        for (int k = 1; k < no; ++k) s += w[k] * f[k].derivatives()(j);
        g[j] = s;
      }
    }
  };
};

// Reverse mode by operator overloading: Sacado's Rad, recorded at every call, one weighted
// reverse sweep (ADcontext::Weighted_Gradcomp; the next recording reuses the memory).
struct SacadoReverse {
  template <class Cell>
  struct Evaluator {
    void operator()(const Cell& cell, const double* in, const double* theta,
                    const double* constants, const double* w, double* g) const {
      using Ad = Sacado::Rad::ADvar<double>;
      constexpr int ni = Cell::inputs, np = Cell::parameters, no = Cell::outputs;
      Ad x[ni], p[np], f[no];
      for (int j = 0; j < ni; ++j) x[j] = in[j];
      for (int j = 0; j < np; ++j) p[j] = theta[j];
      cell(x, p, constants, f);
      Ad* outputs[no];
      double weights[no];
      for (int k = 0; k < no; ++k) {
        outputs[k] = &f[k];
        weights[k] = w[k];
      }
      Ad::Weighted_Gradcomp(no, outputs, weights);
      for (int j = 0; j < ni; ++j) g[j] = x[j].adj();
      for (int j = 0; j < np; ++j) g[ni + j] = p[j].adj();
    }
  };
};

// --- dense models: one evaluation is the whole Jacobian --------------------------------------

// out_y = (∂f/∂y)ᵀ v, out_theta = (∂f/∂θ)ᵀ v of a dense model (inputs = outputs = states).
template <class Library, class Model>
void dense_vjp(const Model& model, const double* y, const double* theta, const double* v,
               double* out_y, double* out_theta) {
  static_assert(Model::inputs == Model::outputs, "a dense model's inputs are its whole state");
  double g[Model::inputs + Model::parameters];
  typename Library::template Evaluator<Model> evaluate;
  evaluate(model, y, theta, nullptr, v, g);
  std::copy(g, g + Model::inputs, out_y);
  std::copy(g + Model::inputs, g + Model::inputs + Model::parameters, out_theta);
}

// --- stencil models: one cell at a time, contributions scattered --------------------------------

// One cell of a stencil model as its grid hands it out: the state index of every input (−1:
// beyond a wall, value 0), of every output, and the cell's constants.
template <int Inputs, int Outputs>
struct StencilCell {
  std::array<std::int64_t, Inputs> input;
  std::array<std::int64_t, Outputs> output;
  std::array<double, 2> constants{};
};

// The vjp of a stencil model: for every cell, the weighted gradient of its update (weights: v at
// the cell's outputs) added into out_y at the inputs' indices and into out_theta. Cells in the
// grid's order, so the sums have a fixed order.
template <class Library, class Cell, class Grid>
void stencil_vjp(const Cell& cell, const Grid& grid, const double* y, const double* theta,
                 const double* v, double* out_y, double* out_theta) {
  constexpr int ni = Cell::inputs, np = Cell::parameters, no = Cell::outputs;
  std::fill(out_y, out_y + grid.state_size(), 0.0);
  double theta_sum[np] = {};
  typename Library::template Evaluator<Cell> evaluate;
  grid.for_each_cell([&](const StencilCell<ni, no>& at) {
    double in[ni], w[no], g[ni + np];
    for (int j = 0; j < ni; ++j) in[j] = at.input[j] >= 0 ? y[at.input[j]] : 0.0;
    for (int k = 0; k < no; ++k) w[k] = v[at.output[k]];
    evaluate(cell, in, theta, at.constants.data(), w, g);
    for (int j = 0; j < ni; ++j)
      if (at.input[j] >= 0) out_y[at.input[j]] += g[j];
    for (int j = 0; j < np; ++j) theta_sum[j] += g[ni + j];
  });
  std::copy(theta_sum, theta_sum + np, out_theta);
}

// The rhs of a stencil model in any scalar type (ADOL-C tapes it): f at every cell's outputs.
template <class T, class Cell, class Grid>
void stencil_rhs(const Cell& cell, const Grid& grid, const T* y, const T* theta, T* f) {
  constexpr int ni = Cell::inputs, no = Cell::outputs;
  grid.for_each_cell([&](const StencilCell<ni, no>& at) {
    T in[ni], out[no];
    for (int j = 0; j < ni; ++j) in[j] = at.input[j] >= 0 ? T(y[at.input[j]]) : T(0.0);
    cell(in, theta, at.constants.data(), out);
    for (int k = 0; k < no; ++k) f[at.output[k]] = out[k];
  });
}

// Lorenz-96's ring of n sites: cell i reads sites i−2 … i+1 and writes site i.
struct Lorenz96Ring {
  Index n;
  Index state_size() const { return n; }
  template <class F>
  void for_each_cell(F&& visit) const {
    StencilCell<4, 1> at;
    for (Index i = 0; i < n; ++i) {
      at.input = {i >= 2 ? i - 2 : i - 2 + n, i >= 1 ? i - 1 : n - 1, i, i + 1 < n ? i + 1 : 0};
      at.output = {i};
      visit(at);
    }
  }
};

// Gray–Scott's periodic n × n grid, state [u; v]: cell c reads u and v at c and its four
// neighbours (up, down, left, right) and writes u'_c, v'_c.
struct GrayScottGrid {
  Index n;
  Index state_size() const { return 2 * n * n; }
  template <class F>
  void for_each_cell(F&& visit) const {
    const Index m = n * n;
    StencilCell<10, 2> at;
    for (Index r = 0; r < n; ++r)
      for (Index col = 0; col < n; ++col) {
        const Index c = r * n + col;
        const Index up = r == 0 ? c + m - n : c - n, down = r + 1 == n ? c + n - m : c + n;
        const Index left = col == 0 ? c + n - 1 : c - 1, right = col + 1 == n ? c + 1 - n : c + 1;
        at.input = {c, up, down, left, right, m + c, m + up, m + down, m + left, m + right};
        at.output = {c, m + c};
        visit(at);
      }
  }
};

// Heat2D's n × n grid with cold walls: cell c reads itself and its four neighbours (−1 beyond a
// wall) and has the heater's constants (p_r, p_c).
struct Heat2DGrid {
  Index n;
  std::vector<double> profile;  // p, n values (Heat2D::source_profile())
  Index state_size() const { return n * n; }
  template <class F>
  void for_each_cell(F&& visit) const {
    StencilCell<5, 1> at;
    for (Index r = 0; r < n; ++r)
      for (Index col = 0; col < n; ++col) {
        const Index c = r * n + col;
        at.input = {c, r > 0 ? c - n : -1, r + 1 < n ? c + n : -1, col > 0 ? c - 1 : -1,
                    col + 1 < n ? c + 1 : -1};
        at.output = {c};
        at.constants = {profile[static_cast<std::size_t>(r)],
                        profile[static_cast<std::size_t>(col)]};
        visit(at);
      }
  }
};

// --- a recorded tape: ADOL-C ------------------------------------------------------------------

// The whole right-hand side on one ADOL-C tape (recorded once), and every vjp as a forward sweep
// at the new point plus one reverse sweep. `rhs(y, theta, f)` is called once, with adoubles.
class AdolcTape {
 public:
  template <class Rhs>
  AdolcTape(short tag, Index states, Index parameters, const double* y, const double* theta,
            const Rhs& rhs)
      : tag_(tag), n_(states), p_(parameters), x_(states + parameters), f_(states), w_(states) {
    trace_on(tag_, /*keep=*/0);
    std::vector<adouble> ay(static_cast<std::size_t>(n_)), ap(static_cast<std::size_t>(p_)),
        af(static_cast<std::size_t>(n_));
    for (Index i = 0; i < n_; ++i) ay[i] <<= y[i];
    for (Index j = 0; j < p_; ++j) ap[j] <<= theta[j];
    rhs(ay.data(), ap.data(), af.data());
    for (Index i = 0; i < n_; ++i) af[i] >>= f_[i];
    trace_off();
  }

  void vjp(const double* y, const double* theta, const double* v, double* out_y,
           double* out_theta) {
    std::copy(y, y + n_, x_.begin());
    std::copy(theta, theta + p_, x_.begin() + n_);
    zos_forward(tag_, static_cast<int>(n_), static_cast<int>(n_ + p_), /*keep=*/1, x_.data(),
                f_.data());
    std::copy(v, v + n_, w_.begin());
    std::vector<double>& z = x_;  // fos_reverse writes all n + p adjoints; x_ is free again
    fos_reverse(tag_, static_cast<int>(n_), static_cast<int>(n_ + p_), w_.data(), z.data());
    std::copy(z.begin(), z.begin() + n_, out_y);
    std::copy(z.begin() + n_, z.end(), out_theta);
  }

 private:
  short tag_;
  Index n_, p_;
  std::vector<double> x_, f_, w_;
};

}  // namespace rwd::ad_choice
