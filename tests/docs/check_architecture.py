#!/usr/bin/env python3
"""Checks that the table of parts in docs/architecture.md says what the build does.

    check_architecture.py SOURCE_DIR PARTS_FILE

PARTS_FILE is written by the configure step (rewind_write_parts_file in cmake/RewindParts.cmake):
one line per part, tab-separated: name, folder, the targets it links publicly, those it links
privately (;-lists). For every row of the table whose target is `rewind::NAME`:

- the part is built here (a row of a part this configuration leaves out, such as distributed
  without MPI, is skipped and said so) and lives in the row's folder;
- every path of the "includes as" column exists under the folder's include/ (`rewind/*.hpp`: at
  least one header there);
- the "may include" column names exactly the parts and libraries the target links, each as the
  build links it: a name followed by "(privately…)", or a group "a and b (privately…)", is linked
  privately, every other name publicly. Parenthesised remarks and text after " — " are comments.

Every built part must have a row. The names a column may use are the parts (core, schedule, …)
and the libraries HDF5, MPI, NLopt, SUNDIALS, LAPACK and Eigen; the threads library and OpenMP
come with the compiler and are not listed. Exit status 1 with one line per disagreement; run by
ctest as docs_architecture (label docs)."""
import os
import re
import sys

TABLE_PAGE = os.path.join("docs", "architecture.md")
TABLE_HEADING = "## Parts and their dependencies"
LIBRARIES = {"HDF5", "MPI", "NLopt", "SUNDIALS", "LAPACK", "Eigen", "SuiteSparse"}
# Words of the column that name no dependency.
IGNORED_WORDS = {"the standard library"}
# Imported targets → the library's name in the table; None: not listed in the table.
TARGET_LIBRARY = [
    (re.compile(r"^PkgConfig::REWIND_HDF5$"), "HDF5"),
    (re.compile(r"^MPI::"), "MPI"),
    (re.compile(r"^NLopt::"), "NLopt"),
    (re.compile(r"^SUNDIALS::"), "SUNDIALS"),
    (re.compile(r"^LAPACK::"), "LAPACK"),
    (re.compile(r"^SuiteSparse::"), "SuiteSparse"),
    (re.compile(r"^Eigen3::"), "Eigen"),
    (re.compile(r"^Threads::Threads$"), None),
    (re.compile(r"^OpenMP::"), None),
]


def read_parts(path):
    """{name: (folder, public set of targets, private set of targets)} from PARTS_FILE."""
    parts = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            name, folder, public, private = line.split("\t")
            parts[name] = (folder, [t for t in public.split(";") if t],
                           [t for t in private.split(";") if t])
    return parts


def dependency_name(target, part_names):
    """The table's name for a linked target; None for one the table does not list. Raises
    ValueError for a target this check does not know (a new dependency: add it above)."""
    if target.startswith("rewind_") and target[len("rewind_"):] in part_names:
        return target[len("rewind_"):]
    for pattern, name in TARGET_LIBRARY:
        if pattern.search(target):
            return name
    raise ValueError(target)


def table_rows(text):
    """The rows of the table under TABLE_HEADING as lists of cells (header and rule left out)."""
    start = text.find(TABLE_HEADING)
    if start < 0:
        raise ValueError(f"no heading '{TABLE_HEADING}'")
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    if len(rows) < 3:
        raise ValueError(f"no table under '{TABLE_HEADING}'")
    return rows[2:]


def split_outside_parentheses(text, separator):
    pieces, depth, current = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == separator and depth == 0:
            pieces.append(current)
            current = ""
        else:
            current += ch
    pieces.append(current)
    return pieces


def documented_dependencies(cell, known):
    """(public names, private names, unknown words) of a "may include" cell."""
    cell = cell.split(" — ")[0]
    public, private, unknown = set(), set(), []
    for segment in split_outside_parentheses(cell, ","):
        remarks = re.findall(r"\(([^()]*)\)", segment)
        is_private = any(remark.strip().startswith("privately") for remark in remarks)
        words = re.sub(r"\([^()]*\)", "", segment).strip()
        if not words or words in IGNORED_WORDS:
            continue
        for word in (w.strip().strip("`") for w in words.split(" and ")):
            if word not in known:
                unknown.append(word)
                continue
            (private if is_private else public).add(word)
    return public, private, unknown


