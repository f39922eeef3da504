// rewind/distributed/distributed_cvodes.hpp — rwd::CvodesIntervalStepper over MPI ranks: the
// stepper's vector hook for rwd::DistributedBackend, on rewind's distributed N_Vector.
//
//   #include "rewind/distributed/distributed_cvodes.hpp"
//   rwd::DistributedBrusselator problem(64, rwd::Communicator::world());
//   rwd::CvodesOptions bdf;
//   bdf.linear_solver = rwd::CvodesLinearSolver::gmres;   // dense and band do not distribute
//   rwd::CvodesIntervalStepper stepper(problem, bdf, rwd::IntervalGrid{0.0, 1.0, 10});
//   rwd::CheckpointedAdjoint driver(stepper, objective);   // unchanged, on every rank
//
// CVODES computes with clones of the vector it is given
// (rewind/distributed/distributed_nvector.hpp), so its every reduction is a deterministic
// collective and every rank follows the same control flow; the problem's rhs, jvp and vjp get
// CVODES's vectors as DistributedVectors without a copy. The gradient has the same bits for 1, 2, 4
// ranks and any thread count (tests/distributed/distributed_brusselator_test.cpp).
#pragma once

#include <vector>

#include "rewind/distributed/distributed_backend.hpp"
#include "rewind/distributed/distributed_nvector.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"

namespace rwd {

template <>
struct CvodesVectorTraits<DistributedBackend> {
  using Vector = DistributedVector;
  // A matrix of the whole state on one process is what splitting the state avoids.
  static constexpr bool matrix_solvers = false;
  // The diagonally implicit engine runs on these vectors with matrix-free GMRES
  // (rwd::MatrixFreeStageMatrix; tests/distributed/distributed_implicit_test.cpp).
  static constexpr bool matrix_free_implicit = true;

  static N_Vector view(Vector& v, CvodesVectors kind, SUNContext context) {
    if (kind != CvodesVectors::rewind)
      detail::fail<InvalidArgument>(
          "CVODES on the distributed backend runs on rewind's distributed vectors only "
          "(CvodesVectors::rewind); SUNDIALS' serial vector holds one process's values");
    return sundials::make_distributed_nvector_view(v, context);
  }
  // Every vector CVODES hands to a callback is a clone of one made by `view`.
  static const Vector& in(N_Vector source, Vector&) { return *own(source); }
  static Vector& out(N_Vector target, Vector&) { return *own(target); }
  static void store(N_Vector, const Vector&) {}  // `out` wrote in place
  static bool all_finite(const Vector& v) { return DistributedBackend::all_finite(v); }

  // v's entries from the global values (one value: all of them), each rank its own rows.
  static void assign(Vector& v, const std::vector<double>& values) {
    if (values.size() == 1 || !v.layout) {
      for (Index i = 0; i < v.local.size(); ++i)
        v.local[i] = values.size() == 1 ? values[0] : values[static_cast<std::size_t>(i)];
      return;
    }
    const RowLayout& l = *v.layout;
    const Index length = l.row_length(), rows = l.local_rows();
    for (Index f = 0; f < l.fields(); ++f)
      for (Index r = 0; r < rows; ++r)
        for (Index c = 0; c < length; ++c) {
          const Index global = (f * l.rows() + l.first_row() + r) * length + c;
          v.local[(f * rows + r) * length + c] = values[static_cast<std::size_t>(global)];
        }
  }

 private:
  static Vector* own(N_Vector v) {
    Vector* x = sundials::distributed_vector(v);
    if (!x)
      detail::fail<InvalidArgument>(
          "CVODES on the distributed backend: a callback got a vector that is not rewind's "
          "distributed N_Vector");
    return x;
  }
};

}  // namespace rwd
