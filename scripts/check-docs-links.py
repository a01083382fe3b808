#!/usr/bin/env python3
"""Check the book's links: every relative link and anchor in docs/src resolves.

    scripts/check-docs-links.py            # from anywhere in the repository

Checks, outside code blocks and inline code:
- every relative link or image in docs/src/**/*.md names a file that exists;
- every `#anchor` (on its own, or after a .md file of the book) names a heading of that page,
  with the id mdBook gives it: lowercase ASCII, whitespace to `-`, everything but letters,
  digits, `_` and `-` removed; a repeated id gets `-1`, `-2`, ... as mdBook numbers them;
- every .md file under docs/src is listed in SUMMARY.md, and every chapter it lists exists;
- the relative links of README.md (into the book, the screenshots) resolve too.
External links (http:, https:, mailto:) are not fetched. Standard library only.
Exits 1 and lists each problem as FILE:LINE: message.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "docs" / "src"

# [text](target "title") and ![alt](target); text may hold one level of brackets.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
# [label]: target
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML_LINK = re.compile(r"""<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*["']([^"']*)["']""", re.I)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text):
    """(line number, line) outside fenced code blocks, with inline code blanked out."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        match = FENCE.match(line)
        if fence:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            continue
        if match:
            fence = match.group(1)
            continue
        yield number, re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def normalize_id(text):
    # mdBook's utils::normalize_id: alphanumerics, `_` and `-` kept (ASCII-lowercased),
    # whitespace becomes `-`, anything else is dropped.
    out = []
    for ch in text:
        if ch.isalnum() or ch in "_-":
            out.append(ch.lower() if ch.isascii() else ch)
        elif ch.isspace():
            out.append("-")
    return "".join(out)


def heading_text(markdown):
    """The text of a heading as mdBook's renderer sees it, markup removed."""
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)", r"\1", markdown)  # links
    text = re.sub(r"(`+)(.+?)\1", r"\2", text)  # inline code keeps its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags
    text = re.sub(r"(\*\*|__|\*|(?<!\w)_(?=\S)|(?<=\S)_(?!\w))", "", text)  # emphasis
    return text.strip()


def anchors(path, cache={}):
    if path not in cache:
        ids, seen = set(), {}
        for _, line in prose_lines_raw(path.read_text(encoding="utf-8")):
            match = HEADING.match(line)
            if not match:
                continue
            base = normalize_id(heading_text(match.group(2)))
            count = seen.get(base, 0)
            seen[base] = count + 1
            ids.add(base if count == 0 else f"{base}-{count}")
        # explicit anchors: <a name="x"> / id="x"
        for match in re.finditer(r"""\b(?:id|name)\s*=\s*["']([^"']+)["']""", path.read_text(encoding="utf-8")):
            ids.add(match.group(1))
        cache[path] = ids
    return cache[path]


def prose_lines_raw(text):
    """Like prose_lines, but keeps inline code (headings' ids include its text)."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        match = FENCE.match(line)
        if fence:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            continue
        if match:
            fence = match.group(1)
            continue
        yield number, line


def links(path):
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for pattern in (INLINE_LINK, HTML_LINK):
            for match in pattern.finditer(line):
                yield number, match.group(1)
        match = REFERENCE_DEF.match(line)
        if match:
            yield number, match.group(1)


def check_file(path, problems, book_page):
    where = path.relative_to(ROOT)
    for number, target in links(path):
        if not target or EXTERNAL.match(target) or target.startswith("//"):
            continue
        file_part, _, anchor = target.partition("#")
        file_part = file_part.split("?", 1)[0]
        if file_part.startswith("/"):
            problems.append(f"{where}:{number}: absolute path {target!r}; use a relative link")
            continue
        resolved = (path.parent / file_part).resolve() if file_part else path.resolve()
        if not resolved.exists():
            problems.append(f"{where}:{number}: {target!r}: no such file {file_part!r}")
            continue
        if book_page and file_part and resolved.is_relative_to(ROOT) and not _inside_src(path.parent / file_part):
            problems.append(f"{where}:{number}: {target!r} leaves docs/src; the built book would not contain it")
            continue
        if anchor:
            if resolved.suffix != ".md":
                problems.append(f"{where}:{number}: {target!r}: an anchor into a file that is not Markdown")
            elif anchor not in anchors(resolved):
                problems.append(f"{where}:{number}: {target!r}: no heading with id {anchor!r} in {resolved.relative_to(ROOT)}")


def _inside_src(path):
    # Lexically inside docs/src (a symlinked folder there, such as screenshots/, counts as inside:
    # mdBook copies it into the book).
    parts = []
    for part in path.relative_to(ROOT).parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return parts[:2] == ["docs", "src"]


def check_summary(problems):
    summary = SRC / "SUMMARY.md"
    listed = set()
    for number, target in links(summary):
        file_part = target.partition("#")[0]
        if not file_part or EXTERNAL.match(file_part):
            continue
        chapter = (SRC / file_part).resolve()
        listed.add(chapter)
        if not chapter.is_file():
            problems.append(f"{summary.relative_to(ROOT)}:{number}: chapter {file_part!r} does not exist")
    for page in sorted(SRC.rglob("*.md")):
        if page.name == "SUMMARY.md" or page.resolve() in listed:
            continue
        problems.append(f"{page.relative_to(ROOT)}: not listed in docs/src/SUMMARY.md")


def main():
    if not (SRC / "SUMMARY.md").is_file():
        print(f"no {SRC / 'SUMMARY.md'}", file=sys.stderr)
        return 1
    problems = []
    pages = sorted(SRC.rglob("*.md"))
    for page in pages:
        check_file(page, problems, book_page=True)
    check_file(ROOT / "README.md", problems, book_page=False)
    check_summary(problems)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} broken link(s) in the docs", file=sys.stderr)
        return 1
    print(f"docs links: {len(pages)} pages of docs/src and README.md checked, all resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
