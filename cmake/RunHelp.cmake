# cmake -DEXE=rdmabench -DWHAT=--man -DOUT=file [-DGZIP=gzip] [-DEMULATOR=...] -P RunHelp.cmake:
# writes `rdmabench help WHAT` to OUT, and with GZIP also OUT.gz (gzip -9n: no name or time stamp
# in its header, so the same page gives the same bytes); cmake/Docs.cmake. Fails the build when
# the binary fails.
execute_process(COMMAND ${EMULATOR} ${EXE} help ${WHAT} OUTPUT_FILE ${OUT}.tmp
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "${EXE} help ${WHAT} failed (${rc}): ${err}")
endif()
file(RENAME ${OUT}.tmp ${OUT})
if(GZIP)
  execute_process(COMMAND ${GZIP} -9n -c ${OUT} OUTPUT_FILE ${OUT}.gz.tmp RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${GZIP} -9n ${OUT} failed (${rc})")
  endif()
  file(RENAME ${OUT}.gz.tmp ${OUT}.gz)
endif()
