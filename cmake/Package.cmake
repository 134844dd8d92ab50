# .deb and .rpm through CPack, from the install() rules of cmake/Install.cmake (and Docs.cmake):
#
#   cmake -S . -B build-pkg -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
#         -DRDMABENCH_BUILD_TESTS=OFF
#   cmake --build build-pkg --target rdmabench
#   (cd build-pkg && DEBFULLNAME='Your Name' DEBEMAIL=you@your.site cpack -G "DEB;RPM")
#
# Runtime dependencies are computed from the binary, never typed here: dpkg-shlibdeps for the
# .deb (package dpkg-dev, which also needs `file`; without it CPack silently drops them, so
# tests/system/test_install.sh checks the Depends line), rpm's own dependency generator
# (AutoReq) for the .rpm. An .rpm built on Debian names Debian's sonames and glibc symbol
# versions: build the one for RHEL/Rocky on a RHEL-family machine (docs: README "Install on a
# cluster").
set(CPACK_PACKAGE_NAME rdmabench)
set(CPACK_PACKAGE_VENDOR "rdmabench")
# The .deb's Maintainer (Debian policy 5.6.2: a name and a working address; a made-up one fails
# lintian). Nobody's by default: the one who builds the package names themselves, here, with
# `cpack -D CPACK_PACKAGE_CONTACT=...`, or with DEBFULLNAME/DEBEMAIL as for dch. Without one the
# .deb is refused with that advice (cmake/CPackProject.cmake); the .rpm needs none.
set(RDMABENCH_PACKAGE_MAINTAINER "" CACHE STRING
    "Maintainer of the .deb, 'Name <address>' (default: $DEBFULLNAME <$DEBEMAIL> when cpack runs)")
set(CPACK_PACKAGE_CONTACT "${RDMABENCH_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
# Lines under 80 columns (Debian policy 3.4.1; lintian: extended-description-line-too-long).
set(CPACK_PACKAGE_DESCRIPTION
    "rdmabench measures latency, bandwidth, message rate and collectives\n"
    "(barrier, allreduce, ring, all-pairs fabric maps, congestion impact) over\n"
    "libibverbs RC queue pairs, libfabric providers and TCP sockets, without\n"
    "MPI, and lines its results up with OSU, IMB and perftest.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_RESOURCE_FILE_README ${CMAKE_CURRENT_SOURCE_DIR}/README.md)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR "DEB;RPM" CACHE STRING "Package generators for `cpack` without -G")
# Packages are built from a /usr prefix (docs above); `cmake --install --prefix` relocates anyway.
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
# The packages hold the components the distribution wants (per generator in
# cmake/CPackProject.cmake: no modulefiles; Debian's copyright and changelog, or the LICENSE),
# as one package each (cmake/Install.cmake lists the components).
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_RPM_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_LIST_DIR}/CPackProject.cmake)
# Read there: the Debian changelog's place and the release date (CHANGELOG.md's "## [VERSION] -
# DATE", else the day of the configure: a build of an unreleased version).
set(CPACK_RDMABENCH_DEBIAN_CHANGELOG ${RDMABENCH_DEBIAN_CHANGELOG})
file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/CHANGELOG.md _released
     REGEX "^## \\[${PROJECT_VERSION}\\] - [0-9]+-[0-9]+-[0-9]+")
if(_released MATCHES "([0-9]+-[0-9]+-[0-9]+)")
  set(CPACK_RDMABENCH_RELEASE_DATE ${CMAKE_MATCH_1})
else()
  string(TIMESTAMP CPACK_RDMABENCH_RELEASE_DATE "%Y-%m-%d" UTC)
endif()

# Debian 12
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libfabric is opened with dlopen (cmake/Backends.cmake): neither dpkg-shlibdeps nor rpm's
# AutoReq sees it, so it is named here.
if(RDMABENCH_OFI_DLOPEN)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libfabric1")
  set(CPACK_RPM_PACKAGE_REQUIRES "libfabric.so.1()(64bit)")
endif()
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
# bash-completion and gnuplot (`rdmabench plot`) are suggestions, never dependencies (no
# modulefile in the package: nothing for lmod to read).
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion, gnuplot-nox")

# RPM (rpmbuild from Debian's `rpm` package works; RHEL-family build hosts for real RPMs)
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_LICENSE "MIT") # LICENSE; SPDX identifier, as Fedora's License: tags
set(CPACK_RPM_PACKAGE_GROUP "Applications/System")
set(CPACK_RPM_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_RPM_PACKAGE_AUTOREQ ON)
set(CPACK_RPM_PACKAGE_AUTOPROV OFF) # a program, it provides no library
# Not relocatable: CPack's default (CPACK_PACKAGE_RELOCATABLE true) made the .rpm relocatable
# (`Relocations: /usr`), which `rpm --prefix` would honour and break /usr/share/man and the
# completion's place. The prefix install (README) is the relocatable one.
set(CPACK_PACKAGE_RELOCATABLE OFF)
set(CPACK_RPM_PACKAGE_RELOCATABLE OFF)
# Directories owned by the filesystem / man / bash-completion / environment-modules packages,
# which the .rpm must not claim (packaging.md, "tried").
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
    /usr/share/man /usr/share/man/man1 /usr/share/bash-completion
    /usr/share/bash-completion/completions /usr/lib/.build-id /usr/share/modulefiles
    /usr/share/doc)
# No debuginfo sub-package and no /usr/lib/.build-id links from Debian's rpmbuild.
set(CPACK_RPM_SPEC_MORE_DEFINE "%define _build_id_links none")

include(CPack)
