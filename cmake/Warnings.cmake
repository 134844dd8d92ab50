# Warnings for every target of the project (not for third-party code). -DRDMABENCH_WERROR=ON
# makes them errors (CI: ci/test.sh); OFF by default so that a newer compiler's new warning
# does not break a user's build.
option(RDMABENCH_WERROR "Treat compiler warnings as errors" OFF)
function(rdmabench_warnings target)
  set(werror "")
  if(RDMABENCH_WERROR)
    set(werror -Werror)
  endif()
  # GCC 12 at -O2/-O3 raises -Wrestrict false positives inside libstdc++'s std::string
  # concatenation (GCC PR105329/PR105651, fixed in GCC 13): kept visible, never fatal there.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    list(APPEND werror -Wno-error=restrict)
  endif()
  target_compile_options(${target} PRIVATE -Wall -Wextra ${werror} -Wshadow -Wnon-virtual-dtor
                                           -Wno-missing-field-initializers)
endfunction()
