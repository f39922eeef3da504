// Observations: the steps and the noise of synthetic data, the rules validate() enforces, and
// observation files — a bit-for-bit round trip, no half-written or replaced file, and every bad
// file (missing, not HDF5, another HDF5 file, another version, truncated, bad contents) refused
// with a message that names the file and what is wrong.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "fit_test_problems.hpp"
#include "rewind/error.hpp"
#include "rewind/fit/observations.hpp"
#include "support/error_message.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using rwd::testing::error_message;
using rwd::testing::expect_message;
using rwd::testing::gray_scott_observations;
using rwd::testing::lotka_volterra_observations;
using test::ScratchDirectory;

std::string invalid(const Observations& obs) {
  return error_message<InvalidArgument>([&] { obs.validate(); });
}

// --- HDF5 surgery on saved files, for the refusals of bad files
// -----------------------------------

void set_integer_attribute(const std::filesystem::path& file, const char* name,
                           std::int64_t value) {
  const hid_t h5 = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(h5, 0);
  const hid_t attribute = H5Aopen(h5, name, H5P_DEFAULT);
  ASSERT_GE(attribute, 0);
  EXPECT_GE(H5Awrite(attribute, H5T_NATIVE_INT64, &value), 0);
  H5Aclose(attribute);
  H5Fclose(h5);
}

