# The man page (rdmabench.1) and the bash completion, generated at build time by the built
# binary from the same option descriptions as --help (lib/cli/help_gen.h), and their install
# rules. docs/cli.md's option tables come from the same place (tools/gen-docs.sh; the test
# system.test_docs_in_sync fails when they drift).
include(GNUInstallDirs)

if(CMAKE_CROSSCOMPILING AND NOT CMAKE_CROSSCOMPILING_EMULATOR)
  message(STATUS "rdmabench: cross-compiling without CMAKE_CROSSCOMPILING_EMULATOR: the man page "
                 "and the bash completion are not generated (they run the built binary)")
  return()
endif()

set(RDMABENCH_DOC_DIR ${CMAKE_BINARY_DIR}/doc)
set(RDMABENCH_MAN_PAGE ${RDMABENCH_DOC_DIR}/rdmabench.1)
set(RDMABENCH_BASH_COMPLETION ${RDMABENCH_DOC_DIR}/rdmabench.bash)
# -D before -P: cmake -P ignores definitions after the script.
set(_rb_run ${CMAKE_COMMAND} -DEMULATOR=${CMAKE_CROSSCOMPILING_EMULATOR}
            -DEXE=$<TARGET_FILE:rdmabench>)
set(_rb_script -P ${CMAKE_CURRENT_LIST_DIR}/RunHelp.cmake)
add_custom_command(
  OUTPUT ${RDMABENCH_MAN_PAGE} ${RDMABENCH_BASH_COMPLETION}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${RDMABENCH_DOC_DIR}
  COMMAND ${_rb_run} -DWHAT=--man -DOUT=${RDMABENCH_MAN_PAGE} ${_rb_script}
  COMMAND ${_rb_run} -DWHAT=--bash-completion -DOUT=${RDMABENCH_BASH_COMPLETION} ${_rb_script}
  DEPENDS rdmabench ${CMAKE_CURRENT_LIST_DIR}/RunHelp.cmake
  COMMENT "Generating the man page and the bash completion (rdmabench help --man / --bash-completion)"
  VERBATIM)
add_custom_target(rdmabench_docs ALL DEPENDS ${RDMABENCH_MAN_PAGE} ${RDMABENCH_BASH_COMPLETION})

install(FILES ${RDMABENCH_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${RDMABENCH_BASH_COMPLETION}
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME rdmabench)
