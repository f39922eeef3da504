// tests/fuzz/make_seeds.cpp — writes the HDF5 files of the seed corpus (tests/fuzz/corpus/) with
// rewind's own writers, small on purpose (a few KiB each), so the harnesses start from files that
// reach deep into the readers:
//
//   build-fuzz/tests/fuzz/fuzz_make_seeds tests/fuzz/corpus
//
// fuzz_snapshot_file/  snapshot files: plain (2 of 3 slots written), compressed, one slot with a
//                      flipped bit (fails its checksum)
// fuzz_time_series/    a time series and a set of two trajectories (HDF5; the CSV seeds are text
//                      files checked in as they are)
// fuzz_model_file/     a parameter file, a model file, a training checkpoint
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "rewind/carry.hpp"
#include "rewind/disk/hdf5_snapshot_file.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/neural/model_file.hpp"
#include "rewind/neural/parameter_file.hpp"
#include "rewind/neural/time_series.hpp"
#include "rewind/neural/training_checkpoint.hpp"

namespace fs = std::filesystem;

namespace {

void replace(const fs::path& path) {
  fs::remove(path);
}

void snapshot_files(const fs::path& dir) {
  fs::create_directories(dir);
  for (int compression : {0, 3}) {
    const fs::path path = dir / (compression ? "compressed.h5" : "plain.h5");
    replace(path);
    rwd::SnapshotFileOptions options;
    options.compression_level = compression;
    auto file =
        rwd::Hdf5SnapshotFile::create(path, 3, 4, static_cast<int>(sizeof(rwd::Carry)), options);
    const std::vector<double> state = {1.0, -2.5, 3.25, 1e-300};
    rwd::Carry carry;
    carry.t = 0.5;
    std::vector<std::byte> meta(sizeof carry);
    std::memcpy(meta.data(), &carry, sizeof carry);
    file.write(0, 0, state, meta);
    file.write(2, 17, state, meta);
    file.close();
  }
  // The plain file with one bit of the state data flipped: a checksum mismatch.
  std::ifstream in(dir / "plain.h5", std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::vector<char> needle = [] {
    const double value = -2.5;
    std::vector<char> b(sizeof value);
    std::memcpy(b.data(), &value, sizeof value);
    return b;
  }();
  const auto at = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
  if (at != bytes.end()) *(at + 1) = static_cast<char>(*(at + 1) ^ 0x10);
  std::ofstream(dir / "flipped_bit.h5", std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void time_series_files(const fs::path& dir) {
  fs::create_directories(dir);
  rwd::training::TimeSeries series;
  series.times = {0.0, 0.5, 1.25};
  series.values.resize(2, 3);
  series.values << 1.0, 2.0, 3.0, -1.0, 0.5, 1e-3;
  series.names = {"x", "v"};
  const fs::path path = dir / "series.h5";
  replace(path);
  rwd::training::save_time_series_hdf5(path, series);
}

rwd::nn::NeuralModel small_model() {
  rwd::nn::NeuralModel model;
  model.hidden = {3};
  model.observed = 2;
  model.names = {"x", "y"};
  model.mean = Eigen::Vector2d(0.5, -0.5);
  model.scale = Eigen::Vector2d(1.0, 2.0);
  model.training_options = "{\"iterations\": 1}";
  return model;
}

void model_files(const fs::path& dir) {
  fs::create_directories(dir);
  const rwd::nn::NeuralModel model = small_model();
  const rwd::nn::Mlp mlp = model.network();
  Eigen::VectorXd theta = Eigen::VectorXd::LinSpaced(mlp.parameter_size(), -1.0, 1.0);
  replace(dir / "parameters.h5");
  rwd::nn::save_parameters(dir / "parameters.h5", mlp, theta);
  replace(dir / "model.h5");
  rwd::nn::save_model(dir / "model.h5", model, theta);
  rwd::training::TrainingState state;
  state.iteration = 2;
  state.optimizer.kind = "adam";
  state.optimizer.steps = 2;
  state.optimizer.vectors = {theta * 0.1, theta.cwiseAbs()};
  state.best_theta = theta;
  state.best_validation = 0.25;
  state.best_iteration = 1;
  state.losses = {1.0, 0.5};
  state.gradient_norms = {2.0, 1.0};
  state.learning_rates = {0.01, 0.01};
  state.evaluation_iterations = {1};
  state.train_errors = {0.5};
  state.validation_errors = {0.25};
  replace(dir / "checkpoint.h5");
  rwd::training::save_training_checkpoint(dir / "checkpoint.h5", model, theta, state);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_make_seeds CORPUS_DIR (tests/fuzz/corpus)\n";
    return 2;
  }
  const fs::path corpus = argv[1];
  snapshot_files(corpus / "fuzz_snapshot_file");
  time_series_files(corpus / "fuzz_time_series");
  model_files(corpus / "fuzz_model_file");
  return 0;
}