// Rewrites dataset `name` (same extent) with `values`, in the dataset's own row-major order.
template <class T>
void rewrite_dataset(const std::filesystem::path& file, const char* name, hid_t memory_type,
                     const std::vector<T>& values) {
  const hid_t h5 = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(h5, 0);
  const hid_t set = H5Dopen2(h5, name, H5P_DEFAULT);
  ASSERT_GE(set, 0);
  EXPECT_GE(H5Dwrite(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  H5Dclose(set);
  H5Fclose(h5);
}

// An HDF5 file of some other program: one dataset, and a string attribute "format" if given.
void write_foreign_hdf5(const std::filesystem::path& file, const char* format) {
  const hid_t h5 = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(h5, 0);
  const hsize_t n = 3;
  const double values[3] = {1, 2, 3};
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t set =
      H5Dcreate2(h5, "x", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
  H5Dclose(set);
  H5Sclose(space);
  if (format) {
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, std::strlen(format));
    const hid_t scalar = H5Screate(H5S_SCALAR);
    const hid_t attribute = H5Acreate2(h5, "format", type, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attribute, type, format);
    H5Aclose(attribute);
    H5Sclose(scalar);
    H5Tclose(type);
  }
  H5Fclose(h5);
}

std::string storage_error(const std::filesystem::path& file) {
  return error_message<StorageError>([&] { load_observations(file); });
}

// ------------------------------------------------------------------------------------------------

TEST(EveryKthStep, ListsTheMultiplesUpToTheHorizon) {
  EXPECT_EQ(every_kth_step(10, 3), (std::vector<Index>{3, 6, 9}));
  EXPECT_EQ(every_kth_step(9, 3), (std::vector<Index>{3, 6, 9}));
  EXPECT_EQ(every_kth_step(5, 1), (std::vector<Index>{1, 2, 3, 4, 5}));
  EXPECT_EQ(every_kth_step(7, 7), (std::vector<Index>{7}));
  expect_message(error_message<InvalidArgument>([] { every_kth_step(10, 0); }),
                 "k = 0 must be >= 1");
  expect_message(error_message<InvalidArgument>([] { every_kth_step(0, 1); }),
                 "steps = 0 must be >= 1");
  expect_message(error_message<InvalidArgument>([] { every_kth_step(5, 6); }), "observes nothing");
}

TEST(ObserveTrajectory, NoiseFreeDataAreTheStatesAtTheObservedSteps) {
  const GrayScott<> model(6);
  const Eigen::VectorXd y0 = model.default_initial_state(3);
  const Eigen::VectorXd theta = testing::gray_scott_parameters();
  ExplicitRungeKutta stepper(model, ButcherTableau::rk4(), StepControl::fixed(0.0, 1.0, 40));
  const ObservedField v{"v", 36, 36};
  const std::vector<Index> steps = {0, 5, 17, 40};
  const Eigen::MatrixXd data = observe_trajectory(stepper, y0, theta, steps, v, 0.0, 1);
  ASSERT_EQ(data.rows(), 36);
  ASSERT_EQ(data.cols(), 4);
  Eigen::VectorXd y = y0;
  Carry carry = stepper.initial_carry(y, theta);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    while (carry.step < steps[k]) stepper.step(y, carry, theta);
    for (Index i = 0; i < 36; ++i)
      EXPECT_EQ(data(i, static_cast<Index>(k)), y[36 + i]) << "step " << steps[k];
  }
}

TEST(ObserveTrajectory, NoiseIsReproducibleStandardNormalAndKeyedBySeed) {
  const GrayScott<> model(8);
  ExplicitRungeKutta stepper(model, ButcherTableau::rk4(), StepControl::fixed(0.0, 1.0, 100));
  const Eigen::VectorXd y0 = model.default_initial_state(3);
  const Eigen::VectorXd theta = testing::gray_scott_parameters();
  const ObservedField v{"v", 64, 64};
  const std::vector<Index> steps = every_kth_step(100, 2);  // 50 × 64 = 3200 draws
  const double sigma = 0.01;
  const Eigen::MatrixXd exact = observe_trajectory(stepper, y0, theta, steps, v, 0.0, 5);
  const Eigen::MatrixXd noisy = observe_trajectory(stepper, y0, theta, steps, v, sigma, 5);
  const Eigen::MatrixXd again = observe_trajectory(stepper, y0, theta, steps, v, sigma, 5);
  const Eigen::MatrixXd other = observe_trajectory(stepper, y0, theta, steps, v, sigma, 6);
  EXPECT_EQ(std::memcmp(noisy.data(), again.data(),
                        sizeof(double) * static_cast<std::size_t>(noisy.size())),
            0);
  EXPECT_NE(noisy, other);
  const Eigen::ArrayXXd xi = (noisy - exact).array() / sigma;
  const double n = static_cast<double>(xi.size());
  const double mean = xi.mean();
  const double variance = (xi - mean).square().sum() / (n - 1);
  // 3200 standard normal draws: the mean within 4 standard errors (4/√3200 = 0.071), the
  // variance within 4 of its standard errors (4·√(2/3199) = 0.1).
  EXPECT_LT(std::abs(mean), 0.071);
  EXPECT_LT(std::abs(variance - 1.0), 0.1);
  EXPECT_LT(xi.abs().maxCoeff(), 5.5);
  // The draws depend only on (seed, step, component): fewer observed steps, the same draws there.
  const Eigen::MatrixXd sparse = observe_trajectory(stepper, y0, theta, {10, 60}, v, sigma, 5);
  EXPECT_EQ(sparse.col(0), noisy.col(4));
  EXPECT_EQ(sparse.col(1), noisy.col(29));
  // Step and component are separate keys, not a sum or a product.
  EXPECT_EQ(detail::observation_noise(1, 2, 3), detail::observation_noise(1, 2, 3));
  EXPECT_NE(detail::observation_noise(1, 2, 3), detail::observation_noise(1, 3, 2));
}

TEST(ObserveTrajectory, RefusesBadRequestsBeforeAnyWork) {
  const LotkaVolterra<> model;
  const Eigen::VectorXd y0 = model.default_initial_state(), theta = model.default_parameters();
  ExplicitRungeKutta stepper(model, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 50));
  const ObservedField all{"all", 0, 2};
  auto refused = [&](const std::vector<Index>& steps, const ObservedField& field, double noise) {
    return error_message<InvalidArgument>(
        [&] { observe_trajectory(stepper, y0, theta, steps, field, noise, 1); });
  };
  expect_message(refused({10, 60}, all, 0.0),
                 "observed step 60 lies outside the run's horizon [0, 50]");
  expect_message(refused({10, 10}, all, 0.0),
                 "must increase strictly, but step 10 follows step 10");
  expect_message(refused({}, all, 0.0), "no observed steps");
  expect_message(refused({10}, {"x", 1, 2}, 0.0),
                 "field 'x' (offset 1, count 2) lies outside the state of 2");
  expect_message(refused({10}, all, -0.1),
                 "noise σ = -0.10000000000000001 must be finite and >= 0");
  EXPECT_EQ(stepper.counters().steps, 0) << "nothing was integrated";
  ExplicitRungeKutta adaptive(model, ButcherTableau::by_name("dopri5"),
                              StepControl::adaptive(0.0, 1.0, 1e-6, 1e-9));
  expect_message(error_message<InvalidArgument>(
                     [&] { observe_trajectory(adaptive, y0, theta, {1}, all, 0.0, 1); }),
                 "needs a fixed-step stepper");
}

