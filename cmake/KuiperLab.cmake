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

# kuiper_lab_file(LAB lab FILE src/a.cpp OUT var): the lab file that this build
# compiles, from the course directory or, with KUIPER_SOLUTIONS=ON, from
# solutions/<lab>/ at the same path.
function(kuiper_lab_file)
  cmake_parse_arguments(ARG "" "LAB;FILE;OUT" "" ${ARGN})
  if(KUIPER_SOLUTIONS)
    set(chosen ${PROJECT_SOURCE_DIR}/solutions/${ARG_LAB}/${ARG_FILE})
  else()
    set(chosen ${PROJECT_SOURCE_DIR}/${ARG_LAB}/${ARG_FILE})
  endif()
  if(NOT EXISTS ${chosen})
    message(FATAL_ERROR "${ARG_LAB}: lab file ${chosen} does not exist")
  endif()
  set(${ARG_OUT} ${chosen} PARENT_SCOPE)
endfunction()

# kuiper_lab(NUMBER n STUDENT_SOURCES src/a.cpp ... TESTS test/a.cpp ... [TIMEOUT s]
#            [STRETCH_SOURCES src/stretch_a.cpp ... STRETCH_TESTS test/stretch_a.cpp ...])
# Declares the lab in the calling directory (courseN_name):
# - each student source is compiled into the engine (see kuiper_lab_file);
# - the tests become the program `courseN_name`, labelled `courseN`, with test
#   names prefixed `courseN.` so `ctest -L courseN` and `ctest -R courseN`
#   both select exactly this lab;
# - with KUIPER_STRETCH=ON, the optional stretch tasks: their sources (skeleton
#   or solution, like the lab's) and tests become the program
#   `courseN_name_stretch`, labelled `courseN_stretch`, test names prefixed
#   `courseN_stretch.`. They are not part of the lab's grade, and the student
#   preset leaves them out so that `ctest -R courseN` means the lab alone.
function(kuiper_lab)
  cmake_parse_arguments(ARG "" "NUMBER;TIMEOUT" "STUDENT_SOURCES;TESTS;STRETCH_SOURCES;STRETCH_TESTS"
                        ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 60)
  endif()
  get_filename_component(lab ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  foreach(file IN LISTS ARG_STUDENT_SOURCES)
    kuiper_lab_file(LAB ${lab} FILE ${file} OUT chosen)
    target_sources(kuiper PRIVATE ${chosen})
  endforeach()
  kuiper_add_tests(TARGET ${lab} LABEL course${ARG_NUMBER} PREFIX "course${ARG_NUMBER}."
                   TIMEOUT ${ARG_TIMEOUT} SOURCES ${ARG_TESTS})
  if(KUIPER_STRETCH AND ARG_STRETCH_TESTS)
    set(stretch_sources ${ARG_STRETCH_TESTS})
    foreach(file IN LISTS ARG_STRETCH_SOURCES)
      kuiper_lab_file(LAB ${lab} FILE ${file} OUT chosen)
      list(APPEND stretch_sources ${chosen})
    endforeach()
    kuiper_add_tests(TARGET ${lab}_stretch LABEL course${ARG_NUMBER}_stretch
                     PREFIX "course${ARG_NUMBER}_stretch." TIMEOUT ${ARG_TIMEOUT}
                     SOURCES ${stretch_sources})
  endif()
endfunction()
