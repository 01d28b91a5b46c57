# cmake -P script: configures the tree with a pruned variant set and checks what configure
# decided (kernels/variant_selection.cmake). CASE is one of
#   table            -DGDN_DISPATCH_TABLE=<exported header>: the header's kVariantNames are kept,
#                    and the fused family is compiled exactly when one of them is fused
#   committed_table  no option: the committed kernels/tables/ header is compiled in, unpruned;
#                    given explicitly: the pruned build of its variants
#   variants_list    -DGDN_VARIANTS=<one staged forward>: the fused family is not compiled
#   variants_all     -DGDN_VARIANTS=all: the full fused space is registered
#   malformed_table  a header without kVariantNames: configure fails naming GDN_DISPATCH_TABLE
foreach(var CASE GDN_SOURCE_DIR SCRATCH_DIR TABLE_HEADER GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_pruned_configure.cmake: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${SCRATCH_DIR}")
file(MAKE_DIRECTORY "${SCRATCH_DIR}")

function(configure_with out_rc out_text)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S "${GDN_SOURCE_DIR}" -B "${SCRATCH_DIR}/build" -G "${GENERATOR}"
            -DGDN_BUILD_TESTS=OFF -DGDN_WITH_GUI=OFF ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${out_rc} "${rc}" PARENT_SCOPE)
  set(${out_text} "${out}${err}" PARENT_SCOPE)
endfunction()

function(require text pattern why)
  string(FIND "${text}" "${pattern}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${why}: expected '${pattern}' in the configure output:\n${text}")
  endif()
endfunction()

# Configures with -DGDN_DISPATCH_TABLE=<header> and checks the pruned build keeps exactly the
# header's kVariantNames (read from the header itself, not from this script) and compiles the
# fused TUs exactly when one of them is fused.
function(check_pruned_by header)
  file(READ "${header}" text)
  string(FIND "${text}" "kVariantNames" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "no kVariantNames in ${header}")
  endif()
  string(SUBSTRING "${text}" ${at} -1 names_text)
  string(REGEX MATCHALL "\"gdn_[a-z0-9_]+\"" quoted "${names_text}")
  string(REPLACE "\"" "" names "${quoted}")
  list(LENGTH names count)
  if(count EQUAL 0)
    message(FATAL_ERROR "no variant names in the kVariantNames of ${header}")
  endif()
  file(REMOVE_RECURSE "${SCRATCH_DIR}/build")
  configure_with(rc out "-DGDN_DISPATCH_TABLE=${header}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configure with GDN_DISPATCH_TABLE=${header} failed:\n${out}")
  endif()
  string(JOIN ", " shown ${names})
  require("${out}" "libgdn variants (dispatch table ${header}): ${shown}; always kept"
          "the kept list must be the header's kVariantNames")
  set(fused_expected "not compiled")
  foreach(name IN LISTS names)
    if(name MATCHES "^gdn_fwd_sm90_fused_")
      set(fused_expected "compiled")
    endif()
  endforeach()
  require("${out}" "libgdn fused family: ${fused_expected}" "fused TUs follow the kept names")
endfunction()

if(CASE STREQUAL "table")
  check_pruned_by("${TABLE_HEADER}")
elseif(CASE STREQUAL "committed_table")
  # No GDN_DISPATCH_TABLE: the committed table is used for dispatch and nothing is pruned.
  set(committed "${GDN_SOURCE_DIR}/kernels/tables/gdn_dispatch_table.hpp")
  configure_with(rc text)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "default configure failed:\n${text}")
  endif()
  require("${text}" "libgdn dispatch table: the committed default ${committed}"
          "the default build must compile the committed table in")
  require("${text}" "libgdn variants (GDN_VARIANTS=default" "and keep the default variant list")
  # Given explicitly, the committed header prunes like any other table.
  check_pruned_by("${committed}")
elseif(CASE STREQUAL "variants_list")
  configure_with(rc text "-DGDN_VARIANTS=gdn_fwd_sm90_staged_v64_cp0")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configure with a GDN_VARIANTS list failed:\n${text}")
  endif()
  require("${text}" "libgdn variants (GDN_VARIANTS list): gdn_fwd_sm90_staged_v64_cp0;"
          "the kept list must be the GDN_VARIANTS list")
  require("${text}" "libgdn fused family: not compiled" "a staged-only list builds no fused TU")
elseif(CASE STREQUAL "variants_all")
  configure_with(rc text "-DGDN_VARIANTS=all")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configure with GDN_VARIANTS=all failed:\n${text}")
  endif()
  require("${text}" "libgdn variants (GDN_VARIANTS=all: every config of the full space"
          "'all' must register the full space, not the default list")
  require("${text}" "libgdn fused family: compiled" "'all' builds the fused TUs")
  file(STRINGS "${SCRATCH_DIR}/build/CMakeCache.txt" cached REGEX "^GDN_VARIANTS:")
  require("${cached}" "GDN_VARIANTS:STRING=all" "the option must reach the cache")
elseif(CASE STREQUAL "malformed_table")
  set(bad "${SCRATCH_DIR}/not_a_table.hpp")
  file(WRITE "${bad}" "#pragma once\n// not written by gdnlab export\n")
  configure_with(rc text "-DGDN_DISPATCH_TABLE=${bad}")
  if(rc EQUAL 0)
    message(FATAL_ERROR "configure accepted a header that is not a dispatch table:\n${text}")
  endif()
  require("${text}" "GDN_DISPATCH_TABLE: expected a header written by `gdnlab export`"
          "the error must name the option and what was expected")
else()
  message(FATAL_ERROR "check_pruned_configure.cmake: unknown CASE '${CASE}'")
endif()
file(REMOVE_RECURSE "${SCRATCH_DIR}")
message(STATUS "pruned configure '${CASE}': ok")
