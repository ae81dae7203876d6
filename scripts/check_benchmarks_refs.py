#!/usr/bin/env python3
"""Checks that BENCHMARKS.md and benchmarks/ agree (run from anywhere).

Usage: python3 scripts/check_benchmarks_refs.py

* every path BENCHMARKS.md names under benchmarks/, bench/ or scripts/ exists
  (`{a,b}` alternatives and `*` globs expanded; a trailing `/` means a folder);
* every raw folder benchmarks/<topic>/<run>/ and every input
  benchmarks/inputs/<file> is named by BENCHMARKS.md;
* no raw folder holds a script (*.sh, *.py): drivers live in bench/;
* benchmarks/ holds at most MAX_FOLDERS topic folders (inputs/ included),
  and nothing else;
* BENCHMARKS.md names no staged `.gpu/<branch>/...` script as if it were
  kept (those copies are not in the repository);
* every `](#anchor)` link of BENCHMARKS.md names one of its headings
  (GitHub's slugs: lower case, punctuation dropped, spaces to `-`).

Prints one line per problem and exits 1 if there is any, else 0.
"""
import glob
import os
import re
import sys

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# benchmarks/..., bench/..., scripts/... up to a character that cannot be in our paths.
REF = re.compile(r"(?<![\w./-])((?:benchmarks|bench|scripts)/[\w.,{}*/+-]*)")
MAX_FOLDERS = 15
GPU = re.compile(r"(?<![\w/-])\.gpu/[\w.-]+/[\w./-]+\.(?:sh|py)")


def expand(ref):
    """`a{b,c}d` -> [abd, acd] (one level of braces, enough here)."""
    m = re.search(r"\{([^{}]*)\}", ref)
    if not m:
        return [ref]
    out = []
    for alt in m.group(1).split(","):
        out += expand(ref[: m.start()] + alt + ref[m.end():])
    return out


def slug(heading):
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def main():
    text = open(os.path.join(ROOT, "BENCHMARKS.md"), encoding="utf-8").read()
    problems = []
    anchors = {slug(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}
    named = set()
    for lineno, line in enumerate(text.splitlines(), 1):
        for m in REF.finditer(line):
            ref = m.group(1).rstrip(".,")
            if ref in ("benchmarks/", "bench/", "scripts/"):
                continue
            for path in expand(ref):
                full = os.path.join(ROOT, path)
                hits = glob.glob(full) if "*" in path else [full] if os.path.exists(full) else []
                if path.endswith("/") and hits and not all(os.path.isdir(h) for h in hits):
                    hits = []
                if not hits:
                    problems.append(f"BENCHMARKS.md:{lineno}: {path} does not exist")
                parts = path.split("/")
                if parts[0] == "benchmarks" and len(parts) > 2 and parts[2]:
                    named.add(parts[1] + "/" + parts[2])
        for a in re.findall(r"\]\(#([^)]+)\)", line):
            if a not in anchors:
                problems.append(f"BENCHMARKS.md:{lineno}: link #{a} names no heading")
        for m in GPU.finditer(line):
            problems.append(
                f"BENCHMARKS.md:{lineno}: {m.group(0)} is a staged copy, not in the repository"
                " (name a bench/ driver or write the commands)"
            )
    bench = os.path.join(ROOT, "benchmarks")
    folders = [d for d in os.listdir(bench) if os.path.isdir(os.path.join(bench, d))]
    if len(folders) > MAX_FOLDERS:
        problems.append(f"benchmarks/ holds {len(folders)} folders, more than {MAX_FOLDERS}")
    for d in sorted(os.listdir(bench)):
        topic = os.path.join(bench, d)
        if not os.path.isdir(topic):
            problems.append(f"benchmarks/{d}: only topic folders belong in benchmarks/")
            continue
        for run in sorted(os.listdir(topic)):
            if f"{d}/{run}" not in named:
                problems.append(f"benchmarks/{d}/{run} is not named in BENCHMARKS.md")
        for dirpath, _, files in os.walk(topic):
            for f in files:
                if f.endswith((".sh", ".py")):
                    rel = os.path.relpath(os.path.join(dirpath, f), ROOT)
                    problems.append(f"{rel}: a script in a raw folder (move it to bench/)")
    for p in problems:
        print(p)
    print(f"check_benchmarks_refs: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
