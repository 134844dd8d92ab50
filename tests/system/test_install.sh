# Installing like HPC software (README "Install on a cluster", docs/testing.md):
#  (a) `cmake --install` into a fresh prefix: the file list, no build-tree or prefix path inside
#      an installed text file, the binary and the modulefiles still work after the prefix moved;
#      `--component runtime` alone carries the program, its man page and completion;
#  (b) Lmod: `module use PREFIX/share/modulefiles; module load rdmabench`, the .lua and (read by
#      Lmod too: Debian's environment-modules conflicts with lmod) the Tcl modulefile, from a
#      login shell and from a shell with MANPATH unset (the system's man pages stay found), linked
#      into a central module tree (file and directory links: the prefix is found), copied away
#      from the prefix (refused, naming the place);
#  (c) the .deb (cpack) installs with apt into a clean Debian 12 root (debootstrap minbase, cached
#      in $RDMABENCH_CI_CACHE, default /var/cache/rdmabench-ci) where `rdmabench lat`,
#      `rdmabench info` and `man rdmabench` work; its Depends come from dpkg-shlibdeps; lintian
#      finds no error or warning (copyright, Debian changelog, gzipped page, maintainer address,
#      RUNPATH, hardening); no modulefile; no .deb without a maintainer;
#  (d) the .rpm: `rpm -qpl` file list, `rpm -qpR` requirements computed from the binary,
#      `License: MIT`, not relocatable, no modulefile.
# Needs root (chroot, mounts), debootstrap, lmod, rpm, dpkg-dev, lintian (ci/install-deps.sh)
# and Debian's archive for (c). The man page and completion are checked when cmake/Docs.cmake
# (their install rules) is part of the tree.
source "$(dirname "$0")/lib.sh"
trap 'exit 143' TERM INT # so that lib.sh's EXIT trap unmounts and cleans up

if [ "$(id -u)" != 0 ]; then
  [ "${CI:-}" = true ] && fail "CI must run as root (chroot)"
  skip "needs root for the Debian 12 chroot"
fi
for tool in cmake cpack rpm dpkg-deb dpkg-shlibdeps debootstrap readelf lintian; do
  command -v "$tool" >/dev/null || fail "$tool is missing (ci/install-deps.sh)"
done
[ -f /usr/share/lmod/lmod/init/bash ] || fail "lmod is missing (ci/install-deps.sh)"

BUILD=$(dirname "$RB")
[ -f "$BUILD/CMakeCache.txt" ] || fail "$RB is not in a CMake build directory"
VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
[ -n "$VERSION" ] || fail "no CMAKE_PROJECT_VERSION in $BUILD/CMakeCache.txt"
# The man page and the completion are installed by cmake/Docs.cmake when the tree has it.
DOCS=false
[ -f "$SRC/cmake/Docs.cmake" ] && grep -q 'include(Docs)' "$SRC/CMakeLists.txt" && DOCS=true
T0=$SECONDS
step() { echo "-- $* ($((SECONDS - T0)) s)"; }

# ---------------------------------------------------------------- (a) cmake --install
step "cmake --install"
P1=$TMP/prefix-a
cmake --install "$BUILD" --prefix "$P1" >"$TMP/install.log" || fail "cmake --install: $(tail -5 "$TMP/install.log")"
expected=(bin/rdmabench share/doc/rdmabench/README.md share/doc/rdmabench/CHANGELOG.md
  share/doc/rdmabench/LICENSE share/doc/rdmabench/docs/cli.md share/doc/rdmabench/docs/metrics.md
  "share/modulefiles/rdmabench/$VERSION.lua" "share/modulefiles/rdmabench/$VERSION")
if [ -d "$SRC/examples" ]; then
  while IFS= read -r f; do expected+=("share/doc/rdmabench/examples/${f#./}"); done \
    < <(cd "$SRC/examples" && find . -type f)
fi
$DOCS && expected+=(share/man/man1/rdmabench.1.gz share/bash-completion/completions/rdmabench)
for f in "${expected[@]}"; do
  [ -f "$P1/$f" ] || fail "cmake --install did not install $f: $(cd "$P1" && find . -type f | sort | head -40)"