TEST(ObservationsValidate, NamesTheRuleThatIsBroken) {
  const Observations good = lotka_volterra_observations(100, 10, 0.01);
  EXPECT_NO_THROW(good.validate());

  Observations obs = good;
  obs.data(1, 3) = std::nan("");
  std::string message = invalid(obs);
  expect_message(message,
                 "the datum at step 40 (observation 3), component 1 of field 'all' (state "
                 "component 1) is nan");

  obs = good;
  obs.method_settings.newton_rtol = -1e-10;
  expect_message(invalid(obs), "the method's newton_rtol = -1e-10 must be finite and >= 0");

  obs = good;
  obs.observed_steps[4] = obs.observed_steps[3];
  expect_message(
      invalid(obs),
      "observed steps must increase strictly, but step 40 (observation 4) follows step 40");
  obs.observed_steps[4] = 35;
  expect_message(invalid(obs), "step 35 (observation 4) follows step 40");

  obs = good;
  obs.observed_steps.back() = 101;
  expect_message(invalid(obs),
                 "observed step 101 (observation 9) lies outside the horizon [0, 100]");
  obs.observed_steps.front() = -1;
  expect_message(invalid(obs), "observed step -1 (observation 0) lies outside the horizon");

  obs = good;
  obs.field = {"v", 1, 2};
  expect_message(
      invalid(obs),
      "field 'v' (components 1 to 2, offset 1, count 2) lies outside the state of 2 components");
  obs.field = {"v", 0, 0};
  expect_message(invalid(obs), "lies outside the state");
  obs.field = {"", 0, 2};
  expect_message(invalid(obs), "the observed field has no name");

  obs = good;
  obs.noise = -1e-3;
  expect_message(invalid(obs), "noise σ = -0.001 must be finite and >= 0");
  obs.noise = std::numeric_limits<double>::infinity();
  expect_message(invalid(obs), "noise σ = inf");

  obs = good;
  obs.data.conservativeResize(2, 9);
  expect_message(invalid(obs), "data is 2 × 9 but must be 2 × 10");
  obs = good;
  obs.initial_state.resize(3);
  obs.initial_state.setZero();
  expect_message(invalid(obs), "the initial state has 3 components but state_size = 2");
  obs = good;
  obs.parameter_names.pop_back();
  expect_message(invalid(obs), "3 parameter names for 4 parameters");
  obs = good;
  obs.parameter_names[1] = "alpha";
  expect_message(invalid(obs), "two parameters are named 'alpha'");
  obs = good;
  obs.parameter_names[1] = "a,b";
  expect_message(invalid(obs), "the name of parameter 1, 'a,b'");
  obs = good;
  obs.parameters[2] = std::nan("");
  expect_message(invalid(obs), "parameter delta = nan is not finite");
  obs = good;
  obs.dt = 0.0;
  expect_message(invalid(obs), "dt = 0 must be finite and > 0");
  obs = good;
  obs.problem.clear();
  expect_message(invalid(obs), "the problem's name is empty");
  obs = good;
  obs.observed_steps.clear();
  obs.data.resize(2, 0);
  expect_message(invalid(obs), "no observed steps");
}

TEST(ObservationFile, RoundTripIsBitForBit) {
  ScratchDirectory dir("rewind-observations");
  for (const Observations& obs :
       {lotka_volterra_observations(200, 10, 0.05, 123), gray_scott_observations(5, 30, 3, 0.01)}) {
    SCOPED_TRACE(obs.problem);
    const auto file = dir / (obs.problem + ".h5");
    save_observations(file, obs);
    const Observations back = load_observations(file);
    EXPECT_EQ(back.problem, obs.problem);
    EXPECT_EQ(back.size, obs.size);
    EXPECT_EQ(back.state_size, obs.state_size);
    EXPECT_EQ(back.method, obs.method);
    EXPECT_EQ(std::memcmp(&back.dt, &obs.dt, sizeof(double)), 0);
    EXPECT_EQ(back.steps, obs.steps);
    EXPECT_EQ(back.parameter_names, obs.parameter_names);
    EXPECT_EQ(back.parameters, obs.parameters);
    EXPECT_EQ(back.field.name, obs.field.name);
    EXPECT_EQ(back.field.offset, obs.field.offset);
    EXPECT_EQ(back.field.count, obs.field.count);
    EXPECT_EQ(std::memcmp(&back.noise, &obs.noise, sizeof(double)), 0);
    EXPECT_EQ(back.seed, obs.seed);
    EXPECT_EQ(back.observed_steps, obs.observed_steps);
    ASSERT_EQ(back.data.rows(), obs.data.rows());
    ASSERT_EQ(back.data.cols(), obs.data.cols());
    EXPECT_EQ(std::memcmp(back.data.data(), obs.data.data(),
                          sizeof(double) * static_cast<std::size_t>(obs.data.size())),
              0);
    EXPECT_EQ(back.initial_state, obs.initial_state);
  }
  // A seed above 2^63 survives (stored unsigned).
  Observations obs = lotka_volterra_observations(20, 10);
  obs.seed = 0xFEDCBA9876543210ULL;
  save_observations(dir / "seed.h5", obs);
  EXPECT_EQ(load_observations(dir / "seed.h5").seed, obs.seed);
}

