# .deb and .rpm through CPack, from the install() rules of cmake/Install.cmake (and Docs.cmake):
#
#   cmake -S . -B build-pkg -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
#         -DRDMABENCH_BUILD_TESTS=OFF
#   cmake --build build-pkg --target rdmabench && (cd build-pkg && cpack -G "DEB;RPM")
#
# Runtime dependencies are computed from the binary, never typed here: dpkg-shlibdeps for the
# .deb (package dpkg-dev, which also needs `file`; without it CPack silently drops them, so
# tests/system/test_install.sh checks the Depends line), rpm's own dependency generator
# (AutoReq) for the .rpm. An .rpm built on Debian names Debian's sonames and glibc symbol
# versions: build the one for RHEL/Rocky on a RHEL-family machine (docs: README "Install on a
# cluster").
set(CPACK_PACKAGE_NAME rdmabench)
set(CPACK_PACKAGE_VENDOR "rdmabench")
set(CPACK_PACKAGE_CONTACT "rdmabench maintainers <rdmabench@localhost>"
    CACHE STRING "Maintainer of the .deb / packager of the .rpm")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
    "rdmabench measures latency, bandwidth, message rate and collectives (barrier, allreduce,\n"
    "ring, all-pairs fabric maps, congestion impact) over libibverbs RC queue pairs, libfabric\n"
    "providers and TCP sockets, without MPI, and lines its results up with OSU, IMB and perftest.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_RESOURCE_FILE_README ${CMAKE_CURRENT_SOURCE_DIR}/README.md)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR "DEB;RPM" CACHE STRING "Package generators for `cpack` without -G")
# Packages are built from a /usr prefix (docs above); `cmake --install --prefix` relocates anyway.
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")

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
# man-db / bash-completion / lmod are suggestions, never dependencies.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion, lmod | environment-modules, gnuplot-nox")

# RPM (rpmbuild from Debian's `rpm` package works; RHEL-family build hosts for real RPMs)
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_LICENSE "unknown" CACHE STRING "License tag of the .rpm")
set(CPACK_RPM_PACKAGE_GROUP "Applications/System")
set(CPACK_RPM_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_RPM_PACKAGE_AUTOREQ ON)
set(CPACK_RPM_PACKAGE_AUTOPROV OFF) # a program, it provides no library
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
