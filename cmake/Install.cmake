# install() rules (GNUInstallDirs; every DESTINATION relative, so `cmake --install build --prefix P`
# relocates and DESTDIR stages) and the packages CPack builds from them (cmake/Package.cmake).
#
#   bin/rdmabench
#   share/doc/rdmabench/          README.md, CHANGELOG.md, docs/, examples/
#   share/modulefiles/rdmabench/  <version>.lua (Lmod) and <version> (Tcl: Environment Modules;
#                                 Lmod prefers the .lua), both finding the prefix from their own
#                                 place: no absolute path is written into an installed file
#   share/man/man1, share/bash-completion/completions: cmake/Docs.cmake
#
# The binary carries no RPATH into the install tree unless its libraries live outside the
# system's search path (CMAKE_INSTALL_RPATH_USE_LINK_PATH: a Spack or module libfabric).
include(GNUInstallDirs)

set_target_properties(rdmabench PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS rdmabench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)

install(FILES README.md CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT runtime)
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/examples)
  install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT runtime
          USE_SOURCE_PERMISSIONS)
endif()

# Modulefiles: PREFIX/<RDMABENCH_MODULEFILE_DIR>/<version>[.lua]; the templates drop
# RDMABENCH_MODULEFILE_DEPTH trailing path components of their own path to find PREFIX.
set(RDMABENCH_MODULEROOT ${CMAKE_INSTALL_DATADIR}/modulefiles)
set(RDMABENCH_MODULEFILE_DIR ${RDMABENCH_MODULEROOT}/rdmabench)
if(IS_ABSOLUTE "${RDMABENCH_MODULEFILE_DIR}")
  message(FATAL_ERROR "CMAKE_INSTALL_DATADIR must be relative for the relocatable modulefiles")
endif()
string(REGEX MATCHALL "[^/]+" _parts "${RDMABENCH_MODULEFILE_DIR}")
list(LENGTH _parts RDMABENCH_MODULEFILE_DEPTH)
math(EXPR RDMABENCH_MODULEFILE_DEPTH "${RDMABENCH_MODULEFILE_DEPTH} + 1") # the file itself
set(_mf ${CMAKE_CURRENT_BINARY_DIR}/modulefiles/rdmabench)
configure_file(packaging/modulefiles/rdmabench.lua.in ${_mf}/${PROJECT_VERSION}.lua @ONLY)
configure_file(packaging/modulefiles/rdmabench.tcl.in ${_mf}/${PROJECT_VERSION} @ONLY)
install(FILES ${_mf}/${PROJECT_VERSION}.lua ${_mf}/${PROJECT_VERSION}
        DESTINATION ${RDMABENCH_MODULEFILE_DIR} COMPONENT runtime)
