# -DRDMABENCH_SANITIZE=ON (or "address") builds everything with AddressSanitizer +
# UndefinedBehaviorSanitizer; -DRDMABENCH_SANITIZE=thread with ThreadSanitizer (TSan cannot be
# combined with ASan). Use a separate build directory for each.
set(RDMABENCH_SANITIZE OFF CACHE STRING "Sanitizers: OFF, ON (= address: ASan+UBSan) or thread")
if(RDMABENCH_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(RDMABENCH_SANITIZE)
  # float-cast-overflow (an out-of-range double -> integer conversion, e.g. "iterations": 1e30)
  # is named explicitly with clang, whose -fsanitize=undefined has it; GCC's does not check it.
  set(_ubsan undefined)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    set(_ubsan undefined,float-cast-overflow)
  endif()
  add_compile_options(-fsanitize=address,${_ubsan} -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,${_ubsan})
endif()
