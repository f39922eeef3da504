// tests/fuzz/fuzz_model_file.cpp — libFuzzer harness of the parameter and model files that
// `rewind predict` and `rewind train --load-parameters/--resume` read: the bytes as an HDF5 file,
// read by rwd::nn::load_model, describe_file_network, load_parameters (against the spiral's
// 2-50-2 network and a small one) and rwd::training::load_training_checkpoint. Bad files must be
// refused with an rwd::Error; anything else is a finding.
#include <cstddef>
#include <cstdint>

#include "fuzz_input_file.hpp"
#include "rewind/error.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/neural/model_file.hpp"
#include "rewind/neural/parameter_file.hpp"
#include "rewind/neural/training_checkpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const rwd::nn::Mlp spiral({2, 50, 2}, rwd::nn::Activation::tanh);
  static const rwd::nn::Mlp small({2, 3, 2}, rwd::nn::Activation::tanh);
  const auto& path = rwd::fuzz::write_input(data, size, ".h5");
  try {
    const rwd::nn::LoadedModel loaded = rwd::nn::load_model(path);
    // A model the loader accepted must be usable: build its network and field.
    (void)loaded.model.network();
    (void)loaded.model.field();
  } catch (const rwd::Error&) {
  }
  try {
    (void)rwd::nn::describe_file_network(path);
  } catch (const rwd::Error&) {
  }
  for (const rwd::nn::Mlp* mlp : {&spiral, &small}) {
    try {
      (void)rwd::nn::load_parameters(path, *mlp);
    } catch (const rwd::Error&) {
    }
  }
  try {
    (void)rwd::training::load_training_checkpoint(path);
  } catch (const rwd::Error&) {
  }
  rwd::fuzz::expect_no_open_hdf5_objects("loading the file");
  return 0;
}
