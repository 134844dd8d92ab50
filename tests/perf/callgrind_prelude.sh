# Sourced by the callgrind guards (instructions_per_message.sh, instructions_per_collective.sh)
# after they set `sanitize`: a sanitizer build skips (exit 77: valgrind cannot run sanitized
# binaries; ci/skip-allowlist.txt), a missing valgrind fails; then `tmp` is a directory removed
# on exit.
case "$sanitize" in
  ""|OFF|off|0|FALSE|false) ;;
  *) echo "SKIPPED: sanitizer build (RDMABENCH_SANITIZE=$sanitize): valgrind cannot run it"; exit 77 ;;
esac
if ! command -v valgrind >/dev/null; then
  echo "FAIL: valgrind not installed (ci/install-deps.sh installs it)"; exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