done
[ -x "$P1/bin/rdmabench" ] || fail "bin/rdmabench is not executable"
# Nothing but these trees (a stray absolute DESTINATION would land elsewhere or fail above).
extra=$(cd "$P1" && find . -type f | sed 's|^\./||' | grep -vE '^(bin/rdmabench|share/doc/rdmabench/.*|share/modulefiles/rdmabench/.*|share/man/man1/rdmabench.*|share/bash-completion/completions/rdmabench)$' || true)
[ -z "$extra" ] || fail "unexpected installed files: $extra"
# No build-tree, source-tree or prefix path inside an installed text file (-I: text only).
for p in "$(readlink -f "$BUILD")" "$SRC" "$P1"; do
  hits=$(grep -rIlF -- "$p" "$P1" || true)
  [ -z "$hits" ] || fail "installed files name $p: $hits"
done
# The binary: no RUNPATH into the build tree.
RPATHS=$(readelf -d "$P1/bin/rdmabench" | grep -E 'R(UN)?PATH' || true)
if grep -qF "$(readlink -f "$BUILD")" <<<"$RPATHS"; then
  fail "bin/rdmabench keeps a build-tree RUNPATH: $(readelf -d "$P1/bin/rdmabench" | grep -E 'R(UN)?PATH')"
fi
# At most one RUNPATH, each directory once and no empty entry (pmix.pc's own -Wl,-rpath put
# Debian's pmix2/lib in twice beside CMake's; none at all when the linker finds every library).
rp=none
if [ -n "$RPATHS" ]; then
  rp=$(sed -n 's/.*\[\(.*\)\]$/\1/p' <<<"$RPATHS")
  [ "$(wc -l <<<"$RPATHS")" = 1 ] || fail "bin/rdmabench has $(wc -l <<<"$RPATHS") RPATH/RUNPATH entries: $RPATHS"
  [ -z "$(tr ':' '\n' <<<"$rp" | sort | uniq -d)" ] || fail "bin/rdmabench's RUNPATH repeats a directory: $rp"
  [[ ":$rp:" != *::* ]] || fail "bin/rdmabench's RUNPATH has an empty entry: '$rp'"
fi
pass "cmake --install: $(cd "$P1" && find . -type f | wc -l) files, no build-tree or prefix paths, RUNPATH: $rp"
# The page as Debian policy 12.1 wants it: gzip -9n, no name or time stamp in the header.
if $DOCS; then
  gzip -t "$P1/share/man/man1/rdmabench.1.gz" || fail "share/man/man1/rdmabench.1.gz is not gzip"
  [ "$(od -An -tu1 -j4 -N4 "$P1/share/man/man1/rdmabench.1.gz" | tr -d ' ')" = 0000 ] ||
    fail "rdmabench.1.gz carries a time stamp (gzip without -n)"
fi
# --component runtime: the program with its page and completion, no modulefiles.
P2=$TMP/prefix-runtime
cmake --install "$BUILD" --prefix "$P2" --component runtime >"$TMP/install-rt.log" ||
  fail "cmake --install --component runtime: $(tail -5 "$TMP/install-rt.log")"
for f in bin/rdmabench share/doc/rdmabench/README.md; do
  [ -f "$P2/$f" ] || fail "--component runtime did not install $f"
done
if $DOCS; then
  for f in share/man/man1/rdmabench.1.gz share/bash-completion/completions/rdmabench; do
    [ -f "$P2/$f" ] || fail "--component runtime did not install $f: $(cd "$P2" && find . -type f ! -path './share/doc/*' | sort)"
  done
fi
[ ! -e "$P2/share/modulefiles" ] || fail "--component runtime installed the modulefiles"
rm -rf "$P2"
pass "cmake --install --component runtime: program, man page, completion"

