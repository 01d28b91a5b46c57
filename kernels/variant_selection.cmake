# Which kernel variants libgdn registers and compiles, from GDN_DISPATCH_TABLE or GDN_VARIANTS.
#
# The rule (README, "Dispatch tables"):
#   GDN_DISPATCH_TABLE=<header>  the variants the header's kVariantNames list, plus the
#                                always-kept set below; GDN_VARIANTS is then ignored.
#   GDN_DISPATCH_TABLE empty     the committed default table (kernels/tables/, exported from the
#                                H200 anchor sweep) for dispatch, no pruning: GDN_VARIANTS
#                                decides the variants (the default list holds the table's).
#   GDN_DISPATCH_TABLE=none      no table: every call takes the default selection rule.
#   GDN_VARIANTS=<a,b,...>       those procedural names, plus the always-kept set.
#   GDN_VARIANTS=default         the handful kernels/cuda/registry/registry.cpp lists (CI-sized).
#   GDN_VARIANTS=all             every config of the full space the compiled fused chunk loop
#                                implements (fused_config_built), 32 today, plus the staged.
#   Always kept: every backward variant (a table tunes the forward) and every staged forward
#   variant, the universal fallback of the default selection rule for shapes outside the
#   table: the staged family implements every problem any fused variant does, and its TUs are
#   built anyway because the backward runs the staged forward recurrence.
# Outputs (in the caller's scope):
#   GDN_KEPT_VARIANTS           the chosen names (empty: no filter, register everything)
#   GDN_COMPILE_FUSED           ON when a kept name is fused (or no filter): the fused TUs build
#   GDN_DISPATCH_TABLE_ABSOLUTE the table header's absolute path (when one is given)
#   GDN_REGISTER_FULL_SPACE     ON for GDN_VARIANTS=all (and no table)
# Configure prints "libgdn variants (...)" and "libgdn fused family: ..." lines (a ctest
# checks them, tests/kernels/dispatch).

set(GDN_VARIANT_NAME_REGEX "^gdn_(fwd|bwd)_sm90_(staged|fused)_v[0-9]+(_[a-z0-9]+)*$")

function(gdn_check_variant_names option names)
  foreach(name IN LISTS names)
    if(NOT name MATCHES "${GDN_VARIANT_NAME_REGEX}")
      message(FATAL_ERROR "${option}: expected procedural variant names such as "
                          "gdn_fwd_sm90_fused_v32_s2_coop_cp0 (see `gdnlab space`), got '${name}'")
    endif()
  endforeach()
endfunction()

# Reads the kVariantNames list of a header written by `gdnlab export`.
function(gdn_read_table_variants header out_names)
  if(NOT EXISTS "${header}" OR IS_DIRECTORY "${header}")
    message(FATAL_ERROR "GDN_DISPATCH_TABLE: expected the path of a header written by "
                        "`gdnlab export` (gdn_dispatch_table.hpp), got '${header}', "
                        "which is not a file")
  endif()
  file(READ "${header}" text)
  string(FIND "${text}" "namespace gdn::dispatch::generated" ns_at)
  string(FIND "${text}" "kEntries" entries_at)
  string(FIND "${text}" "kVariantNames" names_at)
  if(ns_at EQUAL -1 OR entries_at EQUAL -1 OR names_at EQUAL -1)
    message(FATAL_ERROR "GDN_DISPATCH_TABLE: expected a header written by `gdnlab export` "
                        "(namespace gdn::dispatch::generated with kEntries and kVariantNames), "
                        "got '${header}', which lacks them")
  endif()
  string(SUBSTRING "${text}" ${names_at} -1 names_text)
  string(FIND "${names_text}" "}};" list_end)
  if(NOT list_end EQUAL -1)
    string(SUBSTRING "${names_text}" 0 ${list_end} names_text)
  endif()
  string(REGEX MATCHALL "\"[^\"]*\"" quoted "${names_text}")
  set(names "")
  foreach(q IN LISTS quoted)
    string(REPLACE "\"" "" name "${q}")
    list(APPEND names "${name}")
  endforeach()
  if(names STREQUAL "")
    message(FATAL_ERROR "GDN_DISPATCH_TABLE: expected at least one variant in kVariantNames, "
                        "got none in '${header}'")
  endif()
  gdn_check_variant_names("GDN_DISPATCH_TABLE (kVariantNames of ${header})" "${names}")
  set(${out_names} "${names}" PARENT_SCOPE)
