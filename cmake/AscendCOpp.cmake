# Building Ascend C custom-operator projects into packages with CMake
# (docs/ascendc.md, "Building a package with CMake").
#
# OpenCANN's build configures this file into its build folder twice, as
# cmake/AscendCOpp.cmake (for include()) and cmake/AscendCOppConfig.cmake (for
# find_package(AscendCOpp CONFIG) with CMAKE_PREFIX_PATH or HINTS naming the
# build folder). It defines
#
#   ascendc_add_operator_package(<target>
#       [SOURCE_DIR <dir>]    the project: op_host/*.cpp, op_kernel/*.cpp (default: the current source folder)
#       [VENDOR <name>]       the package's vendor folder (default: customize)
#       [VERSION <v>]         written to version.info (default: 1.0)
#       [OUTPUT <dir>]        where vendors/<vendor>/ goes (default: <current binary folder>/opp)
#       [EXCLUDE_FROM_ALL])   build it only when <target> is asked for
#
# a custom target that runs ascendc-opp-build on the project whenever one of its
# sources changes. The target's properties ASCENDC_PACKAGE_DIR,
# ASCENDC_INCLUDE_DIR and ASCENDC_LIBRARY (and the variables
# <target>_PACKAGE_DIR, <target>_INCLUDE_DIR, <target>_LIBRARY) say where the
# package, its aclnn headers and libcust_opapi.so are. ASCENDC_OPP_BUILD and
# ASCENDC_CXX name the tools (ascendc-opp-build, ascendc++).
include_guard(GLOBAL)

# The OpenCANN build folder: written in when configured, else OPENCANN_ROOT.
set(_ascendc_root "@OC_LIB_DIR@")
if(_ascendc_root MATCHES "^@")
  set(_ascendc_root "")
endif()
if(OPENCANN_ROOT AND EXISTS "${OPENCANN_ROOT}/ascendc-opp-build")
  set(_ascendc_root "${OPENCANN_ROOT}")
endif()
if(NOT ASCENDC_OPP_BUILD)
  if(NOT _ascendc_root OR NOT EXISTS "${_ascendc_root}/ascendc-opp-build")
    message(FATAL_ERROR "AscendCOpp: ascendc-opp-build not found; set OPENCANN_ROOT to OpenCANN's build folder "
                        "(the one with ascendc-opp-build and ascendc++)")
  endif()
  set(ASCENDC_OPP_BUILD "${_ascendc_root}/ascendc-opp-build" CACHE FILEPATH "OpenCANN's ascendc-opp-build")
endif()
if(NOT ASCENDC_CXX)
  get_filename_component(_ascendc_tools "${ASCENDC_OPP_BUILD}" DIRECTORY)
  set(ASCENDC_CXX "${_ascendc_tools}/ascendc++" CACHE FILEPATH "OpenCANN's ascendc++ compiler driver")
endif()

function(ascendc_add_operator_package target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "EXCLUDE_FROM_ALL" "SOURCE_DIR;VENDOR;VERSION;OUTPUT" "")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ascendc_add_operator_package(${target}): unknown arguments ${arg_UNPARSED_ARGUMENTS} "
                        "(it takes SOURCE_DIR, VENDOR, VERSION, OUTPUT, EXCLUDE_FROM_ALL)")
  endif()
  if(NOT arg_SOURCE_DIR)
    set(arg_SOURCE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  endif()
  get_filename_component(arg_SOURCE_DIR "${arg_SOURCE_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT arg_VENDOR)
    set(arg_VENDOR customize)
  endif()
  if(NOT arg_VERSION)
    set(arg_VERSION 1.0)
  endif()
  if(NOT arg_OUTPUT)
    set(arg_OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/opp")
  endif()
  get_filename_component(arg_OUTPUT "${arg_OUTPUT}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")

  file(GLOB host_sources CONFIGURE_DEPENDS "${arg_SOURCE_DIR}/op_host/*.cpp" "${arg_SOURCE_DIR}/op_host/*.h")
  file(GLOB kernel_sources CONFIGURE_DEPENDS "${arg_SOURCE_DIR}/op_kernel/*.cpp" "${arg_SOURCE_DIR}/op_kernel/*.h")
  if(NOT host_sources OR NOT kernel_sources)
    message(FATAL_ERROR "ascendc_add_operator_package(${target}): ${arg_SOURCE_DIR} needs op_host/*.cpp and "
                        "op_kernel/*.cpp (a custom-operator project, e.g. one msopgen generated)")
  endif()

  set(package "${arg_OUTPUT}/vendors/${arg_VENDOR}")
  set(library "${package}/op_api/lib/libcust_opapi.so")
  add_custom_command(
    OUTPUT "${library}" "${package}/version.info"
    COMMAND "${ASCENDC_OPP_BUILD}" "${arg_SOURCE_DIR}" --out "${arg_OUTPUT}" --vendor "${arg_VENDOR}"
            --version "${arg_VERSION}"
    DEPENDS ${host_sources} ${kernel_sources} "${ASCENDC_OPP_BUILD}"
    COMMENT "Building the operator package ${arg_VENDOR} from ${arg_SOURCE_DIR}"
    VERBATIM)
  if(arg_EXCLUDE_FROM_ALL)
    add_custom_target(${target} DEPENDS "${library}")
  else()
    add_custom_target(${target} ALL DEPENDS "${library}")
  endif()
  set_target_properties(${target} PROPERTIES
    ASCENDC_PACKAGE_DIR "${package}"
    ASCENDC_INCLUDE_DIR "${package}/op_api/include"
    ASCENDC_LIBRARY "${library}")
  set(${target}_PACKAGE_DIR "${package}" PARENT_SCOPE)
  set(${target}_INCLUDE_DIR "${package}/op_api/include" PARENT_SCOPE)
  set(${target}_LIBRARY "${library}" PARENT_SCOPE)
endfunction()
