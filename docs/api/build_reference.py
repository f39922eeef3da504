#!/usr/bin/env python3
"""Builds the API reference: filters every public header through header_filter.py in this one
process, into a scratch tree, then runs Doxygen on that tree (the `docs` target and the
docs_api_reference test, docs/CMakeLists.txt).

    build_reference.py DOXYGEN DOXYFILE FILTERED_DIR ROOT...

ROOT i (an include folder, e.g. integrators/include) is written to FILTERED_DIR/i with the same
relative paths; Doxyfile.in's INPUT and STRIP_FROM_PATH name those folders, in the same order.
The filter keeps each header's line count, so a Doxygen message's line is the header's own; the
messages name the header's source path, not the scratch copy. The exit status is Doxygen's
(non-zero on any warning: WARN_AS_ERROR).

Why not Doxygen's FILTER_PATTERNS: it starts one Python process per header, and those starts
were most of the reference's time (bench/results/build_time.md).
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import header_filter  # noqa: E402


def filter_tree(root, target):
    """Writes every *.hpp under root, filtered, to the same relative path under target."""
    for folder, _, names in os.walk(root):
        for name in names:
            if not name.endswith(".hpp"):
                continue
            source = os.path.join(folder, name)
            copy = os.path.join(target, os.path.relpath(source, root))
            with open(source, encoding="utf-8") as f:
                lines = f.read().split("\n")
            os.makedirs(os.path.dirname(copy), exist_ok=True)
            with open(copy, "w", encoding="utf-8") as f:
                f.write("\n".join(header_filter.filter_header(lines)))


def main():
    if len(sys.argv) < 5:
        sys.exit("usage: build_reference.py DOXYGEN DOXYFILE FILTERED_DIR ROOT...")
    doxygen, doxyfile, filtered, roots = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    # A header removed from the sources must not stay in the reference.
    shutil.rmtree(filtered, ignore_errors=True)
    copies = []
    for index, root in enumerate(roots):
        copy_root = os.path.join(filtered, str(index))
        filter_tree(root, copy_root)
        for form in (os.path.abspath, os.path.realpath):
            copies.append((form(copy_root) + os.sep, os.path.abspath(root) + os.sep))
    proc = subprocess.run([doxygen, doxyfile], capture_output=True, text=True)
    for stream, text in ((sys.stdout, proc.stdout), (sys.stderr, proc.stderr)):
        for copy_root, root in copies:
            text = text.replace(copy_root, root)
        stream.write(text)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
