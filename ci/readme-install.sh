#!/usr/bin/env bash
# The README's "Install on a cluster" recipe, run exactly as written (issue #35: it stopped
# half-way): the first ```sh block under that heading is read from README.md at run time, so the
# test and the README cannot drift, and run line by line with `set -e` in this checkout, in a
# private mount namespace where
#   - the recipe's `build` directory is an empty directory (DIR, bind-mounted over ./build: a
#     fresh machine's build, and the developer's or CI's own build/ is not touched);
#   - /opt is an empty tmpfs (the recipe's --prefix /opt/rdmabench/VERSION lands there and
#     vanishes with the namespace);
#   - the shell is set up as a login shell on Debian is (/etc/profile.d/lmod.sh: `module`).
# Then: `rdmabench` on PATH is the prefix's, the prefix names the project's version, `man -w
# rdmabench` finds the installed (gzipped) page, `man -w ls` still finds the system's pages, the
# completion is where XDG_DATA_DIRS leads bash-completion, the binary carries the hardening the
# packages promise (readelf: BIND_NOW, RELRO, PIE, __*_chk, __stack_chk_fail).
#
# Usage: ci/readme-install.sh DIR   (DIR: the recipe's build directory, emptied first)
# ci/test.sh runs it as its Release phase with CXXFLAGS=-Werror and its ccache launcher in the
# environment (the commands stay the README's) and RDMABENCH_README_BACKENDS="verbs ofi pmix":
# those must be built in (the configure line of the recipe has no -DRDMABENCH_WITH_*=ON).
# Needs root (mounts; CI runs as root) or unprivileged user namespaces, and lmod.
set -euo pipefail
DIR=${1:?usage: $0 BUILD_DIR}
SRC=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "FAIL: readme-install: $*" >&2; exit 1; }
[ -f /etc/profile.d/lmod.sh ] || fail "lmod is missing (ci/install-deps.sh)"

