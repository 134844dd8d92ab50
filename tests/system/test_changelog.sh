#!/usr/bin/env bash
# CHANGELOG.md in Keep a Changelog form and the release tagged (issue 35 item 8; docs/releasing.md),
# through tools/check-changelog.py: the project's own file and tags pass (`rdmabench -V`'s
# describe names the newest release), and each rule is seen to fail on a mutated copy in a
# throw-away git repository: sections out of order, an unknown or empty subsection, a version that
# contradicts CMakeLists.txt, a newest release without its tag (in a checkout with tags: a clone
# made without any is said, not judged), a tag on a commit whose
# CHANGELOG.md does not date it. About 5 s (git in a scratch repository).
source "$(dirname "$0")/lib.sh"
CHK=$SRC/tools/check-changelog.py
out=$(python3 "$CHK" "$SRC") || fail "the project's CHANGELOG.md / tags: $out"
echo "$out"
if [ "$(git -C "$SRC" rev-parse --is-shallow-repository 2>/dev/null)" = false ] && [ -n "$(git -C "$SRC" tag -l "v[0-9]*")" ]; then
  newest=$(sed -n 's/^## \[\([0-9.]*\)\] - .*/\1/p' "$SRC/CHANGELOG.md" | head -1)
  "$RB" -V | grep -q "^git describe: v$newest\(-[0-9]*-g[0-9a-f]*\)\?\(-dirty\)\?$" ||
    fail "rdmabench -V does not name release v$newest: $("$RB" -V | sed -n 2p)"
fi
pass "CHANGELOG.md and the tags of this checkout"

R=$TMP/repo
mkdir -p "$R"
git -C "$R" init -q
git -C "$R" config user.email t@example.invalid
git -C "$R" config user.name t
good() {
  cat >"$R/CHANGELOG.md" <<'MD'
# Changelog

## [Unreleased]

### Fixed
- a fix

## [1.1.0] - 2026-02-01

### Added
- a feature

### Fixed
- a fix

## [1.0.0] - 2026-01-01

### Added
- the start
MD
  echo 'project(rdmabench VERSION 1.1.0 LANGUAGES CXX)' >"$R/CMakeLists.txt"
}
expect_fail() { # NAME PATTERN: the checker fails on the repo naming PATTERN
  local got
  if got=$(python3 "$CHK" "$R"); then fail "$1: passed: $got"; fi
  grep -q -- "$2" <<<"$got" || fail "$1: expected '$2', got: $got"
}
good
sed -i '/^## \[1.1.0\]/,/^- a fix$/d' "$R/CHANGELOG.md"
sed -i 's/1.1.0/1.0.0/' "$R/CMakeLists.txt"
git -C "$R" add -A && git -C "$R" commit -qm "release 1.0.0"
python3 "$CHK" "$R" | grep -q "note: this checkout has no release tag at all" ||
  fail "no tag at all is not said: $(python3 "$CHK" "$R")"
git -C "$R" tag -a v1.0.0 -m 1.0.0
python3 "$CHK" "$R" >/dev/null || fail "1.0.0 tagged fails: $(python3 "$CHK" "$R")"
good
git -C "$R" add -A && git -C "$R" commit -qm "release 1.1.0"
expect_fail "untagged release" "no release tag: git describe names no release (v1.1.0\\|git describe says v1.0.0-1-g"
git -C "$R" tag -a v1.1.0 -m 1.1.0
python3 "$CHK" "$R" >/dev/null || fail "the good copy, tagged, fails: $(python3 "$CHK" "$R")"
echo x >"$R/other" && git -C "$R" add -A && git -C "$R" commit -qm later
python3 "$CHK" "$R" | grep -q "note: git describe: v1.1.0-1-g" || fail "describe after the tag"
git -C "$R" tag -d v1.0.0 >/dev/null
git -C "$R" tag -a v1.0.0 -m 1.0.0
expect_fail "tag on the wrong commit" "tag v1.0.0: the tagged commit's CHANGELOG.md does not have 1.0.0"
git -C "$R" tag -d v1.0.0 >/dev/null
sed -i 's/^### Added$/### New/' "$R/CHANGELOG.md"
expect_fail "unknown subsection" "'### New': not one of Added, Changed"
good
sed -i 's/^## \[1.0.0\] - 2026-01-01/## [1.2.0] - 2026-01-01/' "$R/CHANGELOG.md"
expect_fail "versions out of order" "1.2.0 is not older than 1.1.0"
good
sed -i 's/^- the start$//' "$R/CHANGELOG.md"
expect_fail "empty subsection" "release 1.0.0: '### Added' empty"
good
sed -i 's/1.1.0/1.1.1/' "$R/CMakeLists.txt"
expect_fail "version mismatch" "CMakeLists.txt says 1.1.1, the newest release in CHANGELOG.md is 1.1.0"
good
sed -i 's/^## \[1.1.0\] - 2026-02-01/## 1.1.0 (2026-02-01)/' "$R/CHANGELOG.md"
expect_fail "heading form" "is neither '## \[Unreleased\]' nor"
good
printf '\n### Security\n- s\n\n### Fixed\n- late\n' >>"$R/CHANGELOG.md"
expect_fail "subsection order" "'### Fixed' out of order"
pass "each rule fails on a mutated copy: untagged, tag on the wrong commit, unknown/empty/out-of-order subsection, version order and mismatch, heading form"
