# Warnings are errors for every target of the project (not for third-party code).
function(rdmabench_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wshadow -Wnon-virtual-dtor
                                           -Wno-missing-field-initializers)
endfunction()