endfunction()

function(gdn_select_variants)
  set(kept "")
  set(table_path "")
  set(full_space OFF)
  set(committed_table "${CMAKE_CURRENT_SOURCE_DIR}/tables/gdn_dispatch_table.hpp")
  if(GDN_DISPATCH_TABLE STREQUAL "" AND EXISTS "${committed_table}")
    gdn_read_table_variants("${committed_table}" unused_names)  # fail early if malformed
    set(table_path "${committed_table}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${table_path}")
    message(STATUS "libgdn dispatch table: the committed default ${table_path} (dispatch only; "
                   "variants per GDN_VARIANTS)")
  elseif(GDN_DISPATCH_TABLE STREQUAL "none")
    message(STATUS "libgdn dispatch table: none (GDN_DISPATCH_TABLE=none): the default rule")
  endif()
  if(NOT GDN_DISPATCH_TABLE STREQUAL "" AND NOT GDN_DISPATCH_TABLE STREQUAL "none")
    # A relative path is taken from the build directory (CMake already makes a -D path given
    # on the command line absolute from the working directory).
    get_filename_component(table_path "${GDN_DISPATCH_TABLE}" ABSOLUTE
                           BASE_DIR "${CMAKE_BINARY_DIR}")
    gdn_read_table_variants("${table_path}" kept)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${table_path}")
    set(origin "dispatch table ${table_path}")
    if(NOT GDN_VARIANTS STREQUAL "default")
      message(WARNING "GDN_VARIANTS='${GDN_VARIANTS}' is ignored: "
                      "GDN_DISPATCH_TABLE decides the variants")
    endif()
  elseif(GDN_VARIANTS STREQUAL "default")
    set(origin "GDN_VARIANTS=default: the list in kernels/cuda/registry/registry.cpp")
  elseif(GDN_VARIANTS STREQUAL "all")
    set(origin "GDN_VARIANTS=all: every config of the full space the fused family implements")
    set(full_space ON)
  else()
    string(REPLACE "," ";" listed "${GDN_VARIANTS}")
    foreach(name IN LISTS listed)
      string(STRIP "${name}" name)
      if(NOT name STREQUAL "")
        list(APPEND kept "${name}")
      endif()
    endforeach()
    if(kept STREQUAL "")
      message(FATAL_ERROR "GDN_VARIANTS: expected 'default', 'all' or a comma-separated list of "
                          "variant names, got '${GDN_VARIANTS}'")
    endif()
    gdn_check_variant_names(GDN_VARIANTS "${kept}")
    set(origin "GDN_VARIANTS list")
  endif()
  list(REMOVE_DUPLICATES kept)

  set(fused ON)
  if(NOT kept STREQUAL "")
    set(kept_fused ${kept})
    list(FILTER kept_fused INCLUDE REGEX "^gdn_fwd_sm90_fused_")
    if(kept_fused STREQUAL "")
      set(fused OFF)
    endif()
    string(JOIN ", " shown ${kept})
    message(STATUS "libgdn variants (${origin}): ${shown}; always kept: every staged forward "
                   "(default-rule fallback) and every backward variant")
  else()
    message(STATUS "libgdn variants (${origin})")
  endif()
  if(fused)
    message(STATUS "libgdn fused family: compiled")
  else()
    message(STATUS "libgdn fused family: not compiled (no kept variant is fused)")
  endif()
  set(GDN_KEPT_VARIANTS "${kept}" PARENT_SCOPE)
  set(GDN_COMPILE_FUSED ${fused} PARENT_SCOPE)
  set(GDN_DISPATCH_TABLE_ABSOLUTE "${table_path}" PARENT_SCOPE)
  set(GDN_REGISTER_FULL_SPACE ${full_space} PARENT_SCOPE)
endfunction()
