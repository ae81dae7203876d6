#!/usr/bin/env python3
"""Checks the links of the built book (run from anywhere, after mdbook build).

Usage: python3 scripts/check_book_links.py [BOOK_DIR]   (default: book/)

Every href and src of every page must resolve: a page or file of the book,
with its #anchor among the target page's ids, or, for a relative link that
leaves the book (docs/src/../../BENCHMARKS.md), a file or folder of the
repository (mdbook writes such a link to a .md file as .html; the .md is
accepted). Links to other sites are not followed. Exit 1 with one line per
broken link.
"""
import html.parser
import os
import sys
import urllib.parse

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "docs", "src")
# Pages mdbook generates whole-book copies or fallbacks of.
SKIP_PAGES = {"print.html", "404.html", "toc.html"}


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("id", "name") and v:
                self.ids.add(v)
            if k in ("href", "src") and v:
                self.links.append(v)


def parse(path, cache={}):
    if path not in cache:
        p = Page()
        with open(path, encoding="utf-8") as f:
            p.feed(f.read())
        cache[path] = p
    return cache[path]


def main():
    book = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "book"))
    if not os.path.isfile(os.path.join(book, "index.html")):
        sys.exit(f"usage: check_book_links.py [BOOK_DIR]: no book at {book} (run mdbook build)")
    problems, checked = [], 0
    for dirpath, _, files in os.walk(book):
        for name in sorted(files):
            if not name.endswith(".html") or name in SKIP_PAGES:
                continue
            page = os.path.join(dirpath, name)
            rel_page = os.path.relpath(page, book)
            for link in parse(page).links:
                url = urllib.parse.urlsplit(link)
                if url.scheme or url.netloc or link.startswith("#") and not url.fragment:
                    continue
                checked += 1
                path = urllib.parse.unquote(url.path)
                target = os.path.normpath(os.path.join(dirpath, path)) if path else page
                inside = os.path.commonpath([target, book]) == book
                if not inside:
                    # A link out of the book: a repository file, from docs/src.
                    repo = os.path.normpath(os.path.join(SRC, os.path.relpath(target, book)))
                    md = repo[: -len(".html")] + ".md" if repo.endswith(".html") else None
                    if not (os.path.exists(repo) or md and os.path.exists(md)):
                        problems.append(f"{rel_page}: {link}: no {os.path.relpath(repo, ROOT)}")
                    continue
                if os.path.isdir(target):
                    target = os.path.join(target, "index.html")
                if not os.path.exists(target):
                    problems.append(f"{rel_page}: {link}: no such page")
                elif url.fragment and target.endswith(".html"):
                    if urllib.parse.unquote(url.fragment) not in parse(target).ids:
                        problems.append(f"{rel_page}: {link}: no anchor #{url.fragment}")
    for p in problems:
        print(p)
    print(f"check_book_links: {checked} links, {len(problems)} broken", file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