# Relocatable: move the prefix, run from there.
P=$TMP/moved/opt/rdmabench/$VERSION
mkdir -p "$(dirname "$P")" && mv "$P1" "$P"
"$P/bin/rdmabench" --version >"$TMP/version.txt" || fail "rdmabench --version from the moved prefix"
[ "$(head -1 "$TMP/version.txt")" = "rdmabench $VERSION" ] ||
  fail "first line of --version is not 'rdmabench $VERSION': $(cat "$TMP/version.txt")"
grep -q '^control protocol: [0-9]' "$TMP/version.txt" || fail "--version lacks the protocol: $(cat "$TMP/version.txt")"
grep -qE '^  socket +built' "$TMP/version.txt" || fail "--version lacks the backends: $(cat "$TMP/version.txt")"
timeout 120 "$P/bin/rdmabench" lat -t socket -s 8 -n 200 --warmup 10 >"$TMP/lat.txt" 2>&1 ||
  fail "rdmabench lat from the moved prefix: $(cat "$TMP/lat.txt")"
grep -qE "^# rdmabench $VERSION[ :]" "$TMP/lat.txt" || fail "run header lacks 'rdmabench $VERSION': $(head -3 "$TMP/lat.txt")"
pass "moved prefix: --version, lat"

# ---------------------------------------------------------------- (b) environment modules
step "Lmod"
# A login shell's set-up (/etc/profile.d/lmod.sh: MANPATH keeps the system's pages), then the
# user's commands. `module` writes to stderr; the checks read stdout.
# lmod_check MODULEROOT LABEL [SETUP]: SETUP "login" (default) or "bare": Lmod's own init script
# only, MANPATH and MODULEPATH unset, as a batch job or a container that sources it has them.
lmod_check() {
  local root=$1 label=$2 setup=${3:-login}
  env -i HOME="$TMP" PATH=/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb SETUP="$setup" bash --noprofile --norc -c '
    set -e
    if [ "$SETUP" = bare ]; then source /usr/share/lmod/lmod/init/bash; else source /etc/profile.d/lmod.sh; fi
    module use "$1"
    module load rdmabench
    echo "which=$(command -v rdmabench)"
    echo "root=$RDMABENCH_ROOT"
    rdmabench --version | head -1
    case ":$XDG_DATA_DIRS:" in *":$2/share:"*) echo xdg=ok ;; esac
    if [ "$3" = true ]; then echo "man=$(man -w rdmabench)"; fi
    echo "sysman=$(man -w ls 2>&1)"
    module unload rdmabench
    echo "after=$(command -v rdmabench || echo none)"
  ' lmod "$root" "$P" "$DOCS" >"$TMP/module.out" 2>"$TMP/module.err" ||
    fail "$label: module load failed: $(cat "$TMP/module.err" "$TMP/module.out")"
  local out
  out=$(cat "$TMP/module.out")
  grep -qxF "which=$P/bin/rdmabench" <<<"$out" || fail "$label: PATH does not lead to $P/bin: $out"
  grep -qxF "root=$P" <<<"$out" || fail "$label: RDMABENCH_ROOT is not $P: $out"
  grep -qxF "rdmabench $VERSION" <<<"$out" || fail "$label: rdmabench --version: $out"
  grep -qxF "xdg=ok" <<<"$out" || fail "$label: XDG_DATA_DIRS lacks $P/share: $out"
  if $DOCS; then
    grep -qxF "man=$P/share/man/man1/rdmabench.1.gz" <<<"$out" || fail "$label: man -w rdmabench: $out"
  fi
  grep -q '^sysman=/usr/share/man/' <<<"$out" || fail "$label ($setup shell): the system's man pages are hidden: $out"
  grep -qxF "after=none" <<<"$out" || fail "$label: module unload left rdmabench on PATH: $out"
}
# lmod_refuses MODULEROOT LABEL: `module load rdmabench` fails, naming the missing program.
lmod_refuses() {
  local root=$1 label=$2
  if env -i HOME="$TMP" PATH=/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb bash --noprofile --norc -c '
    source /usr/share/lmod/lmod/init/bash
    module use "$1"
    module load rdmabench && echo "root=$RDMABENCH_ROOT which=$(command -v rdmabench || echo none)"
  ' lmod "$root" >"$TMP/module.out" 2>"$TMP/module.err"; then
    fail "$label: loaded away from its prefix: $(cat "$TMP/module.out")"
  fi
  # Lmod wraps its message: read it with the lines joined.
  [[ "$(tr -s ' \n' '  ' <"$TMP/module.err")" =~ rdmabench:\ no\ [^\ ]*/bin/rdmabench:\ this\ modulefile ]] ||
    fail "$label: module load did not refuse, naming the program: $(cat "$TMP/module.err" "$TMP/module.out")"
}
# modulefile_places EXT LABEL: the modulefile (EXT .lua or empty: Tcl) linked and copied into
# central module trees, as sites do.
modulefile_places() {
  local ext=$1 label=$2 c=$TMP/central$1
  mkdir -p "$c/file/rdmabench" "$c/copy/rdmabench" "$c/dir"
  ln -s "$P/share/modulefiles/rdmabench/$VERSION$ext" "$c/file/rdmabench/$VERSION$ext"
  lmod_check "$c/file" "$label linked into a module tree" bare
  ln -s "$P/share/modulefiles/rdmabench" "$c/dir/rdmabench"
  lmod_check "$c/dir" "$label, its directory linked into a module tree" bare
  cp "$P/share/modulefiles/rdmabench/$VERSION$ext" "$c/copy/rdmabench/"
  lmod_refuses "$c/copy" "$label copied away from its prefix"
}
lmod_check "$P/share/modulefiles" "Lmod (.lua)"
lmod_check "$P/share/modulefiles" "Lmod (.lua)" bare
modulefile_places .lua "Lmod (.lua)"
pass "Lmod: module load rdmabench (.lua): PATH, MANPATH (system pages kept with MANPATH unset), XDG_DATA_DIRS, RDMABENCH_ROOT$($DOCS && echo ', man -w rdmabench'); linked: prefix found; copied: refused"
# The Tcl modulefile (Environment Modules' format), read by Lmod: without the .lua beside it.
rm "$P/share/modulefiles/rdmabench/$VERSION.lua"
head -1 "$P/share/modulefiles/rdmabench/$VERSION" | grep -qx '#%Module1.0' || fail "the Tcl modulefile lacks #%Module1.0"
lmod_check "$P/share/modulefiles" "Lmod (Tcl)"
lmod_check "$P/share/modulefiles" "Lmod (Tcl)" bare
modulefile_places "" "Lmod (Tcl)"
pass "Lmod: module load rdmabench (Tcl modulefile): the same"

