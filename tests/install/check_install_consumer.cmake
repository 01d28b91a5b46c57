# ctest gdn_install_consumer: `cmake --install` of the build into a scratch prefix, the
# installed tree checked (public headers, shared library, package config, no internal header),
# then tests/install/consumer configured with find_package(gdn), built and run.
# Arguments: BUILD_DIR, SCRATCH_DIR, CONSUMER_DIR, GENERATOR, CUDA_ROOT.
foreach(arg BUILD_DIR SCRATCH_DIR CONSUMER_DIR GENERATOR CUDA_ROOT)
  if(NOT DEFINED ${arg})
    message(FATAL_ERROR "check_install_consumer.cmake: expected -D${arg}=..., got none")
  endif()
endforeach()

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit ${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${SCRATCH_DIR}/prefix)
file(REMOVE_RECURSE ${SCRATCH_DIR})
run_step("cmake --install ${BUILD_DIR} --prefix ${prefix}"
         ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# The installed tree: the C API header, the shared library with its soname links, the
# package config and version files; the C++ registry interface stays inside the build.
foreach(pattern include/gdn/gdn.h include/gdn/variant_config.hpp
                "lib*/libgdn.so" "lib*/libgdn.so.0" "lib*/cmake/gdn/gdnConfig.cmake"
                "lib*/cmake/gdn/gdnConfigVersion.cmake" "lib*/cmake/gdn/gdnTargets.cmake")
  file(GLOB found ${prefix}/${pattern})
  if(found STREQUAL "")
    message(FATAL_ERROR "installed tree ${prefix}: expected ${pattern}, found nothing")
  endif()
endforeach()
foreach(internal include/gdn/variant.hpp)
  if(EXISTS ${prefix}/${internal})
    message(FATAL_ERROR "installed tree ${prefix}: expected no ${internal} (internal C++ "
                        "interface, not exported by libgdn.so), found it")
  endif()
endforeach()

run_step("configuring the consumer (${CONSUMER_DIR})"
         ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${SCRATCH_DIR}/consumer -G ${GENERATOR}
         -DCMAKE_PREFIX_PATH=${prefix} -DCUDAToolkit_ROOT=${CUDA_ROOT})
run_step("building the consumer" ${CMAKE_COMMAND} --build ${SCRATCH_DIR}/consumer)
run_step("running the consumer" ${SCRATCH_DIR}/consumer/gdn_consumer)
message(STATUS "consumer output:\n${step_output}")
if(NOT step_output MATCHES "libgdn [0-9]+\\.[0-9]+\\.[0-9]+")
  message(FATAL_ERROR "consumer: expected 'libgdn <version>' in its output, got:\n${step_output}")
endif()
