# install() rules (GNUInstallDirs; every DESTINATION relative, so `cmake --install build --prefix P`
# relocates and DESTDIR stages) and the packages CPack builds from them (cmake/Package.cmake).
#
#   bin/rdmabench
#   share/doc/rdmabench/          README.md, CHANGELOG.md, docs/, examples/
#   share/doc/rdmabench/LICENSE
#   share/modulefiles/rdmabench/  <version>.lua (Lmod) and <version> (Tcl: Environment Modules;
#                                 Lmod prefers the .lua), both finding the prefix from their own
#                                 place: no absolute path is written into an installed file
#   share/man/man1, share/bash-completion/completions: cmake/Docs.cmake
#
# Components (`cmake --install build --component NAME`; without --component: all but debian):
#   runtime      the program, its man page and completion, the docs and examples
#   license      LICENSE (the .rpm's %license; Debian wants it as copyright instead)
#   modulefiles  for a prefix of its own (`module use PREFIX/share/modulefiles`); the system
#                packages leave them out: /usr/bin is on PATH already, Debian's Lmod does not
#                look in /usr/share/modulefiles, and loading one would move /usr/bin ahead of the
#                site's modules (issue #35)
#   debian       /usr/share/doc/rdmabench/copyright and changelog.gz, for the .deb only
#                (cmake/Package.cmake, cmake/CPackProject.cmake)
#
# The binary carries no RPATH into the install tree unless its libraries live outside the
# system's search path (CMAKE_INSTALL_RPATH_USE_LINK_PATH: a Spack or module libfabric).
include(GNUInstallDirs)

set_target_properties(rdmabench PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS rdmabench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)

install(FILES README.md CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT license)
# Debian policy 12.5 / 12.7: the copyright file, and the Debian changelog that cpack writes just
# before it packages (cmake/CPackProject.cmake: the maintainer is known only then).
set(RDMABENCH_DEBIAN_CHANGELOG ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog.gz)
install(FILES packaging/debian/copyright ${RDMABENCH_DEBIAN_CHANGELOG}
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT debian EXCLUDE_FROM_ALL)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT runtime)
# Modes as a distribution wants them (0755 directories and scripts, 0644 the rest: lintian's
# non-standard-*-perm), whatever the umask of the checkout (002 made them 0775 and 0664).
set(CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
    GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/examples)
  install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT runtime
          FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
          DIRECTORY_PERMISSIONS ${CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS}
          PATTERN "*.sbatch" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                                         GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
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
        DESTINATION ${RDMABENCH_MODULEFILE_DIR} COMPONENT modulefiles)
