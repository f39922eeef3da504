#!/usr/bin/env python3
"""Doxygen input filter: reads one rewind header and prints it with its comments as Doxygen sees
documentation, leaving the header itself untouched.

rewind's headers document themselves in plain // comments: each file starts with a block that
says what it is for, with a usage example; a comment above a declaration says its contract, units
and why. This filter turns them into Doxygen comments:

  - the block at the top of the file becomes the file's documentation (@file, @brief from its
    first paragraph, the rest as the detailed description);
  - a // block directly above a declaration at namespace or class scope becomes /// (its
    documentation); a // comment after a member on the same line becomes ///< ;
  - comments inside function bodies, and blocks separated from the next declaration by a blank
    line, stay plain comments.

Inside documentation, lines indented beyond the block's margin (usage examples, formulas) become
@code blocks, and characters Doxygen would read as commands or HTML (\\ @ < > & # $ %) are escaped
outside `backticks` and "quotes" (which Doxygen prints as they are), so that prose written for
readers of the source makes no Doxygen warning. The first sentence of a block is its brief
description (JAVADOC_AUTOBRIEF in Doxyfile.in).

Usage: header_filter.py FILE prints FILE filtered; build_reference.py calls filter_header on every
public header in one process before it runs Doxygen.
"""
import re
import sys

SCOPE_OPENER = re.compile(r"\b(namespace|class|struct|union|enum)\b[^()]*$")
ESCAPED = re.compile(r"([\\@<>&#$%])")


def escape_prose(text):
    """Escapes Doxygen's special characters outside `code` spans."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unmatched backtick: treat the whole line as prose
        parts = [text.replace("`", "'")]
    for i in range(0, len(parts), 2):
        parts[i] = escape_outside_quotes(parts[i])
    return "`".join(parts)


def escape_outside_quotes(text):
    """Escapes outside "double-quoted" spans, which Doxygen prints as they are."""
    parts = text.split('"')
    if len(parts) % 2 == 0:  # an unmatched quote: Doxygen reads on to the line's end
        return ESCAPED.sub(r"\\\1", parts[0]) + '"' + '"'.join(parts[1:])
    for i in range(0, len(parts), 2):
        parts[i] = ESCAPED.sub(r"\\\1", parts[i])
    return '"'.join(parts)


def comment_text(line):
    """The text of a whole-line // comment, without the slashes and one following space."""
    body = line.strip()[2:]
    return body[1:] if body.startswith(" ") else body


def doc_lines(texts, prefix):
    """Documentation lines for a comment block: prose escaped, indented lines as @code blocks.

    One line out per line in where it can be: @code and @endcode take the place of the blank
    comment lines around an example, so that Doxygen's line numbers stay those of the header."""
    out = []
    in_code = False
    blank = prefix.rstrip()

    def mark(command):  # on the blank line before, else at the end of the line before
        if out and out[-1].rstrip() == blank:
            out[-1] = prefix + command
        elif out:
            out[-1] += " " + command
        else:
            out.append(prefix + command)

    for text in texts:
        indented = text.startswith("  ") and text.strip() != ""
        if indented and not in_code:
            mark("@code{.unparsed}")
            in_code = True
        elif not indented and in_code and text.strip() != "":
            mark("@endcode")
            in_code = False
        line = prefix + (text if in_code else escape_prose(text))
        out.append(line.rstrip() if text.strip() == "" else line)
    if in_code:
        mark("@endcode")
    return out


def strip_code(line):
    """The code of a line without string/char literals and trailing comment (for brace counting)."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//", 1)[0]


def file_block(lines):
    """Splits off the leading // block; returns (documentation lines, index of the next line)."""
    texts = []
    i = 0
    while i < len(lines) and lines[i].lstrip().startswith("//"):
        texts.append(comment_text(lines[i]))
        i += 1
    if not texts:
        return [], 0
    first_paragraph = []
    rest = texts
    while rest and rest[0].strip() != "":
        first_paragraph.append(rest[0].strip())
        rest = rest[1:]
    brief = " ".join(first_paragraph)
    brief = re.sub(r"^rewind/\S+\s+—\s*", "", brief)
    # One line out per line in: the brief padded to its paragraph's lines, and @file (which
    # applies to the whole block wherever it stands) at the end of the block's last line.
    out = ["/// @brief " + escape_prose(brief)] + ["///"] * (len(first_paragraph) - 1)
    out += doc_lines(rest, "/// ")
    out[-1] = out[-1].rstrip() + " @file"
    return out, i


def filter_header(lines):
    out, start = file_block(lines)
    scopes = []  # True for a namespace/class scope, False for a function body or initializer
    pending = []  # a // block not yet known to document a declaration
    statement = ""  # code since the last ; { or }, to tell a scope's brace from a body's

    def at_scope():
        return all(scopes)

    def flush(documented):
        if documented and pending:
            indent = pending[0][: len(pending[0]) - len(pending[0].lstrip())]
            out.extend(doc_lines([comment_text(p) for p in pending], indent + "/// "))
        else:
            out.extend(pending)
        pending.clear()

    trailing_column = None
    for line in lines[start:]:
        stripped = line.strip()
        if stripped.startswith("//") and not stripped.startswith("///"):
            column = len(line) - len(line.lstrip())
            if trailing_column is not None and column == trailing_column and not pending:
                out.append(line[:column] + "///<" + line[column + 2 :])  # a trailing comment goes on
                continue
            trailing_column = None
            pending.append(line)
            continue
        trailing_column = None
        if stripped == "" or stripped.startswith("#"):
            flush(False)
            out.append(line)
            continue
        flush(at_scope() and not stripped.startswith("}"))
        code = strip_code(line)
        if at_scope() and "//" in line and not stripped.startswith("//"):
            head, comment = line.split("//", 1)
            if code.rstrip().endswith((";", ",")) and not comment.startswith("/"):
                trailing_column = len(head)
                line = head + "///<" + comment
        for ch in code:
            if ch == "{":
                scopes.append(bool(SCOPE_OPENER.search(statement)))
                statement = ""
            elif ch == "}":
                if scopes:
                    scopes.pop()
                statement = ""
            elif ch == ";":
                statement = ""
            else:
                statement += ch
        statement += " "
        out.append(line)
    flush(False)
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: header_filter.py FILE")
    with open(sys.argv[1], encoding="utf-8") as f:
        lines = f.read().split("\n")
    sys.stdout.write("\n".join(filter_header(lines)))


if __name__ == "__main__":
    main()