# ---------------------------------------------------------------- packages
step "cpack"
PKG=$TMP/pkg
# No made-up maintainer: without one the .deb is refused, with advice.
if env -u DEBEMAIL -u DEBFULLNAME cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$TMP/pkg-nomaint" \
  -D CPACK_PACKAGE_CONTACT= >"$TMP/cpack-nomaint.log" 2>&1; then
  fail "cpack made a .deb without a maintainer: $(dpkg-deb -f "$(find "$TMP/pkg-nomaint" -name '*.deb' | head -1)" Maintainer)"
fi
grep -q "the .deb needs a maintainer with a working address" "$TMP/cpack-nomaint.log" ||
  fail "cpack without a maintainer: $(tail -5 "$TMP/cpack-nomaint.log")"
rm -rf "$TMP/pkg-nomaint"
# The packager names themselves as for dch (a domain lintian accepts; nothing is mailed).
MAINTAINER="rdmabench CI <ci@rdmabench.example.org>"
DEBFULLNAME="rdmabench CI" DEBEMAIL=ci@rdmabench.example.org \
  cpack -G "DEB;RPM" --config "$BUILD/CPackConfig.cmake" -B "$PKG" >"$TMP/cpack.log" 2>&1 ||
  fail "cpack: $(tail -20 "$TMP/cpack.log")"
