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
  # pmix.pc links with `-Wl,-rpath <libdir>` (Debian: /usr/lib/<arch>/pmix2/lib), which put that
  # directory twice into the binary's RUNPATH, once more beside CMake's own, and into the .deb
  # (lintian: custom-library-search-path). The flags are not taken: the library is linked by
  # its path, and where the linker's default directories hold the same file (Debian's libpmix2
  # links libpmix.so.2 into /usr/lib/<arch>) by that one, so the binary needs no RUNPATH; a PMIx
  # elsewhere (Spack, a module) gets one, from CMake (Install.cmake: INSTALL_RPATH_USE_LINK_PATH).
  find_library(_pmix_lib NAMES pmix HINTS ${RDMABENCH_PMIX_LIBRARY_DIRS} NO_DEFAULT_PATH NO_CACHE)
  if(NOT _pmix_lib)
    message(FATAL_ERROR "rdmabench: pkg-config's pmix names no libpmix in ${RDMABENCH_PMIX_LIBRARY_DIRS}")
  endif()
  get_filename_component(_pmix_real "${_pmix_lib}" REALPATH)
  foreach(_dir IN LISTS CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
    get_filename_component(_sys_real "${_dir}/libpmix.so" REALPATH)
    if(EXISTS "${_dir}/libpmix.so" AND _sys_real STREQUAL _pmix_real)
      set(_pmix_lib "${_dir}/libpmix.so")
      break()
    endif()
  endforeach()
  add_library(rdmabench_pmix INTERFACE IMPORTED)
  target_include_directories(rdmabench_pmix INTERFACE ${RDMABENCH_PMIX_INCLUDE_DIRS})
  target_compile_options(rdmabench_pmix INTERFACE ${RDMABENCH_PMIX_CFLAGS_OTHER})
  target_link_libraries(rdmabench_pmix INTERFACE "${_pmix_lib}")
  list(APPEND RDMABENCH_BACKEND_SOURCES ${_pmix_dir}/pmix.cc)
  list(APPEND RDMABENCH_BACKEND_LIBS rdmabench_pmix)
  list(APPEND RDMABENCH_BACKEND_DEFS RDMABENCH_HAVE_PMIX=1)
  message(STATUS "rdmabench: pmix rendezvous ON (libpmix ${RDMABENCH_PMIX_VERSION})")
else()
  list(APPEND RDMABENCH_BACKEND_SOURCES ${_pmix_dir}/pmix_stub.cc)
  message(STATUS "rdmabench: pmix rendezvous OFF (stub)")
endif()
