#!/usr/bin/env bash
# Installs everything rdmabench needs to build, test and benchmark on Debian 12, from Debian's
# archive only. Re-runs itself under sudo when not root. Idempotent.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then exec sudo -E bash "$0" "$@"; fi
export DEBIAN_FRONTEND=noninteractive

PKGS=(
  # build
  build-essential cmake ninja-build pkg-config clang-format ccache
  libboost-program-options-dev nlohmann-json3-dev libfmt-dev libgtest-dev libhwloc-dev
  # fuzzing (fuzz/, ci/test.sh "fuzz" phase): clang 14 and its libFuzzer + sanitizer runtimes
  # (libclang_rt.fuzzer-x86_64.a is in libclang-rt-14-dev, not pulled without recommends)
  clang libclang-rt-14-dev
  # transports
  libibverbs-dev librdmacm-dev rdma-core ibverbs-utils libfabric-dev libfabric-bin
  # tests: netns hosts, soft-RoCE VM, JSON checks, plots
  iproute2 procps psmisc python3 qemu-system-x86 busybox-static kmod cpio gnuplot-nox
  # anchors measured side by side in bench/
  perftest sockperf qperf iperf3 rdmacm-utils
  # profiles beside the anchors (bench/rxe_profile.sh: perf record inside the VM)
  linux-perf
  # instruction counts of the engine's timed loops (tests/perf, callgrind): the CI guard
  valgrind
  # collectives: a throw-away Slurm (ci/slurm-cluster), Open MPI beside rdmabench in bench/
  slurmctld slurmd slurm-client openmpi-bin libopenmpi-dev
  # PMIx rendezvous (cmake/Pmix.cmake; RDMABENCH_WITH_PMIX=ON in ci/test.sh). Also what Slurm's
  # mpi/pmix plugin loads: without it `srun --mpi=pmix` fails ("can not load PMIx library").
  libpmix-dev
  # generated docs (cmake/Docs.cmake): the man page is rendered with groff/man in
  # system.test_man_page, the completion is exercised with bash-completion in
  # system.test_bash_completion
  groff-base man-db bash-completion
  # packaging (tests/system/test_install.sh): .deb dependencies (dpkg-shlibdeps needs `file`),
  # .rpm (rpmbuild from Debian's rpm), the clean Debian 12 root (debootstrap), Lmod for the
  # modulefiles (Debian's environment-modules conflicts with lmod; Lmod reads the Tcl file too),
  # lintian for the .deb as Debian checks it
  dpkg-dev file rpm debootstrap lmod lintian
)
# Another apt-get/dpkg (unattended-upgrades, a second CI job) may hold the dpkg lock: wait for it
# up to 5 minutes instead of failing at once with exit 100.
APT_LOCK=(-o "DPkg::Lock::Timeout=${APT_LOCK_TIMEOUT:-300}")
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  apt-get "${APT_LOCK[@]}" update -qq
  apt-get "${APT_LOCK[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "install-deps: all packages present"