TEST(ObservationFile, NeverReplacesAFileUnlessAskedAndLeavesNothingBehind) {
  ScratchDirectory dir("rewind-observations");
  const auto file = dir / "obs.h5";
  const Observations first = lotka_volterra_observations(100, 10, 0.0);
  const Observations second = lotka_volterra_observations(100, 20, 0.1);
  save_observations(file, first);
  const std::string message = error_message<StorageError>([&] { save_observations(file, second); });
  expect_message(message, file.string());
  expect_message(message, "exists already; not overwritten");
  EXPECT_EQ(load_observations(file).observed_steps, first.observed_steps) << "untouched";
  save_observations(file, second, /*overwrite=*/true);
  EXPECT_EQ(load_observations(file).observed_steps, second.observed_steps);

  // Invalid observations are refused before a file is made.
  Observations bad = first;
  bad.data(0, 0) = std::numeric_limits<double>::infinity();
  EXPECT_THROW(save_observations(dir / "bad.h5", bad), InvalidArgument);
  expect_message(error_message<StorageError>(
                     [&] { save_observations(dir / "no" / "such" / "dir.h5", first); }),
                 "does not exist");
  expect_message(error_message<StorageError>([&] { save_observations(dir.path(), first, true); }),
                 "is a directory");
  EXPECT_EQ(dir.files().size(), 1u) << "only obs.h5: no temporary or refused file is left";
}

TEST(ObservationFile, AFailedWriteLeavesNoFile) {
  ScratchDirectory dir("rewind-observations");
  const Observations obs = gray_scott_observations(8, 40, 2);
  {
    test::FileSizeLimit limit(4096);  // writes past 4 KiB fail with EFBIG, as on a full disk
    const std::string message =
        error_message<StorageError>([&] { save_observations(dir / "full.h5", obs); });
    expect_message(message, "writing failed");
  }
  EXPECT_TRUE(dir.files().empty());
}

TEST(ObservationFile, MissingDirectoryAndNonHdf5FilesAreRefused) {
  ScratchDirectory dir("rewind-observations");
  std::string message = storage_error(dir / "absent.h5");
  expect_message(message, "observation file '" + (dir / "absent.h5").string() + "'");
  expect_message(message, "does not exist");
  expect_message(storage_error(dir.path()), "is a directory, not a file");
  {
    std::ofstream text(dir / "text.h5");
    text << "step,v\n10,0.25\n";
  }
  expect_message(storage_error(dir / "text.h5"), "is not an HDF5 file");
}

TEST(ObservationFile, AnotherHdf5FileIsNotAnObservationFile) {
  ScratchDirectory dir("rewind-observations");
  write_foreign_hdf5(dir / "plain.h5", nullptr);
  expect_message(storage_error(dir / "plain.h5"),
                 "is an HDF5 file but not a rewind observation file (no 'format' attribute)");
  write_foreign_hdf5(dir / "params.h5", "rewind mlp parameters");
  expect_message(storage_error(dir / "params.h5"),
                 "not a rewind observation file (format 'rewind mlp parameters', expected 'rewind "
                 "observations')");
}

TEST(ObservationFile, AnotherFormatVersionIsRefused) {
  ScratchDirectory dir("rewind-observations");
  const auto file = dir / "obs.h5";
  save_observations(file, lotka_volterra_observations(50, 10));
  set_integer_attribute(file, "format_version", 3);
  expect_message(storage_error(file),
                 "has format_version 3; this build of rewind reads versions 1 to 2");
  set_integer_attribute(file, "format_version", 0);
  expect_message(storage_error(file),
                 "has format_version 0; this build of rewind reads versions 1 to 2");
}

TEST(ObservationFile, TheMethodsSettingsRoundTrip) {
  ScratchDirectory dir("rewind-observations");
  Observations obs = lotka_volterra_observations(50, 10);
  obs.method_settings = {1e-8, 1e-12, "band", 1e-11, 1e-13};
  save_observations(dir / "settings.h5", obs);
  EXPECT_EQ(load_observations(dir / "settings.h5").method_settings, obs.method_settings);
}

