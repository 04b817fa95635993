# afc's CMake package: find_package(afc) gives
#   AFC_EXECUTABLE        the afc compiler of this install
#   afc::runtime          the runtime library and afc.h (static; links OpenMP's
#                         libgomp, -lm and threads)
#   afc_add_library(NAME SOURCE [OPTIONS flag…])
#       compiles SOURCE (.acc) with afc at build time into a static library
#       target NAME and a header NAME.h (include it as "NAME.h"); linking
#       NAME brings afc::runtime and the header's folder. OPTIONS are passed
#       to afc (e.g. -O3 --fast-math); default -O2.
# The install tree is relocatable: every path is found from this file's.
cmake_minimum_required(VERSION 3.16)
get_filename_component(_afc_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

set(AFC_EXECUTABLE "${_afc_prefix}/bin/afc" CACHE FILEPATH "The afc compiler")
set(afc_INCLUDE_DIRS "${_afc_prefix}/include")

include(CMakeFindDependencyMacro)
find_dependency(Threads)

if(NOT TARGET afc::runtime)
  add_library(afc::runtime STATIC IMPORTED)
  set_target_properties(afc::runtime PROPERTIES
    IMPORTED_LOCATION "${_afc_prefix}/lib/libafcrt.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_afc_prefix}/include"
    INTERFACE_LINK_LIBRARIES "gomp;m;Threads::Threads")
endif()

function(afc_add_library name source)
  cmake_parse_arguments(PARSE_ARGV 2 AFC "" "" "OPTIONS")
  if(AFC_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "afc_add_library(${name}): unknown arguments ${AFC_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT AFC_OPTIONS)
    set(AFC_OPTIONS -O2)
  endif()
  get_filename_component(src "${source}" ABSOLUTE)
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/afc/${name}")
  set(obj "${dir}/${name}.o")
  set(hdr "${dir}/${name}.h")
  add_custom_command(
    OUTPUT "${obj}" "${hdr}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${dir}"
    COMMAND "${AFC_EXECUTABLE}" "${src}" ${AFC_OPTIONS} -o "${obj}"
    COMMAND "${AFC_EXECUTABLE}" "${src}" --emit=header -o "${hdr}"
    DEPENDS "${src}" "${AFC_EXECUTABLE}"
    COMMENT "afc ${source}"
    VERBATIM)
  add_library(${name} STATIC "${obj}" "${hdr}")
  set_source_files_properties("${obj}" PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  set_target_properties(${name} PROPERTIES LINKER_LANGUAGE C)
  target_include_directories(${name} INTERFACE "${dir}")
  target_link_libraries(${name} INTERFACE afc::runtime)
endfunction()
