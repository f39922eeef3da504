#!/usr/bin/env python3
"""Checks every relative link of every Markdown file in the repository: the target must be a file
or folder that a clone has (tracked, or new and not ignored by git; never outside the repository),
and a #anchor must name a heading of the target Markdown file (GitHub's heading slugs).

    tests/docs/check_links.py [REPOSITORY_ROOT]

Prints one line per broken link (file:line: the link and why) and exits 1 if there is any, 0 when
every link resolves. Web links (http, https, mailto) are not fetched. Links inside code blocks and
`code spans` are not links and are skipped. Run by ctest as docs_links (label docs).
"""
import os
import re
import subprocess
import sys
import unicodedata

INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def repository_files(root):
    """Paths (relative, '/'-separated) a clone has: tracked files and new files git does not ignore."""
    try:
        listing = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=root, check=True, capture_output=True).stdout.decode("utf-8")
        return {p for p in listing.split("\0") if p and os.path.exists(os.path.join(root, p))}
    except (OSError, subprocess.CalledProcessError):
        found = set()
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith((".git", "build"))]
            for name in files:
                found.add(os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/"))
        return found


def slug(heading):
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").lower()
    kept = []
    for ch in text:
        if ch in " -_" or unicodedata.category(ch)[0] in "LN":
            kept.append("-" if ch == " " else ch)
    return "".join(kept)


def strip_code_spans(line):
    return re.sub(r"(`+)(.+?)\1", "", line)


def markdown_lines(text):
    """(line number, line) outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        match = FENCE.match(line)
        if match:
            if fence is None:
                fence = match.group(1)
            elif match.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield number, line


def anchors(text):
    seen = {}
    result = set()
    for _, line in markdown_lines(text):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def links(text):
    for number, line in markdown_lines(text):
        bare = strip_code_spans(line)
        for match in INLINE_LINK.finditer(bare):
            yield number, match.group(1)
        match = REFERENCE_DEFINITION.match(bare)
        if match:
            yield number, match.group(1)


def check(root):
    files = repository_files(root)
    folders = {"/".join(p.split("/")[:i]) for p in files for i in range(1, p.count("/") + 1)}
    texts = {}

    def read(path):
        if path not in texts:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                texts[path] = f.read()
        return texts[path]

    problems = []
    for source in sorted(p for p in files if p.endswith(".md")):
        for number, target in links(read(source)):
            if not target or EXTERNAL.match(target):
                continue
            path, _, anchor = target.partition("#")
            if path:
                resolved = os.path.normpath(os.path.join(os.path.dirname(source), path))
                resolved = resolved.replace(os.sep, "/")
            else:
                resolved = source
            where = f"{source}:{number}: {target}"
            if resolved.startswith("../") or resolved == "..":
                problems.append(f"{where}: points outside the repository")
            elif resolved not in files and resolved not in folders and resolved != ".":
                problems.append(f"{where}: {resolved} is not in the repository")
            elif anchor and resolved.endswith(".md") and resolved in files:
                if anchor not in anchors(read(resolved)):
                    problems.append(f"{where}: {resolved} has no heading with anchor #{anchor}")
            elif anchor and resolved not in files:
                problems.append(f"{where}: #{anchor} on a folder")
    return problems


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    problems = check(root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} broken links")
        return 1
    print("every relative link resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
