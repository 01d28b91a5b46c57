# Writes OUT = a header defining GDN_GIT_SHA, the commit the build is made from, read at every
# build (not at configure: a build tree configured at one commit is rebuilt at later ones), with
# "-dirty" when tracked files differ from it. The file is rewritten only when the value changes,
# so an unchanged commit rebuilds nothing.
#   cmake -DGDN_ROOT=<source root> -DOUT=<header> -P write_git_sha.cmake
execute_process(COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY ${GDN_ROOT} OUTPUT_VARIABLE sha
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR sha STREQUAL "")
  set(sha "unknown")
else()
  execute_process(COMMAND git status --porcelain --untracked-files=no
    WORKING_DIRECTORY ${GDN_ROOT} OUTPUT_VARIABLE changes ERROR_QUIET)
  if(NOT changes STREQUAL "")
    string(APPEND sha "-dirty")
  endif()
endif()
file(WRITE "${OUT}.tmp" "// Generated at build time by tuner/write_git_sha.cmake.\n#define GDN_GIT_SHA \"${sha}\"\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
