#!/usr/bin/env python3
"""Checks check_architecture.py itself: on a small source tree whose table of parts agrees with
its parts file it must pass, and each way a table can be wrong — a dependency left out, one
named that is not linked, public for private, a wrong folder, a missing include path, a word
that names nothing, a part without a row — must be reported. Run by ctest as
docs_architecture_checker (label docs)."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_architecture  # noqa: E402

PAGE = """# Architecture

## Parts and their dependencies

| folder | target | includes as | may include |
| --- | --- | --- | --- |
| `include/` | `rewind::core` | `rewind/*.hpp` | the standard library, Eigen (Thrust for its backend) |
| `checkpoint/store/` | `rewind::store` | `rewind/store/` | core, hdf5 (privately) — no ODE |
| `src/fit/` | `rewind::fit` | `rewind/fit/` | core, store (its plans), hdf5 and NLopt (privately) |
| `src/distributed/` | `rewind::distributed` | `rewind/distributed/` | core, MPI |
| `src/cli/` | the `rewind` tool | — | everything |

## Next section
"""

PARTS = """core\tinclude\tEigen3::Eigen;OpenMP::OpenMP_CXX\t
store\tcheckpoint/store\trewind_core;Threads::Threads\trewind_hdf5
hdf5\tcheckpoint/hdf5\trewind_core;PkgConfig::REWIND_HDF5\t
fit\tsrc/fit\trewind_core;rewind_store\trewind_hdf5;NLopt::nlopt
"""

HDF5_ROW = "| `checkpoint/hdf5/` | `rewind::hdf5` | `rewind/hdf5/` | core, HDF5 |\n"

# (what to change in PAGE, a text every report of that change must contain)
WRONG_TABLES = [
    ("core, hdf5 (privately) — no ODE", "core — no ODE",
     "row rewind::store: links hdf5 privately, which the table does not say"),
    ("core, store (its plans), hdf5", "core, store, adjoint, hdf5",
     "row rewind::fit: the table says adjoint (publicly), which the target does not link"),
    ("core, hdf5 (privately) — no ODE", "core, hdf5 — no ODE",
     "row rewind::store: the table says hdf5 (publicly)"),
    ("`checkpoint/store/` |", "`src/store/` |",
     "row rewind::store: folder `src/store/`, but the build makes it in checkpoint/store/"),
    ("`rewind/fit/` |", "`rewind/fit/`, `rewind/fit.hpp` |",
     "row rewind::fit: includes as `rewind/fit.hpp`, not found under its include root"),
    ("hdf5 and NLopt (privately)", "hdf5 and nlopt (privately)",
     "row rewind::fit: 'nlopt' in \"may include\" names no part or library"),
    (HDF5_ROW, "", "no row for the part rewind::hdf5"),
]


def make_tree(root, page):
    for folder in ("include/rewind", "checkpoint/store/include/rewind/store",
                   "checkpoint/hdf5/include/rewind/hdf5", "src/fit/include/rewind/fit"):
        os.makedirs(os.path.join(root, folder), exist_ok=True)
    with open(os.path.join(root, "include/rewind/types.hpp"), "w", encoding="utf-8") as f:
        f.write("#pragma once\n")
    os.makedirs(os.path.join(root, "docs"), exist_ok=True)
    with open(os.path.join(root, "docs/architecture.md"), "w", encoding="utf-8") as f:
        f.write(page)
    parts_file = os.path.join(root, "parts.tsv")
    with open(parts_file, "w", encoding="utf-8") as f:
        f.write(PARTS)
    return parts_file


def run(page):
    with tempfile.TemporaryDirectory() as root:
        return check_architecture.check(root, make_tree(root, page))


def main():
    failures = []
    page = PAGE.replace("| `src/fit/`", HDF5_ROW + "| `src/fit/`")
    errors, notes = run(page)
    if errors:
        failures.append(f"a true table was refused: {errors}")
    if not any("rewind::distributed: not built" in note for note in notes):
        failures.append(f"the row of a part that is not built was not skipped: {notes}")
    for old, new, expected in WRONG_TABLES:
        if old not in page:
            failures.append(f"test table lacks '{old}'")
            continue
        errors, _ = run(page.replace(old, new, 1))
        if not any(expected in error for error in errors):
            failures.append(f"'{old}' -> '{new}': expected '{expected}', got {errors}")
    # A dependency the check cannot name is an error, not silence.
    with tempfile.TemporaryDirectory() as root:
        parts_file = make_tree(root, page)
        with open(parts_file, "a", encoding="utf-8") as f:
            f.write("extra\tsrc/extra\trewind_core;Unknown::thing\t\n")
        errors, _ = check_architecture.check(root, parts_file)
        if not any("no row for the part rewind::extra" in e for e in errors):
            failures.append(f"a part without a row was not reported: {errors}")
    for line in failures:
        print(line, file=sys.stderr)
    if failures:
        return 1
    print(f"check_architecture.py: 1 true table passed, {len(WRONG_TABLES) + 1} wrong ones "
          "reported")
    return 0


if __name__ == "__main__":
    sys.exit(main())
