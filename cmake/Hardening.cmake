# Hardening flags, as Debian's and Fedora's default build flags give every packaged program
# (dpkg-buildflags `hardening=+all` on amd64; lintian's hardening-no-* checks):
#   -Wl,-z,relro -Wl,-z,now            every build: the GOT is read-only once the dynamic linker
#                                      has bound every symbol at start
#   -fstack-protector-strong           Release and MinSizeRel, the builds packages and the README
#   -D_FORTIFY_SOURCE=2                recipe make (cmake/Package.cmake): a canary in functions with
#                                      arrays or address-taken locals; checked memcpy/read/...
#                                      where the size is known (it needs optimization)
#   PIE                                the compilers' default on Debian, Ubuntu and Fedora
# RelWithDebInfo (the development and CI test build) and Debug compile without the two: the
# instruction-count budgets of docs/metrics.md are measured there, sanitizers check the same
# calls themselves, and _FORTIFY_SOURCE without optimization is a glibc warning (-Werror).
# A distribution that passes its own flags (dpkg-buildflags in CXXFLAGS/LDFLAGS, %cmake) keeps
# them; -DRDMABENCH_HARDENING=OFF drops ours. perftest as Debian ships it is built with the same
# flags, so Release figures stay like for like.
option(RDMABENCH_HARDENING "Build with the distributions' hardening flags" ON)
if(NOT RDMABENCH_HARDENING OR NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  return()
endif()
add_link_options(LINKER:-z,relro LINKER:-z,now)
if(RDMABENCH_SANITIZE OR RDMABENCH_FUZZ)
  return()
endif()
set(_rb_packaged $<CONFIG:Release,MinSizeRel>)
add_compile_options($<${_rb_packaged}:-fstack-protector-strong>)
if(NOT "$ENV{CXXFLAGS} ${CMAKE_CXX_FLAGS}" MATCHES "_FORTIFY_SOURCE")
  add_compile_options($<${_rb_packaged}:-D_FORTIFY_SOURCE=2>)
endif()
