# The version and its release tag (docs/releasing.md): `rdmabench -V` is `rdmabench --version`
# (perftest's -V); cmake/GitDescribe.cmake, run as the build runs it, in a scratch repository:
# without a tag the describe is the commit (the build tolerates no tag); a tag vX.Y.Z names the
# release and the distance from it (annotated or not); a tag newer than project(VERSION), or
# the current commit tagged with another version, fails with a line naming both.
source "$(dirname "$0")/lib.sh"

"$RB" -V >"$TMP/short" 2>&1 || fail "rdmabench -V: $(cat "$TMP/short")"
"$RB" --version >"$TMP/long" 2>&1 || fail "rdmabench --version: $(cat "$TMP/long")"
cmp -s "$TMP/short" "$TMP/long" || fail "rdmabench -V differs from --version: $(diff "$TMP/short" "$TMP/long")"
grep -qE '^rdmabench [0-9]+\.[0-9]+\.[0-9]+$' "$TMP/short" || fail "rdmabench -V: $(head -1 "$TMP/short")"
"$RB" -V -f json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["version"]' ||
  fail "rdmabench -V -f json is not the version document"
pass "rdmabench -V = --version ($(head -1 "$TMP/short"))"

command -v git >/dev/null || fail "git is missing"
R=$TMP/repo
git init -q "$R"
g() { git -C "$R" -c user.name=t -c user.email=t@example.org -c tag.gpgSign=false "$@"; }
commit() { echo "$1" >>"$R/f" && g add f && g commit -qm "$1"; }
# describe VERSION: the describe the build would write (stdout), or the failure (stderr, rc 1)
describe() {
  rm -f "$TMP/out.cc"
  cmake -DSOURCE_DIR="$R" -DOUTPUT="$TMP/out.cc" -DVERSION="$1" -P "$SRC/cmake/GitDescribe.cmake" \
    >"$TMP/cmake.log" 2>&1 || return 1
  sed -n 's/.*return "\(.*\)";.*/\1/p' "$TMP/out.cc"
}
expect_describe() { # VERSION REGEX LABEL
  local d
  d=$(describe "$1") || fail "$3: the build failed: $(cat "$TMP/cmake.log")"
  [[ $d =~ $2 ]] || fail "$3: describe '$d', expected /$2/"
}
expect_refusal() { # VERSION TEXT LABEL
  ! describe "$1" >/dev/null || fail "$3: the build went on ($(cat "$TMP/out.cc"))"
  # CMake wraps the message: compare with the lines joined.
  [[ "$(tr -s ' \n' '  ' <"$TMP/cmake.log")" == *"$2"* ]] || fail "$3: $(cat "$TMP/cmake.log")"
}

commit one
expect_describe 0.2.0 '^[0-9a-f]{7,}$' "no tag"
g tag v0.2.0 # lightweight, as a quick `git tag` makes it
expect_describe 0.2.0 '^v0\.2\.0$' "HEAD tagged v0.2.0"
commit two
expect_describe 0.2.0 '^v0\.2\.0-1-g[0-9a-f]{7,}$' "one commit after v0.2.0"
echo dirty >>"$R/f"
expect_describe 0.2.0 '^v0\.2\.0-1-g[0-9a-f]{7,}-dirty$' "uncommitted change"
g checkout -q -- f
g tag -a v0.2.1 -m "rdmabench 0.2.1" # annotated, as docs/releasing.md says
expect_refusal 0.2.0 "the release tag v0.2.1 is newer than project(VERSION 0.2.0)" "tag newer than VERSION"
expect_refusal 0.3.0 "this commit is tagged v0.2.1 but project(VERSION) in CMakeLists.txt says 0.3.0" \
  "HEAD tagged with another version"
expect_describe 0.2.1 '^v0\.2\.1$' "HEAD tagged v0.2.1, VERSION 0.2.1"
g tag other-tag && commit three
expect_describe 0.3.0 '^v0\.2\.1-1-g[0-9a-f]{7,}$' "a tag that is not vX.Y.Z is not a release"
pass "git describe: commit without a tag, vX.Y.Z[-N-gHASH][-dirty] with one; contradicting tags refused"
