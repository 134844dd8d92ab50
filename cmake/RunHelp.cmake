# cmake -DEXE=rdmabench -DWHAT=--man -DOUT=file [-DEMULATOR=...] -P RunHelp.cmake:
# writes `rdmabench help WHAT` to OUT (cmake/Docs.cmake); fails the build when the binary fails.
execute_process(COMMAND ${EMULATOR} ${EXE} help ${WHAT} OUTPUT_FILE ${OUT}.tmp
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "${EXE} help ${WHAT} failed (${rc}): ${err}")
endif()
file(RENAME ${OUT}.tmp ${OUT})
