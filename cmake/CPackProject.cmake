# Read by cpack once per generator (CPACK_PROJECT_CONFIG_FILE, cmake/Package.cmake), before it
# installs the components into its staging tree: what each distribution's package holds, and
# the .deb's maintainer and Debian changelog, which depend on who runs cpack.
if(CPACK_GENERATOR STREQUAL "DEB")
  set(CPACK_COMPONENTS_ALL runtime debian)
  set(_maint "${CPACK_DEBIAN_PACKAGE_MAINTAINER}")
  if(NOT _maint)
    set(_maint "${CPACK_PACKAGE_CONTACT}")
  endif()
  if(NOT _maint AND NOT "$ENV{DEBEMAIL}" STREQUAL "")
    if("$ENV{DEBFULLNAME}" STREQUAL "")
      message(FATAL_ERROR "rdmabench: DEBEMAIL is set but DEBFULLNAME is not: the .deb's "
                          "Maintainer is 'Name <address>' (Debian policy 5.6.2)")
    endif()
    set(_maint "$ENV{DEBFULLNAME} <$ENV{DEBEMAIL}>")
  endif()
  if(NOT _maint)
    message(FATAL_ERROR
      "rdmabench: the .deb needs a maintainer with a working address (Debian policy 5.6.2): "
      "cpack -D CPACK_PACKAGE_CONTACT='Your Name <you@your.site>', or DEBFULLNAME and DEBEMAIL "
      "in the environment, or cmake -DRDMABENCH_PACKAGE_MAINTAINER=... at configure time")
  endif()
  if(NOT _maint MATCHES "^[^<>@]+ <[^<>@ ]+@[^<>@ ]+[.][^<>@ .]+>$" OR _maint MATCHES "@localhost")
    message(FATAL_ERROR "rdmabench: the .deb's maintainer '${_maint}' is not 'Name <address>' "
                        "with a real mail domain (CPACK_PACKAGE_CONTACT, DEBFULLNAME/DEBEMAIL)")
  endif()
  set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${_maint}")

  # Debian policy 12.7: a native package (no Debian revision) ships its changelog in Debian's
  # format as changelog.gz; one entry for this version, pointing to CHANGELOG.md beside it.
  execute_process(COMMAND date -u -R -d "${CPACK_RDMABENCH_RELEASE_DATE} 12:00:00"
                  OUTPUT_VARIABLE _when OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "rdmabench: date -R -d ${CPACK_RDMABENCH_RELEASE_DATE} failed")
  endif()
  get_filename_component(_dir "${CPACK_RDMABENCH_DEBIAN_CHANGELOG}" DIRECTORY)
  string(REGEX REPLACE "[.]gz$" "" _text_file "${CPACK_RDMABENCH_DEBIAN_CHANGELOG}")
  file(MAKE_DIRECTORY "${_dir}")
  file(WRITE "${_text_file}"
       "rdmabench (${CPACK_PACKAGE_VERSION}) unstable; urgency=medium\n\n"
       "  * rdmabench ${CPACK_PACKAGE_VERSION}: the changes are listed in CHANGELOG.md.\n\n"
       " -- ${_maint}  ${_when}\n")
  execute_process(COMMAND gzip -9n -c "${_text_file}" OUTPUT_FILE "${CPACK_RDMABENCH_DEBIAN_CHANGELOG}"
                  RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "rdmabench: gzip -9n ${_text_file} failed")
  endif()
elseif(CPACK_GENERATOR STREQUAL "RPM")
  set(CPACK_COMPONENTS_ALL runtime license)
else() # an archive (TGZ, ...) is a prefix like `cmake --install`'s
  set(CPACK_COMPONENTS_ALL runtime license modulefiles)
endif()
