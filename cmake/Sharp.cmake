# NVIDIA SHARP (libsharp_coll) collective backend, lib/collective/sharp/. Found the way
# nccl-rdma-sharp-plugins and UCC look for it: -DSHARP_DIR=, $SHARP_DIR, $HPCX_SHARP_DIR,
# /opt/mellanox/sharp. Only the header is needed at build time: the library is dlopen'ed at run
# time ($RDMABENCH_SHARP_LIBRARY overrides the path found here). Off or not found: sharp_stub.cc.
# Sets RDMABENCH_SHARP_SOURCES (stub or backend) and RDMABENCH_SHARP_FOUND.
set(RDMABENCH_WITH_SHARP AUTO CACHE STRING "NVIDIA SHARP collective backend: AUTO, ON or OFF")
set(SHARP_DIR "" CACHE PATH "SHARP install prefix (include/sharp/api/sharp_coll.h)")

set(_sharp_dir ${CMAKE_CURRENT_SOURCE_DIR}/lib/collective/sharp)
set(RDMABENCH_SHARP_BACKEND ${_sharp_dir}/sharp_backend.cc)
set(RDMABENCH_SHARP_FOUND FALSE)
if(NOT RDMABENCH_WITH_SHARP STREQUAL "OFF")
  set(_hints ${SHARP_DIR} $ENV{SHARP_DIR} $ENV{HPCX_SHARP_DIR} /opt/mellanox/sharp)
  find_path(RDMABENCH_SHARP_INCLUDE_DIR sharp/api/sharp_coll.h HINTS ${_hints}
            PATH_SUFFIXES include)
  find_library(RDMABENCH_SHARP_LIBRARY_PATH sharp_coll HINTS ${_hints} PATH_SUFFIXES lib lib64)
  if(RDMABENCH_SHARP_INCLUDE_DIR)
    set(RDMABENCH_SHARP_FOUND TRUE)
  elseif(RDMABENCH_WITH_SHARP STREQUAL "ON")
    message(FATAL_ERROR "RDMABENCH_WITH_SHARP=ON but sharp/api/sharp_coll.h was not found in "
                        "SHARP_DIR, $HPCX_SHARP_DIR or /opt/mellanox/sharp")
  endif()
endif()

if(RDMABENCH_SHARP_FOUND)
  if(RDMABENCH_SHARP_LIBRARY_PATH)
    set(_lib ${RDMABENCH_SHARP_LIBRARY_PATH})
  else()
    set(_lib libsharp_coll.so)
  endif()
  set(RDMABENCH_SHARP_SOURCES ${RDMABENCH_SHARP_BACKEND})
  # Per-source: the other translation units keep identical command lines (ccache).
  set_source_files_properties(${RDMABENCH_SHARP_BACKEND} PROPERTIES
    INCLUDE_DIRECTORIES ${RDMABENCH_SHARP_INCLUDE_DIR}
    COMPILE_DEFINITIONS "RDMABENCH_SHARP_LIBRARY_DEFAULT=\"${_lib}\"")
  message(STATUS "rdmabench: sharp backend ON (${RDMABENCH_SHARP_INCLUDE_DIR}, runtime ${_lib})")
else()
  set(RDMABENCH_SHARP_SOURCES ${_sharp_dir}/sharp_stub.cc)
  message(STATUS "rdmabench: sharp backend OFF (stub)")
endif()