DEB=$(find "$PKG" -maxdepth 1 -name "rdmabench_${VERSION}*_*.deb" | head -1)
RPM=$(find "$PKG" -maxdepth 1 -name "rdmabench-${VERSION}*.rpm" | head -1)
[ -f "$DEB" ] || fail "cpack made no .deb: $(ls "$PKG")"
[ -f "$RPM" ] || fail "cpack made no .rpm: $(ls "$PKG")"
# The shared libraries the binary needs (the packages' dependencies must follow from these).
mapfile -t NEEDED < <(readelf -d "$P/bin/rdmabench" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ ${#NEEDED[@]} -gt 0 ] || fail "readelf found no NEEDED libraries"

# ---------------------------------------------------------------- (d) .rpm
step "rpm -qpl / -qpR"
rpm -qpl "$RPM" >"$TMP/rpm.files" 2>/dev/null || fail "rpm -qpl $RPM"
for f in /usr/bin/rdmabench /usr/share/doc/rdmabench/README.md /usr/share/doc/rdmabench/LICENSE; do
  grep -qxF "$f" "$TMP/rpm.files" || fail "the .rpm lacks $f: $(cat "$TMP/rpm.files")"
done
! grep -q modulefiles "$TMP/rpm.files" || fail "the .rpm carries modulefiles: $(grep modulefiles "$TMP/rpm.files")"
rpm -qpi "$RPM" >"$TMP/rpm.info" 2>/dev/null || fail "rpm -qpi $RPM"
grep -qE '^License +: MIT$' "$TMP/rpm.info" || fail "the .rpm's License is not MIT: $(grep -i license "$TMP/rpm.info")"
[ "$(rpm -qp --qf '%{PREFIXES}' "$RPM" 2>/dev/null)" = "(none)" ] ||
  fail "the .rpm is relocatable: $(grep -i reloc "$TMP/rpm.info")"
$DOCS && { grep -qxF /usr/share/man/man1/rdmabench.1.gz "$TMP/rpm.files" ||
  fail "the .rpm lacks the man page: $(cat "$TMP/rpm.files")"; }
# Directories other packages own (filesystem, man-db, bash-completion) must not be claimed.
for d in /usr /usr/bin /usr/share /usr/share/man /usr/share/man/man1 /usr/share/doc /usr/lib/.build-id \
  /usr/share/bash-completion /usr/share/bash-completion/completions /usr/share/modulefiles; do
  ! grep -qxF "$d" "$TMP/rpm.files" || fail "the .rpm claims the shared directory $d"
done
rpm -qpR "$RPM" >"$TMP/rpm.requires" 2>/dev/null || fail "rpm -qpR $RPM"
for lib in "${NEEDED[@]}"; do
  grep -q "^$lib()(64bit)" "$TMP/rpm.requires" ||
    fail "the .rpm does not require $lib (NEEDED by the binary): $(cat "$TMP/rpm.requires")"
done
grep -q '^libc.so.6(GLIBC_' "$TMP/rpm.requires" || fail "no glibc symbol-version requirement: $(cat "$TMP/rpm.requires")"
pass "rpm: $(wc -l <"$TMP/rpm.files") files, requires every NEEDED soname (${NEEDED[*]})"

# ---------------------------------------------------------------- (c) .deb in a clean Debian 12
step ".deb metadata"
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
[ -n "$DEPENDS" ] || fail "the .deb has no Depends (dpkg-shlibdeps did not run?)"
DEPNAMES=$(tr ',|' '\n\n' <<<"$DEPENDS" | sed 's/([^)]*)//g; s/ //g')
for lib in "${NEEDED[@]}"; do
  # No early exit in awk: under pipefail, ldconfig killed by SIGPIPE would end the script
  # silently (it did, in one CI run).
  path=$(ldconfig -p | awk -v l="$lib" '!found && $1 == l && /x86-64/ {print $NF; found = 1}')
  [ -n "$path" ] || fail "ldconfig does not know $lib (NEEDED by the binary)"
  # The package that ships the soname link (merged /usr: dpkg may know it under /lib or /usr/lib).
  owner=$(dpkg -S "$path" 2>/dev/null || dpkg -S "/usr${path#/usr}" 2>/dev/null || dpkg -S "${path#/usr}" 2>/dev/null) ||
    fail "no Debian package owns $path ($lib)"
  owner=$(head -1 <<<"$owner" | cut -d: -f1)
  grep -qxF "$owner" <<<"$DEPNAMES" || fail "the .deb does not depend on $owner (ships $lib): Depends: $DEPENDS"
done
! grep -q 'man-db' <<<"$DEPENDS" || fail "man-db must not be a dependency: $DEPENDS"
dpkg-deb -c "$DEB" >"$TMP/deb.files" || fail "dpkg-deb -c $DEB"
grep -q '\./usr/bin/rdmabench$' "$TMP/deb.files" || fail "the .deb lacks /usr/bin/rdmabench: $(cat "$TMP/deb.files")"
# Debian's Lmod does not look in /usr/share/modulefiles, and /usr/bin is on PATH already.
! grep -q modulefiles "$TMP/deb.files" || fail "the .deb carries modulefiles: $(grep modulefiles "$TMP/deb.files")"
[ "$(dpkg-deb -f "$DEB" Maintainer)" = "$MAINTAINER" ] || fail "the .deb's Maintainer: $(dpkg-deb -f "$DEB" Maintainer)"
# lintian as a distribution runs it; every error and warning fails (informational tags may
# stay). Among them: no-copyright-file, no-changelog, manpage-not-compressed, bogus-mail-host,
# custom-library-search-path (RUNPATH), hardening-no-relro / -fortify-functions / -bindnow.
lintian --fail-on error,warning --display-info --no-tag-display-limit "$DEB" >"$TMP/lintian.txt" 2>&1 ||
  fail "lintian $(basename "$DEB"): $(grep -E '^[EW]:' "$TMP/lintian.txt" || cat "$TMP/lintian.txt")"
# The link-time hardening of every build (informational tags, so named here); the fortified
# calls and the stack protector are compiled into Release builds only (cmake/Hardening.cmake:
# checked by ci/readme-install.sh), this is the RelWithDebInfo test build.
! grep -E 'hardening-no-(relro|bindnow|pie)' "$TMP/lintian.txt" ||
  fail "lintian: the binary lacks link hardening: $(grep hardening "$TMP/lintian.txt")"
pass "deb: Depends computed: $DEPENDS; lintian: no error or warning ($(grep -c '^[IP]:' "$TMP/lintian.txt" || true) informational tags); no modulefiles"

step "Debian 12 root"
CACHE=${RDMABENCH_CI_CACHE:-/var/cache/rdmabench-ci}
MIRROR=${RDMABENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
INCLUDE=man-db # a test prerequisite (`man rdmabench`), not a dependency of the package
# One root tarball per week and package list: reused by later runs on this machine, refreshed
# weekly so that apt's indexes stay close to the archive.
KEY=bookworm-minbase-$(printf '%s %s' "$INCLUDE" "$MIRROR" | sha256sum | cut -c1-10)-$(date -u +%G-W%V)
TARBALL=$CACHE/$KEY.tar # uncompressed: ~220 MB, unpacked in seconds
mkdir -p "$CACHE/apt-archives/partial" "$CACHE/apt-lists/partial"
exec 9>"$CACHE/lock"
flock -w 1200 9 || fail "another run holds $CACHE/lock for 20 min"
if [ ! -f "$TARBALL" ]; then
  step "debootstrap --variant=minbase bookworm (cache miss: $TARBALL)"
  rm -rf "$CACHE/root.tmp"
  timeout 900 debootstrap --variant=minbase --include="$INCLUDE" bookworm "$CACHE/root.tmp" "$MIRROR" \
    >"$TMP/debootstrap.log" 2>&1 || { rm -rf --one-file-system "$CACHE/root.tmp"; fail "debootstrap: $(tail -5 "$TMP/debootstrap.log")"; }
  tar -C "$CACHE/root.tmp" -cf "$TARBALL.tmp" . && mv "$TARBALL.tmp" "$TARBALL"
  rm -rf --one-file-system "$CACHE/root.tmp"
  find "$CACHE" -maxdepth 1 -name 'bookworm-minbase-*.tar' ! -name "$KEY.tar" -delete
fi
flock -u 9
ROOT=$TMP/root
mkdir "$ROOT" && tar -C "$ROOT" -xf "$TARBALL"
# Mounts into the root, undone before anything is deleted (cleanup runs CLEANUP in reverse;
# lib.sh's rm -rf of $TMP comes after it). rm --one-file-system never follows a mount.
mounted() { grep -q "^$ROOT" <<<"$(findmnt -rn -o TARGET)"; }
unmount_root() {
  local m
  for m in $(findmnt -rn -o TARGET | grep "^$ROOT" | sort -r); do umount -l "$m" || true; done
}
# If anything stays mounted, keep $TMP rather than delete through a mount.
CLEANUP+=("unmount_root; ! mounted || KEEP_TMP=1")
mount -t proc proc "$ROOT/proc"
mount -t sysfs -o ro sysfs "$ROOT/sys"
mount --bind /dev "$ROOT/dev"
# apt's downloads and indexes persist beside the tarball: `apt-get update` then fetches only
# what changed, `install` only new package versions.
mount --bind "$CACHE/apt-archives" "$ROOT/var/cache/apt/archives"
mount --bind "$CACHE/apt-lists" "$ROOT/var/lib/apt/lists"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
cat >"$ROOT/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
cp "$DEB" "$ROOT/tmp/"
IN_ROOT=(chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
  DEBIAN_FRONTEND=noninteractive)
in_root() { "${IN_ROOT[@]}" "$@"; }
! in_root sh -c 'command -v rdmabench' >/dev/null || fail "the clean root already has rdmabench"
step "apt-get install ./$(basename "$DEB") in the root"
timeout 300 "${IN_ROOT[@]}" apt-get -qq update >"$TMP/apt.log" 2>&1 || fail "apt-get update in the root: $(tail -5 "$TMP/apt.log")"
timeout 600 "${IN_ROOT[@]}" apt-get install -y -qq --no-install-recommends "/tmp/$(basename "$DEB")" >>"$TMP/apt.log" 2>&1 ||
  fail "apt-get install of the .deb in a clean Debian 12: $(tail -20 "$TMP/apt.log")"
step "rdmabench in the root"
in_root rdmabench --version >"$TMP/root-version.txt" 2>&1 || fail "rdmabench --version in the root: $(cat "$TMP/root-version.txt")"
[ "$(head -1 "$TMP/root-version.txt")" = "rdmabench $VERSION" ] || fail "root --version: $(cat "$TMP/root-version.txt")"
in_root rdmabench info >"$TMP/root-info.txt" 2>&1 || fail "rdmabench info in the root: $(cat "$TMP/root-info.txt")"
grep -qE '^socket +usable' "$TMP/root-info.txt" || fail "rdmabench info in the root: $(cat "$TMP/root-info.txt")"
# `rdmabench lat` as the README's first screen: loopback, best transport (no RDMA device here:
# socket). Short sweep to keep the phase short.
timeout 120 "${IN_ROOT[@]}" rdmabench lat -m :64 -n 200 --warmup 10 >"$TMP/root-lat.txt" 2>&1 ||
  fail "rdmabench lat in the root: $(cat "$TMP/root-lat.txt")"
grep -qE '^ +64 ' "$TMP/root-lat.txt" || fail "rdmabench lat in the root printed no 64 B row: $(cat "$TMP/root-lat.txt")"
if $DOCS; then
  in_root man -P cat rdmabench >"$TMP/root-man.txt" 2>&1 || fail "man rdmabench in the root: $(head -5 "$TMP/root-man.txt")"
  grep -q 'rdmabench' "$TMP/root-man.txt" && grep -q 'NAME' "$TMP/root-man.txt" ||
    fail "man rdmabench in the root: $(head -5 "$TMP/root-man.txt")"
  pass "man rdmabench in the root"
fi
pass ".deb in a clean Debian 12 root: apt resolved $(grep -c '' <<<"$DEPNAMES") dependencies; --version, info, lat ($(sed -n 's/^# transport: *\([a-z]*\).*/\1/p' "$TMP/root-lat.txt" | head -1)) work"
unmount_root
mounted && fail "mounts left under $ROOT"
step "done"
