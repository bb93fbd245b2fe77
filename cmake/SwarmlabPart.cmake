# swarmlab_part(<part> [SEES <part>...] [LINK <target>...] [EXCLUDE <subfolder>...])
#
# Builds the static library `swarmlab_<part>` from every .cc file under the part's folder and
# enforces the architecture: the library's include root is a folder in the build tree that holds
# links to its own part and to the parts it SEES, and nothing else. `#include "sim/x.h"` from a part
# that does not see `sim` therefore fails to compile. A check run before every build of the part
# also rejects includes that would bypass the include root (`../`) and, for the core, headers that
# read clocks, open sockets or pull in ns-3 or libtorch (README.md, "The environment seam", explains why).
set(SWARMLAB_CHECK_INCLUDES ${CMAKE_CURRENT_LIST_DIR}/check_includes.cmake)

function(swarmlab_part part)
  cmake_parse_arguments(P "" "" "SEES;LINK;EXCLUDE" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${part}/*.cc)
  # Subfolders built as libraries of their own (e.g. sim/network/ns3, compiled as C++17).
  foreach(sub ${P_EXCLUDE})
    list(FILTER sources EXCLUDE REGEX "^${CMAKE_SOURCE_DIR}/${part}/${sub}/")
  endforeach()
  set(lib swarmlab_${part})
  if(sources)
    add_library(${lib} STATIC ${sources})
    set(scope PUBLIC)
  else()
    add_library(${lib} INTERFACE)  # headers only, so far
    set(scope INTERFACE)
  endif()

  set(root ${CMAKE_BINARY_DIR}/include_roots/${part})
  file(REMOVE_RECURSE ${root})
  file(MAKE_DIRECTORY ${root})
  foreach(seen ${part} ${P_SEES})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${seen} ${root}/${seen} SYMBOLIC)
  endforeach()
  target_include_directories(${lib} ${scope} ${root})
  target_link_libraries(${lib} ${scope} ${P_LINK})
  if(sources)
    target_compile_options(${lib} PRIVATE -Wall -Wextra -Wpedantic)
  endif()

  add_custom_target(${lib}_boundary
    COMMAND ${CMAKE_COMMAND} -DPART=${part} "-DSEES=${P_SEES}" -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
            -P ${SWARMLAB_CHECK_INCLUDES}
    COMMENT "Checking the include boundary of ${part}" VERBATIM)
  add_dependencies(${lib} ${lib}_boundary)
endfunction()
