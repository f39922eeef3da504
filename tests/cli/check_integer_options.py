#!/usr/bin/env python3
"""Every integer option of every `rewind` subcommand refuses numbers that parse wrongly (a ctest
added by src/cli).

    python3 tests/cli/check_integer_options.py path/to/rewind

For each integer option below (run, plan, train, train spiral, predict, generate, generate spiral,
fit, and --threads) and each hostile value — 1e20, -1, 1.5, 2^64, an empty value, a word — given
both as `--opt VALUE` and `--opt=VALUE`: the tool exits 2, prints nothing on stdout and one line
on stderr, "rewind: error: OPTION = 'VALUE' ...: OPTION takes a whole number in [MIN, MAX]", that
names the option, what was typed and the range; and it runs in an empty directory (where every
output file the command line names would go) that is still empty afterwards: nothing written.
(`--layers ''` is no hidden layer, a linear field, and is not tried; each width is.)
"""
import os
import re
import subprocess
import sys
import tempfile

HOSTILE = ["1e20", "-1", "1.5", "18446744073709551616", "", "ten"]

# (command prefix, option, range as printed). Prefixes name what the subcommand requires, so
# that the integer is the only thing wrong; output paths are relative (the empty directory).
RUN = ["run", "lorenz96"]
PLAN = ["plan", "--steps", "100", "--snapshots", "4"]
TRAIN = ["train", "--data", "missing.csv", "--save-parameters", "m.h5", "--json", "log.json"]
SPIRAL = ["train", "spiral", "--data", "missing.csv", "--json", "log.json"]
PREDICT = ["predict", "-p", "missing.h5", "--y0", "1,2", "--output", "p.csv"]
GENERATE = ["generate", "lorenz96", "--observe-every", "5", "--out", "o.h5"]
GENERATE_SPIRAL = ["generate", "spiral", "--out", "s.csv"]
FIT = ["fit", "lorenz96", "--observations", "missing.h5", "--fit", "F", "--plot", "fit"]
COUNT = "[1, 2^62]"
COUNT0 = "[0, 2^62]"
USEED = "[0, 2^64 - 1]"
INT = "[1, 2^31 - 1]"
CASES = [
    (RUN, "--n", COUNT), (RUN, "--seed", USEED), (RUN, "--fd-seed", USEED),
    (RUN, "--steps", COUNT), (RUN, "--snapshots", COUNT), (RUN, "--interval", COUNT),
    (RUN + ["--disk", "."], "--ram-snapshots", COUNT),
    (RUN + ["--disk", ".", "--ram-snapshots", "2"], "--disk-snapshots", COUNT0),
    (RUN, "--device-snapshots", COUNT0), (RUN, "--host-snapshots", COUNT0),
    (RUN + ["--disk", ".", "--snapshots", "3"], "--compression", "[0, 9]"),
    (RUN, "--threads", "[1, 4096]"), (["--threads"], None, "[1, 4096]"),
    (["plan"], "--steps", COUNT), (["plan", "--steps", "100"], "--snapshots", COUNT),
    (PLAN + ["--schedule", "uniform"], "--interval", COUNT),
    (["plan", "--steps", "100", "--disk-snapshots", "3"], "--ram-snapshots", COUNT),
    (["plan", "--steps", "100", "--ram-snapshots", "3"], "--disk-snapshots", COUNT0),
    (TRAIN, "--augment", COUNT0), (TRAIN, "--patience", COUNT), (TRAIN, "--iterations", COUNT0),
    (TRAIN, "-i", None), (TRAIN, "--stop-at", COUNT0), (TRAIN, "--batch", COUNT),
    (TRAIN, "--window", COUNT), (TRAIN, "--substeps", COUNT), (TRAIN, "--seed", USEED),
    (TRAIN, "--init-seed", USEED), (TRAIN, "--snapshots", COUNT), (TRAIN, "--eval-every", COUNT),
    (TRAIN, "--checkpoint-every", COUNT), (TRAIN, "--layers", COUNT),
    (SPIRAL, "--iterations", COUNT0), (SPIRAL, "--batch", COUNT), (SPIRAL, "--window", COUNT),
    (SPIRAL, "--substeps", COUNT), (SPIRAL, "--hidden", COUNT), (SPIRAL, "--seed", USEED),
    (SPIRAL, "--init-seed", USEED), (SPIRAL, "--snapshots", COUNT),
    (SPIRAL, "--eval-every", COUNT),
    (PREDICT, "--steps", COUNT), (PREDICT, "--substeps", COUNT),
    (GENERATE, "--n", COUNT), (GENERATE, "--steps", COUNT), (GENERATE, "--seed", USEED),
    (GENERATE[:2] + ["--out", "o.h5"], "--observe-every", COUNT),
    (GENERATE_SPIRAL, "--points", "[2, 2^62]"), (GENERATE_SPIRAL, "--substeps", COUNT),
    (FIT, "--n", COUNT), (FIT, "--max-evaluations", INT), (FIT, "--stages", INT),
    (FIT, "--snapshots", COUNT),
]


def fail(message):
    print("check_integer_options: " + message, file=sys.stderr)
    sys.exit(1)


def check(rewind, args, option, shown, range_text, value):
    with tempfile.TemporaryDirectory() as work:
        proc = subprocess.run([rewind, *args], capture_output=True, text=True, cwd=work)
        left = os.listdir(work)
    command = "rewind " + " ".join(repr(a) if a == "" else a for a in args)
    if proc.returncode != 2:
        fail(f"{command}: exit {proc.returncode}, expected 2\n{proc.stderr}")
    if proc.stdout:
        fail(f"{command}: wrote to stdout: {proc.stdout!r}")
    if left:
        fail(f"{command}: left files behind: {left}")
    lines = proc.stderr.splitlines()
    pattern = (r"^rewind: error: " + re.escape(shown) + r"( \(hidden layer 1\))? = '" +
               re.escape(value) + r"' [^\n]*: " + re.escape(shown) +
               r"( \(hidden layer 1\))? takes a whole number in " + re.escape(range_text) + "$")
    if len(lines) != 1 or not re.match(pattern, lines[0]):
        fail(f"{command}: stderr does not name the option and its range {range_text}:\n"
             f"{proc.stderr}")


def main():
    if len(sys.argv) != 2:
        fail("usage: check_integer_options.py path/to/rewind")
    rewind = sys.argv[1]
    checked = 0
    previous_range = None
    for prefix, option, range_text in CASES:
        if option is None and prefix == ["--threads"]:
            # --threads before the subcommand.
            for value in HOSTILE:
                check(rewind, ["--threads", value, "run", "lorenz63"], "--threads", "--threads",
                      range_text, value)
                checked += 1
            continue
        if range_text is None:  # an alias: the message names the long option
            range_text = previous_range
        previous_range = range_text
        shown = {"-i": "--iterations"}.get(option, option)
        for value in HOSTILE:
            if option == "--layers" and value == "":
                continue  # no hidden layer: a linear field
            check(rewind, prefix + [option, value], option, shown, range_text, value)
            if value and option.startswith("--"):  # "--opt=" empty: CLI11 says it is missing
                check(rewind, prefix + [f"{option}={value}"], option, shown, range_text, value)
            checked += 1
    print(f"check_integer_options: {checked} option values refused with the range named, "
          "nothing written")


if __name__ == "__main__":
    main()
