# Helpers that declare test programs and labs, so every course reads the same.

# kuiper_add_tests(TARGET t LABEL l PREFIX p TIMEOUT s SOURCES ...)
# One GoogleTest program linked to the engine; its tests are registered with
# ctest under names "<PREFIX><Suite>.<Test>" and the label LABEL.
function(kuiper_add_tests)
  cmake_parse_arguments(ARG "" "TARGET;LABEL;PREFIX;TIMEOUT" "SOURCES" ${ARGN})
  add_executable(${ARG_TARGET} ${ARG_SOURCES})
  target_link_libraries(${ARG_TARGET} PRIVATE kuiper GTest::gtest GTest::gtest_main)
  # Tests find their data through these paths, never through the working directory.
  target_compile_definitions(${ARG_TARGET} PRIVATE
    KUIPER_SOURCE_DIR="${PROJECT_SOURCE_DIR}" KUIPER_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${ARG_TARGET}
    TEST_PREFIX "${ARG_PREFIX}"
    PROPERTIES LABELS "${ARG_LABEL}" TIMEOUT ${ARG_TIMEOUT}
    DISCOVERY_TIMEOUT 60)
endfunction()

# kuiper_lab(NUMBER n STUDENT_SOURCES src/a.cpp ... TESTS test/a.cpp ... [TIMEOUT s])
# Declares the lab in the calling directory (courseN_name):
# - each student source is compiled into the engine, from this directory or,
#   with KUIPER_SOLUTIONS=ON, from solutions/courseN_name/ at the same path;
# - the tests become the program `courseN_name`, labelled `courseN`, with test
#   names prefixed `courseN.` so `ctest -L courseN` and `ctest -R courseN`
#   both select exactly this lab.
function(kuiper_lab)
  cmake_parse_arguments(ARG "" "NUMBER;TIMEOUT" "STUDENT_SOURCES;TESTS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 60)
  endif()
  get_filename_component(lab ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  foreach(file IN LISTS ARG_STUDENT_SOURCES)
    if(KUIPER_SOLUTIONS)
      set(chosen ${PROJECT_SOURCE_DIR}/solutions/${lab}/${file})
    else()
      set(chosen ${CMAKE_CURRENT_SOURCE_DIR}/${file})
    endif()
    if(NOT EXISTS ${chosen})
      message(FATAL_ERROR "${lab}: lab file ${chosen} does not exist")
    endif()
    target_sources(kuiper PRIVATE ${chosen})
  endforeach()
  kuiper_add_tests(TARGET ${lab} LABEL course${ARG_NUMBER} PREFIX "course${ARG_NUMBER}."
                   TIMEOUT ${ARG_TIMEOUT} SOURCES ${ARG_TESTS})
endfunction()
