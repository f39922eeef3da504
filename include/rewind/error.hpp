// rewind/error.hpp — the one error hierarchy used everywhere in rewind.
//
// All of rewind lives in namespace `rwd` (C's <stdio.h> already declares a global function
// named rewind, so a namespace of that name cannot coexist with it).
//
// Every failure is an exception derived from rwd::Error, so a caller can catch one type.
// The subclasses say which contract was violated:
//   InvalidArgument — bad input refused before any work (sizes, budgets, tableaux, tolerances);
//   NumericalError  — NaN/Inf in a state or adjoint; the message names the step and the time;
//   SolverError     — an integrator could not proceed (step size underflow, too many rejections);
//   StorageError    — a snapshot could not be written or read back intact (full disk, missing or
//                     replaced file, checksum mismatch, permissions): never a wrong gradient.
//
//   try { driver.run(...); } catch (const rwd::NumericalError& e) { std::cerr << e.what(); }
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace rwd {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InvalidArgument : public Error {
 public:
  using Error::Error;
};

class NumericalError : public Error {
 public:
  using Error::Error;
};

class SolverError : public Error {
 public:
  using Error::Error;
};

class StorageError : public Error {
 public:
  using Error::Error;
};

namespace detail {

// Builds a message from any streamable pieces: fail<InvalidArgument>("dt = ", dt, " must be > 0").
template <class E, class... Parts>
[[noreturn]] void fail(Parts&&... parts) {
  std::ostringstream out;
  out.precision(17);
  (out << ... << std::forward<Parts>(parts));
  throw E(out.str());
}

}  // namespace detail
}  // namespace rwd
