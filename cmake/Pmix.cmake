# PMIx (libpmix, pkg-config `pmix`): rank, size and the rendezvous address from the PMIx server
# of `srun --mpi=pmix`, Open MPI's mpirun or PRRTE (`--rendezvous pmix`, docs/rendezvous.md).
# AUTO: used when found; ON: required; OFF or not found: lib/rendezvous/pmix/pmix_stub.cc, which
# answers `--rendezvous pmix` with "not built". Appends to the RDMABENCH_BACKEND_* lists.
set(RDMABENCH_WITH_PMIX AUTO CACHE STRING "PMIx rendezvous: AUTO, ON or OFF")
set(_pmix_dir ${CMAKE_CURRENT_SOURCE_DIR}/lib/rendezvous/pmix)
set(RDMABENCH_PMIX_FOUND FALSE)
if(NOT RDMABENCH_WITH_PMIX STREQUAL "OFF")
  pkg_check_modules(RDMABENCH_PMIX IMPORTED_TARGET pmix)
  if(RDMABENCH_WITH_PMIX STREQUAL "ON" AND NOT RDMABENCH_PMIX_FOUND)
    message(FATAL_ERROR "RDMABENCH_WITH_PMIX=ON but pkg-config found no `pmix` (libpmix-dev)")
  endif()
endif()
if(RDMABENCH_PMIX_FOUND)
  list(APPEND RDMABENCH_BACKEND_SOURCES ${_pmix_dir}/pmix.cc)
  list(APPEND RDMABENCH_BACKEND_LIBS PkgConfig::RDMABENCH_PMIX)
  list(APPEND RDMABENCH_BACKEND_DEFS RDMABENCH_HAVE_PMIX=1)
  message(STATUS "rdmabench: pmix rendezvous ON (libpmix ${RDMABENCH_PMIX_VERSION})")
else()
  list(APPEND RDMABENCH_BACKEND_SOURCES ${_pmix_dir}/pmix_stub.cc)
  message(STATUS "rdmabench: pmix rendezvous OFF (stub)")
endif()
