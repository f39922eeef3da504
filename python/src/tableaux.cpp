// python/src/tableaux.cpp — rewind's explicit Runge–Kutta methods as data
// (rewind/integrators/butcher_tableau.hpp): the coefficients the C++ engine steps with, for a
// Python engine (rewind.torch) to step with the same methods.
//
//   rk4 = rewind.ButcherTableau.by_name("rk4")
//   rk4.stages, rk4.a, rk4.b, rk4.c      # 4, the 4×4 row-major A, the weights, the nodes
//   rewind.ButcherTableau.names()        # ['euler', 'heun', 'rk4', 'rk38', 'bs3', …]
//
// Only the tableau's own sources (integrators/src/butcher_tableau.cpp, order_conditions.cpp:
// the standard library and rewind/error.hpp) are compiled into the module, none of the
// integrators' dependencies.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.hpp"
#include "rewind/integrators/butcher_tableau.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace rwd::python {

void bind_tableaux(nb::module_& m) {
  nb::class_<ButcherTableau>(
      m, "ButcherTableau",
      "An explicit Runge-Kutta method as validated data: A (s x s, row-major, strictly lower "
      "triangular), weights b, nodes c = row sums of A, and embedded weights for an error "
      "estimate. The methods rewind's C++ engine steps with (rewind/integrators/"
      "butcher_tableau.hpp).")
      .def_ro("name", &ButcherTableau::name, "Short identifier, e.g. 'rk4'.")
      .def_ro("stages", &ButcherTableau::stages, "s.")
      .def_ro("a", &ButcherTableau::a, "s*s coefficients, row-major: a[i*s + j] = a_ij.")
      .def_ro("b", &ButcherTableau::b, "s weights of the propagated solution.")
      .def_ro("c", &ButcherTableau::c, "s nodes, c_i = sum_j a_ij.")
      .def_ro("b_embedded", &ButcherTableau::b_embedded,
              "s weights of the error estimator; empty if none.")
      .def_ro("order", &ButcherTableau::order, "Classical order p of (A, b).")
      .def_ro("embedded_order", &ButcherTableau::embedded_order, "0 without embedded weights.")
      .def_ro("fsal", &ButcherTableau::fsal,
              "The first stage of the next step equals the last stage of this one.")
      .def(
          "a_at",
          [](const ButcherTableau& t, int i, int j) {
            if (i < 0 || i >= t.stages || j < 0 || j >= t.stages)
              detail::fail<InvalidArgument>("tableau '", t.name, "': a_at(", i, ", ", j,
                                            ") is outside A, whose indices lie in [0, ", t.stages,
                                            ")");
            return t.a_at(i, j);
          },
          "i"_a, "j"_a, "a_ij, for 0 <= i, j < stages.")
      .def("validate", &ButcherTableau::validate,
           "Checks shape, explicitness, row sums and the order conditions up to the claimed "
           "order; raises InvalidArgument naming the first violated rule.")
      .def_static("by_name", &ButcherTableau::by_name, "name"_a,
                  "A shipped method by name: euler, heun, rk4 (classical), rk38 (Kutta's 3/8 "
                  "rule), bs3, dopri5, tsit5, or a long form (bogacki_shampine, "
                  "dormand_prince, tsitouras, kutta38); raises InvalidArgument otherwise.")
      .def_static("names", &ButcherTableau::names, "The shipped methods' short names.")
      .def("__repr__", [](const ButcherTableau& t) {
        return "<ButcherTableau " + t.name + ": " + std::to_string(t.stages) + " stages, order " +
               std::to_string(t.order) + ">";
      });
}

}  // namespace rwd::python
