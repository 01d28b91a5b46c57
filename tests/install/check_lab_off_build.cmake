# ctest gdn_lab_off_build: libgdn configured and built with the lab switched off
# (GDN_BUILD_LAB=OFF), in a scratch build folder, with every lab dependency made unfindable:
# configuring fails if anything still asks for SQLite, CLI11, Dear ImGui (pkg-config), GLFW or
# OpenGL. Then libgdn and the C API tests (gdn_api_tests, white-box: they link the internal
# static library) are built and run. One staged variant keeps the build CI-sized (the fused
# chunk loops are not compiled).
# Arguments: SOURCE_DIR, SCRATCH_DIR, GENERATOR, JOBS.
foreach(arg SOURCE_DIR SCRATCH_DIR GENERATOR JOBS)
  if(NOT DEFINED ${arg})
    message(FATAL_ERROR "check_lab_off_build.cmake: expected -D${arg}=..., got none")
  endif()
endforeach()

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit ${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${SCRATCH_DIR})
run_step("configuring with GDN_BUILD_LAB=OFF"
  ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${SCRATCH_DIR} -G ${GENERATOR}
  -DCMAKE_BUILD_TYPE=Release
  -DGDN_BUILD_LAB=OFF
  -DGDN_VARIANTS=gdn_fwd_sm90_staged_v64_cp0
  -DGDN_DISPATCH_TABLE:STRING=none
  -DCMAKE_DISABLE_FIND_PACKAGE_SQLite3=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_OpenGL=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_glfw3=ON)
if(NOT step_output MATCHES "gdnlab lab: off")
  message(FATAL_ERROR "configure: expected the line 'gdnlab lab: off', got:\n${step_output}")
endif()

# No lab target exists in that build.
run_step("listing the targets" ${CMAKE_COMMAND} --build ${SCRATCH_DIR} --target help)
foreach(lab_target gdnlab gdn_tuner gdn_db gdn_profiler gdn_problems gdn_gui)
  if(step_output MATCHES "(^|\n)${lab_target}[:\n ]")
    message(FATAL_ERROR "GDN_BUILD_LAB=OFF: expected no target ${lab_target}, found it")
  endif()
endforeach()

run_step("building libgdn and its C API tests"
  ${CMAKE_COMMAND} --build ${SCRATCH_DIR} -j ${JOBS} --target gdn gdn_api_tests)
run_step("running the C API tests" ${SCRATCH_DIR}/tests/kernels/src/gdn_api_tests --gtest_brief=1)
message(STATUS "${step_output}")
