# Fails when DOC differs from what GEN prints (regenerate: GEN > DOC).
execute_process(COMMAND ${GEN} OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GEN} failed with ${rc}")
endif()
file(READ ${DOC} committed)
if(NOT generated STREQUAL committed)
  message(FATAL_ERROR "${DOC} is stale: regenerate it with ${GEN} > ${DOC}")
endif()
