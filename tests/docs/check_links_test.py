#!/usr/bin/env python3
"""Checks check_links.py itself: in a small repository of Markdown files it must report every
broken link (a missing file, a missing anchor, a path outside the repository, a file git ignores)
and accept the good ones (files, folders, anchors with punctuation and duplicates, links in code
that are not links). Run by ctest as docs_links_checker (label docs)."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_links  # noqa: E402

PAGE = """# Title

## Snapshots on disk, and storage levels
## A `code` heading: with punctuation — and a dash
## Twice
## Twice

[good file](other.md) [good folder](sub) [good anchor](#snapshots-on-disk-and-storage-levels)
[code heading](#a-code-heading-with-punctuation--and-a-dash) [second twice](#twice-1)
[anchor in other](other.md#other-page) ![image](sub/picture.png) [web](https://example.com/x.md)
`[in a code span](missing-in-span.md)`

```
[in a code block](missing-in-block.md)
```

[missing file](missing.md)
[missing anchor](other.md#no-such-heading)
[outside](../outside.md)
[ignored](build/out.md)
[reference]: missing-reference.md
"""

EXPECTED = {"missing.md", "other.md#no-such-heading", "../outside.md", "build/out.md",
            "missing-reference.md"}


def main():
    with tempfile.TemporaryDirectory() as root:
        def write(path, text):
            os.makedirs(os.path.dirname(os.path.join(root, path)) or root, exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)

        write("page.md", PAGE)
        write("other.md", "# Other page\n")
        write("sub/picture.png", "")
        write("build/out.md", "# generated\n")
        write(".gitignore", "build/\n")
        subprocess.run(["git", "init", "-q", root], check=True)
        problems = check_links.check(root)
        found = {p.split(": ")[1] for p in problems}
        if found != EXPECTED:
            print("expected broken:", sorted(EXPECTED))
            print("reported:", *problems, sep="\n  ")
            return 1
    print(f"check_links reports the {len(EXPECTED)} broken links and none of the good ones")
    return 0


if __name__ == "__main__":
    sys.exit(main())
