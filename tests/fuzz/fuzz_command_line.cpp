// tests/fuzz/fuzz_command_line.cpp — libFuzzer harness of the `rewind` command line: the bytes
// are argv (arguments separated by NUL bytes, at most 64), parsed by the tool's own CLI::App
// (rwd::cli::add_rewind_command_line), stopped before any subcommand's action, so that a parse
// converts and range-checks every option and does no work and writes nothing. A bad command line
// must be refused with a CLI::ParseError (CLI11) or an rwd::Error (rewind's checks, e.g. an
// integer out of its range); anything else is a finding. Each token is also read by the
// command line's value parsers directly (integers, byte sizes, policies, schedules).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../../src/cli/byte_size.hpp"
#include "../../src/cli/checkpoint_flags.hpp"
#include "../../src/cli/command_line.hpp"
#include "../../src/cli/integer_text.hpp"
#include "rewind/error.hpp"

namespace {

CLI::App& command_line() {
  static CLI::App* app = [] {
    auto* made = new CLI::App("rewind (fuzzing)", "rewind");
    rwd::cli::add_rewind_command_line(*made, "fuzz");
    rwd::cli::stop_before_actions(*made);
    return made;
  }();
  return *app;
}

template <class F>
void refused_or_read(F&& f) {
  try {
    f();
  } catch (const rwd::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"rewind"};
  std::string current;
  for (std::size_t i = 0; i < size && args.size() < 64; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  if (args.size() < 64) args.push_back(current);

  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& text = args[i];
    using rwd::cli::IntegerRange;
    refused_or_read([&] { (void)rwd::cli::parse_count("--steps", text); });
    refused_or_read([&] {
      (void)rwd::cli::parse_integer<int>("--compression", text, IntegerRange::between(0, 9));
    });
    refused_or_read([&] {
      (void)rwd::cli::parse_integer<std::uint64_t>("--seed", text, IntegerRange::unsigned_seed());
    });
    refused_or_read([&] {
      (void)rwd::cli::parse_integer<std::int64_t>(
          "--x", text, IntegerRange::between(INT64_MIN, UINT64_MAX >> 1));
    });
    refused_or_read([&] { (void)rwd::cli::parse_byte_size("--memory", text); });
    refused_or_read([&] { (void)rwd::cli::parse_drift_policy(text); });
  }

  // argv as main() gets it.
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  try {
    command_line().parse(static_cast<int>(args.size()), argv.data());
  } catch (const rwd::cli::CommandLineChecked&) {
  } catch (const CLI::ParseError&) {
  } catch (const rwd::Error&) {
  }
  return 0;
}
