# Detects libibverbs/librdmacm and libfabric. Each backend directory holds its sources plus
# <name>_stub.cc, which is compiled instead when the backend is off: callers never #ifdef.
set(RDMABENCH_BACKEND_SOURCES "")
set(RDMABENCH_BACKEND_LIBS "")
set(RDMABENCH_BACKEND_DEFS "")

function(_rdmabench_backend name dir modules)
  string(TOUPPER ${name} up)
  set(mode ${RDMABENCH_WITH_${up}})
  set(found FALSE)
  if(NOT mode STREQUAL "OFF")
    pkg_check_modules(RDMABENCH_${up} IMPORTED_TARGET ${modules})
    set(found ${RDMABENCH_${up}_FOUND})
    if(mode STREQUAL "ON" AND NOT found)
      message(FATAL_ERROR "RDMABENCH_WITH_${up}=ON but ${modules} not found")
    endif()
  endif()
  file(GLOB all CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/lib/transport/${dir}/*.cc)
  set(stub ${CMAKE_CURRENT_SOURCE_DIR}/lib/transport/${dir}/${dir}_stub.cc)
  list(REMOVE_ITEM all ${stub})
  if(found AND all)
    set(RDMABENCH_BACKEND_SOURCES ${RDMABENCH_BACKEND_SOURCES} ${all} PARENT_SCOPE)
    set(lib PkgConfig::RDMABENCH_${up})
    if(name STREQUAL "ofi")
      # Headers only: libfabric.so.1 is opened with dlopen on first use, so the cycle-counter
      # calibration of the PSM libraries it links (0.2 s) is not paid by every command
      # (lib/transport/ofi/ofi_library.h). The build's libdir is the fallback after the loader's
      # search path (a Spack or module libfabric).
      add_library(rdmabench_ofi_headers INTERFACE)
      target_include_directories(rdmabench_ofi_headers INTERFACE ${RDMABENCH_OFI_INCLUDE_DIRS})
      set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/lib/transport/ofi/ofi_library.cc
        PROPERTIES COMPILE_DEFINITIONS "RDMABENCH_LIBFABRIC_LIBDIR=\"${RDMABENCH_OFI_LIBDIR}\"")
      set(lib rdmabench_ofi_headers)
      set(RDMABENCH_OFI_DLOPEN ON PARENT_SCOPE)  # cmake/Package.cmake names the dependency
    endif()
    set(RDMABENCH_BACKEND_LIBS ${RDMABENCH_BACKEND_LIBS} ${lib} PARENT_SCOPE)
    set(RDMABENCH_BACKEND_DEFS ${RDMABENCH_BACKEND_DEFS} RDMABENCH_HAVE_${up}=1 PARENT_SCOPE)
    message(STATUS "rdmabench: ${name} backend ON")
  else()
    set(RDMABENCH_BACKEND_SOURCES ${RDMABENCH_BACKEND_SOURCES} ${stub} PARENT_SCOPE)
    message(STATUS "rdmabench: ${name} backend OFF (stub)")
  endif()
endfunction()

_rdmabench_backend(verbs verbs "libibverbs;librdmacm")
_rdmabench_backend(ofi ofi "libfabric")