def include_paths_exist(source_dir, folder, cell):
    """The paths of an "includes as" cell that are not under FOLDER/include."""
    missing = []
    root = os.path.join(source_dir, folder)
    if os.path.basename(folder) != "include":  # the core's folder is its include root
        root = os.path.join(root, "include")
    for path in re.findall(r"`([^`]+)`", cell):
        if "*" in path:
            directory = os.path.join(root, os.path.dirname(path))
            suffix = os.path.basename(path).replace("*", "")
            if not os.path.isdir(directory) or not any(
                    f.endswith(suffix) for f in os.listdir(directory)):
                missing.append(path)
        elif not os.path.exists(os.path.join(root, path)):
            missing.append(path)
    return missing


def check(source_dir, parts_file):
    """Returns (errors, notes): one line each."""
    parts = read_parts(parts_file)
    known = set(parts) | LIBRARIES
    for name in ("core", "schedule", "hdf5", "store", "integrators", "problems", "adjoint",
                 "neural", "fit", "distributed"):
        known.add(name)  # parts a configuration may leave out are still names of parts
    with open(os.path.join(source_dir, TABLE_PAGE), encoding="utf-8") as f:
        rows = table_rows(f.read())
    errors, notes, seen = [], [], set()
    for cells in rows:
        if len(cells) != 4:
            errors.append(f"{TABLE_PAGE}: a row of {len(cells)} cells, not 4: {cells}")
            continue
        folder, target, includes_as, may_include = cells
        match = re.fullmatch(r"`rewind::(\w+)`", target)
        if not match:
            continue  # not a library part (the tool)
        name = match.group(1)
        row = f"{TABLE_PAGE}: row rewind::{name}"
        if name not in parts:
            notes.append(f"{row}: not built in this configuration, not checked")
            continue
        seen.add(name)
        built_folder, built_public, built_private = parts[name]
        if folder.strip("`").rstrip("/") != built_folder:
            errors.append(f"{row}: folder {folder}, but the build makes it in {built_folder}/")
        for path in include_paths_exist(source_dir, built_folder, includes_as):
            errors.append(f"{row}: includes as `{path}`, not found under its include root")
        public, private, unknown = documented_dependencies(may_include, known)
        for word in unknown:
            errors.append(f"{row}: '{word}' in \"may include\" names no part or library")
        try:
            linked_public = {dependency_name(t, known) for t in built_public} - {None}
            linked_private = {dependency_name(t, known) for t in built_private} - {None}
        except ValueError as unknown_target:
            errors.append(f"{row}: the build links {unknown_target}, which this check cannot name"
                          " (tests/docs/check_architecture.py: TARGET_LIBRARY)")
            continue
        for kind, said, linked in (("publicly", public, linked_public),
                                   ("privately", private, linked_private)):
            for missing in sorted(linked - said):
                errors.append(f"{row}: links {missing} {kind}, which the table does not say")
            for extra in sorted(said - linked):
                errors.append(f"{row}: the table says {extra} ({kind}), which the target does "
                              f"not link {kind}")
    for name in sorted(set(parts) - seen):
        errors.append(f"{TABLE_PAGE}: no row for the part rewind::{name} "
                      f"({parts[name][0]}/)")
    return errors, notes


def main(argv):
    if len(argv) != 3:
        print(__doc__.splitlines()[2].strip(), file=sys.stderr)
        return 2
    errors, notes = check(argv[1], argv[2])
    for line in notes:
        print(line)
    for line in errors:
        print(line, file=sys.stderr)
    if errors:
        print(f"{len(errors)} disagreement(s) between {TABLE_PAGE} and the build", file=sys.stderr)
        return 1
    print(f"{TABLE_PAGE}: the table of parts agrees with the build")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
