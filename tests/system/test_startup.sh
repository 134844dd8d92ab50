# Issue 35 item 9: a command that measures nothing pays nothing at start-up. Before, every
# invocation (--help and version included) spent ~0.2 s in 660-830 sleeps of 125 us: the
# constructors of libpsm2 and libpsm_infinipath, which Debian's libfabric.so.1 links, calibrate
# a cycle counter when the library is loaded. libfabric is now opened on first use by the ofi
# backend (lib/transport/ofi/ofi_library.h), and rdmabench's own clock is selected only by
# commands that measure. Counts, not times: the dynamic loader's log (LD_DEBUG=libs) names
# every library initialised, and a test hook logs each clock selection. ~2 s.
source "$(dirname "$0")/lib.sh"

# inits CMD...: the libfabric / PSM libraries the loader initialised for CMD, one per line.
inits() {
  LD_DEBUG=libs "$@" 2>&1 >/dev/null | grep -E "calling init: .*/lib(fabric|psm|infinipath)" || true
}
for cmd in "--help" "version" "help lat" "lat --help" "barrier --help" "compare --help"; do
  # shellcheck disable=SC2086
  got=$(inits "$RB" $cmd)
  [ -z "$got" ] || fail "rdmabench $cmd initialised: $got"
  # shellcheck disable=SC2086
  n=$(RDMABENCH_TEST_CLOCK_LOG=1 "$RB" $cmd 2>&1 >/dev/null | grep -c "test hook: clock selected" || true)
  [ "$n" = 0 ] || fail "rdmabench $cmd selected the measurement clock $n time(s)"
done
pass "--help, version, help lat, lat/barrier/compare --help: no libfabric / PSM load, no clock selection"

# The counts can fail: a command that needs them does both.
n=$(RDMABENCH_TEST_CLOCK_LOG=1 timeout 60 "$RB" lat -t socket -s 8 -n 10 2>&1 >/dev/null | grep -c "test hook: clock selected" || true)
[ "$n" = 1 ] || fail "lat selected the measurement clock $n times (want 1)"
if grep -q "^ofi *usable" <<<"$("$RB" info 2>/dev/null || true)"; then
  [ -n "$(inits "$RB" info)" ] || fail "info did not load libfabric (is the grep above blind?)"
  timeout 60 "$RB" lat -t ofi -s 8 -n 10 >/dev/null || fail "lat -t ofi after the lazy load"
fi
pass "lat selects the clock once; info and -t ofi load libfabric on first use"