// A version 1 file, written before the method's settings were recorded: the attributes it lacks
// read as the defaults (none set), whatever else it holds reads as before.
TEST(ObservationFile, AVersionOneFileReadsWithTheMethodsDefaults) {
  ScratchDirectory dir("rewind-observations");
  const auto file = dir / "v1.h5";
  Observations obs = lotka_volterra_observations(50, 10, 0.05, 3);
  obs.method_settings = {1e-8, 1e-12, "dense", 1e-11, 1e-13};
  save_observations(file, obs);
  const hid_t h5 = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(h5, 0);
  for (const char* name : {"rtol", "atol", "linear_solver", "newton_rtol", "newton_atol"})
    EXPECT_GE(H5Adelete(h5, name), 0) << name;
  H5Fclose(h5);
  set_integer_attribute(file, "format_version", 1);
  const Observations back = load_observations(file);
  EXPECT_EQ(back.method_settings, MethodSettings{});
  EXPECT_EQ(back.data, obs.data);
  EXPECT_EQ(back.parameters, obs.parameters);
  // Version 2 requires them.
  set_integer_attribute(file, "format_version", 2);
  expect_message(storage_error(file), "has no attribute 'rtol'");
}

TEST(ObservationFile, TruncatedFilesAreRefused) {
  ScratchDirectory dir("rewind-observations");
  const auto file = dir / "obs.h5";
  save_observations(file, gray_scott_observations(8, 40, 2));
  const std::vector<char> bytes = test::read_bytes(file);
  for (double fraction : {0.9, 0.5, 0.05}) {
    SCOPED_TRACE(fraction);
    const auto cut = dir / "cut.h5";
    {
      std::ofstream out(cut, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(),
                static_cast<std::streamsize>(static_cast<double>(bytes.size()) * fraction));
    }
    expect_message(storage_error(cut), cut.string());
    std::filesystem::remove(cut);
  }
}

TEST(ObservationFile, BadContentsAreRefusedNamingTheFileAndThePlace) {
  ScratchDirectory dir("rewind-observations");
  const Observations obs = lotka_volterra_observations(100, 10, 0.01);
  const auto load_invalid = [](const std::filesystem::path& file) {
    return error_message<InvalidArgument>([&] { load_observations(file); });
  };

  // NaN in the data: /data is [observed steps × count], row 3 = step 40, column 1.
  auto file = dir / "nan.h5";
  save_observations(file, obs);
  std::vector<double> data(obs.data.data(), obs.data.data() + obs.data.size());
  data[3 * 2 + 1] = std::nan("");
  rewrite_dataset(file, "data", H5T_NATIVE_DOUBLE, data);
  std::string message = load_invalid(file);
  expect_message(message, "observation file '" + file.string() + "'");
  expect_message(message, "the datum at step 40 (observation 3), component 1");

  // Steps not increasing, and beyond the horizon.
  file = dir / "steps.h5";
  save_observations(file, obs);
  std::vector<std::int64_t> steps(obs.observed_steps.begin(), obs.observed_steps.end());
  std::swap(steps[2], steps[3]);
  rewrite_dataset(file, "observed_steps", H5T_NATIVE_INT64, steps);
  expect_message(
      load_invalid(file),
      "observed steps must increase strictly, but step 30 (observation 3) follows step 40");
  std::swap(steps[2], steps[3]);
  steps.back() = 1000;
  rewrite_dataset(file, "observed_steps", H5T_NATIVE_INT64, steps);
  expect_message(load_invalid(file),
                 "observed step 1000 (observation 9) lies outside the horizon [0, 100]");

  // A field outside the state, and negative noise.
  file = dir / "field.h5";
  save_observations(file, obs);
  set_integer_attribute(file, "field_offset", 1);
  expect_message(load_invalid(file),
                 "field 'all' (components 1 to 2, offset 1, count 2) lies outside the state of 2");
  file = dir / "noise.h5";
  save_observations(file, obs);
  {
    const hid_t h5 = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t attribute = H5Aopen(h5, "noise", H5P_DEFAULT);
    const double negative = -0.5;
    H5Awrite(attribute, H5T_NATIVE_DOUBLE, &negative);
    H5Aclose(attribute);
    H5Fclose(h5);
  }
  expect_message(load_invalid(file), "noise σ = -0.5 must be finite and >= 0");
}

}  // namespace
}  // namespace rwd
