# -DRDMABENCH_SANITIZE=ON (or "address") builds everything with AddressSanitizer +
# UndefinedBehaviorSanitizer; -DRDMABENCH_SANITIZE=thread with ThreadSanitizer (TSan cannot be
# combined with ASan). Use a separate build directory for each.
set(RDMABENCH_SANITIZE OFF CACHE STRING "Sanitizers: OFF, ON (= address: ASan+UBSan) or thread")
if(RDMABENCH_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(RDMABENCH_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