# The first ```sh block after "## Install on a cluster".
RECIPE=$(awk '/^## /{sec = ($0 == "## Install on a cluster")} sec && /^```sh$/{on = 1; next}
              on && /^```$/{exit} on' "$SRC/README.md")
[ -n "$RECIPE" ] || fail "README.md has no \`\`\`sh block under '## Install on a cluster'"
grep -qE '^cmake --build ' <<<"$RECIPE" || fail "the recipe has no 'cmake --build' line: $RECIPE"
PREFIX=$(sed -nE 's/^cmake --install .*--prefix +([^ ]+).*/\1/p' <<<"$RECIPE")
[ -n "$PREFIX" ] || fail "the recipe has no 'cmake --install ... --prefix P' line: $RECIPE"
case $PREFIX in /opt/*) ;; *) fail "the recipe installs into $PREFIX: this test mounts only /opt" ;; esac
VERSION=$(sed -nE 's/^project\(rdmabench VERSION ([0-9.]+).*/\1/p' "$SRC/CMakeLists.txt")
[ "$(basename "$PREFIX")" = "$VERSION" ] ||
  fail "the README installs into $PREFIX, the project's version is $VERSION (README.md, 'Install on a cluster')"

DIR=$(mkdir -p "$DIR" && cd "$DIR" && pwd)
case $DIR in "$SRC/build" | "$SRC/build/"*) fail "DIR must not be under $SRC/build" ;; esac
find "$DIR" -mindepth 1 -delete
mkdir -p "$SRC/build" # the mount point (CI's and developers' build/ exists already)
UNSHARE=(unshare --mount --propagation private)
[ "$(id -u)" = 0 ] || UNSHARE=(unshare --user --map-root-user --mount --propagation private)

echo "readme-install: running README.md's 'Install on a cluster' recipe in $SRC (build: $DIR)"
sed 's/^/  | /' <<<"$RECIPE"
# shellcheck disable=SC2016 # expanded by the inner shell
"${UNSHARE[@]}" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="${HOME:-/root}" TERM=dumb LANG=C.UTF-8 \
  ${CXXFLAGS:+CXXFLAGS="$CXXFLAGS"} ${CMAKE_BUILD_PARALLEL_LEVEL:+CMAKE_BUILD_PARALLEL_LEVEL="$CMAKE_BUILD_PARALLEL_LEVEL"} \
  ${CMAKE_CXX_COMPILER_LAUNCHER:+CMAKE_CXX_COMPILER_LAUNCHER="$CMAKE_CXX_COMPILER_LAUNCHER"} \
  ${CCACHE_DIR:+CCACHE_DIR="$CCACHE_DIR" CCACHE_BASEDIR="$SRC" CCACHE_NOHASHDIR=1} \
  RECIPE="$RECIPE" PREFIX="$PREFIX" VERSION="$VERSION" BACKENDS="${RDMABENCH_README_BACKENDS:-}" \
  bash --noprofile --norc -c '
  set -eo pipefail # no -u: /etc/profile.d/lmod.sh and `module` read unset variables
  fail() { echo "FAIL: readme-install: $*" >&2; exit 1; }
  mount --bind "$1" "$2/build"
  mount -t tmpfs -o mode=0755 rdmabench-readme /opt
  cd "$2"
  source /etc/profile.d/lmod.sh # what a login shell has: the `module` command
  n=0
  while IFS= read -r line; do
    n=$((n + 1))
    [ -n "${line// /}" ] || continue
    echo "+ $line"
    eval "$line" || fail "line $n of the recipe failed: $line"
  done <<<"$RECIPE"
  [ "$(command -v rdmabench)" = "$PREFIX/bin/rdmabench" ] ||
    fail "rdmabench on PATH is $(command -v rdmabench || echo nothing), not $PREFIX/bin/rdmabench"
  [ "$(rdmabench --version | head -1)" = "rdmabench $VERSION" ] || fail "rdmabench --version: $(rdmabench --version)"
  page=$(man -w rdmabench 2>&1) || fail "man -w rdmabench: $page"
  [ "$page" = "$PREFIX/share/man/man1/rdmabench.1.gz" ] || fail "man -w rdmabench: $page"
  sys=$(man -w ls 2>&1) || fail "the module hid the system man pages: man -w ls: $sys (MANPATH=$MANPATH)"
  comp=$PREFIX/share/bash-completion/completions/rdmabench
  [ -f "$comp" ] || fail "no $comp"
  case ":$XDG_DATA_DIRS:" in *":$PREFIX/share:"*) ;; *) fail "XDG_DATA_DIRS lacks $PREFIX/share: $XDG_DATA_DIRS" ;; esac
  # The hardening the packages get from this Release build (cmake/Hardening.cmake), read as
  # lintian and hardening-check read it: BIND_NOW, a RELRO segment, PIE, fortified libc calls,
  # the stack protector.
  # Outputs are read whole first: under pipefail, `readelf | grep -q` fails when grep stops
  # early and readelf dies of SIGPIPE.
  elf=$PREFIX/bin/rdmabench
  dyn=$(readelf -d "$elf") segs=$(readelf -lW "$elf") syms=$(readelf --dyn-syms -W "$elf")
  grep -qE "FLAGS_1.*\bNOW\b" <<<"$dyn" || fail "$elf: not linked with -z now: $(grep FLAGS <<<"$dyn")"
  grep -qE "FLAGS_1.*\bPIE\b" <<<"$dyn" || fail "$elf: not a PIE"
  grep -q GNU_RELRO <<<"$segs" || fail "$elf: no RELRO segment"
  grep -qE " __[a-z_]+_chk(@|$)" <<<"$syms" || fail "$elf: no fortified libc call (_FORTIFY_SOURCE)"
  grep -q " __stack_chk_fail" <<<"$syms" || fail "$elf: no stack protector"
  versions=$(rdmabench version)
  for b in $BACKENDS; do
    grep -qE "^  $b +built" <<<"$versions" || fail "backend $b is not built in: $versions"
  done
  echo "readme-install: ok: the recipe ran as written; $PREFIX/bin/rdmabench $VERSION on PATH, man page, completion, system man pages kept, hardened (relro, now, PIE, fortify, stack protector)${BACKENDS:+, backends $BACKENDS built}"
' readme-install "$DIR" "$SRC"
