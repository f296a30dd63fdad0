# Helpers that declare test programs and labs, so every course reads the same.

# kuiper::test::BinaryDir() (kuiper/test/test_files.hpp), in one generated file of its own.
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/test_binary_dir.cpp CONTENT [[
#include <string>
namespace kuiper::test {
std::string BinaryDir() { return "@PROJECT_BINARY_DIR@"; }
}  // namespace kuiper::test
]] @ONLY)
add_library(kuiper_test_binary_dir STATIC ${PROJECT_BINARY_DIR}/test_binary_dir.cpp)
# The main of every test program: GoogleTest's, plus the report to a grader
# (kuiper/test/report_main.cpp says what it writes and why).
add_library(kuiper_test_main STATIC ${PROJECT_SOURCE_DIR}/kuiper/test/report_main.cpp)
target_link_libraries(kuiper_test_main PUBLIC GTest::gtest)

# kuiper_add_tests(TARGET t LABEL l PREFIX p TIMEOUT s [ISOLATED [LAB lab]] SOURCES ...)
# One GoogleTest program linked to the engine; its tests are registered with
# ctest under names "<PREFIX><Suite>.<Test>" and the label LABEL.
# ISOLATED: the program links the core alone (kuiper_core) plus the pristine copy
# of every lab file except LAB's (kuiper_link_labs() adds them once every lab is
# declared), so no other lab's code, finished or broken, can change its result.
# Without it, the program links the whole engine (kuiper: every chosen lab file).
function(kuiper_add_tests)
  cmake_parse_arguments(ARG "ISOLATED" "TARGET;LABEL;PREFIX;TIMEOUT;LAB" "SOURCES" ${ARGN})
  add_executable(${ARG_TARGET} ${ARG_SOURCES})
  # A unity build: the program's test files are compiled a few at a time as one file
  # (CMake's unity_N_cxx.cxx), so GoogleTest's and Armadillo's headers and templates are
  # compiled once per batch rather than once per file (about 3x less compile time). Names
  # at namespace scope must therefore differ between the test files of one program.
  set_target_properties(${ARG_TARGET} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  if(ARG_ISOLATED)
    target_link_libraries(${ARG_TARGET} PRIVATE kuiper_core)
    set_property(GLOBAL APPEND PROPERTY KUIPER_ISOLATED_TESTS "${ARG_TARGET}=${ARG_LAB}")
  else()
    target_link_libraries(${ARG_TARGET} PRIVATE kuiper)
  endif()
  target_link_libraries(${ARG_TARGET} PRIVATE GTest::gtest kuiper_test_main
                        kuiper_test_binary_dir)
  # Tests find their data through KUIPER_SOURCE_DIR, never through the working directory;
  # kuiper/test/test_files.hpp says where they write.
  target_compile_definitions(${ARG_TARGET} PRIVATE KUIPER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  target_include_directories(${ARG_TARGET} PRIVATE ${PROJECT_SOURCE_DIR}/kuiper/test)
  if(KUIPER_TEST_PER_PROGRAM)
    # One test "<PREFIX><program>" per program (see KUIPER_TEST_PER_PROGRAM). ctest starts
    # the highest COST first: the programs allowed the longest run, so none is left last.
    add_test(NAME ${ARG_PREFIX}${ARG_TARGET} COMMAND ${ARG_TARGET})
    set_tests_properties(${ARG_PREFIX}${ARG_TARGET} PROPERTIES LABELS "${ARG_LABEL}"
                         TIMEOUT 1200 COST ${ARG_TIMEOUT})
  else()
    gtest_discover_tests(${ARG_TARGET}
      TEST_PREFIX "${ARG_PREFIX}"
      PROPERTIES LABELS "${ARG_LABEL}" TIMEOUT ${ARG_TIMEOUT}
      DISCOVERY_TIMEOUT 60)
  endif()
endfunction()

# Pristine copies of the lab files: for every course*/src file, the newest version
# whose fenced blocks hold only comments and KUIPER_TODO lines (the working tree,
# else its git history, else the copy saved here by an earlier configure), written by
# `tools/labs pristine` into ${KUIPER_PRISTINE_DIR}/<lab>/src/. Refreshed at every
# configure and by `tools/labs grade`; a file is rewritten only when its text changes.
set(KUIPER_PRISTINE_DIR ${PROJECT_BINARY_DIR}/pristine)
find_program(KUIPER_PYTHON NAMES python3 REQUIRED)
execute_process(
  COMMAND ${KUIPER_PYTHON} ${PROJECT_SOURCE_DIR}/tools/labs pristine --out ${KUIPER_PRISTINE_DIR}
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} RESULT_VARIABLE pristine_status
  ERROR_VARIABLE pristine_error)
if(NOT pristine_status EQUAL 0)
  message(FATAL_ERROR "Cannot make the pristine copies of the lab files:\n${pristine_error}")
endif()

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
# - the chosen student sources (see kuiper_lab_file) are compiled once, as the object
#   library `courseN_name_objects`, which goes into the whole engine `kuiper` and into
#   the lab's own test program; their pristine copies become `courseN_name_pristine`,
#   which the OTHER labs' test programs and the core tests link instead;
# - the tests become the program `courseN_name`, labelled `courseN`, with test
#   names prefixed `courseN.` so `ctest -L courseN` and `ctest -R courseN`
#   both select exactly this lab. It links the core, this lab's files and the other
#   labs' pristine copies: a lab that does not compile breaks only its own program;
# - with KUIPER_STRETCH=ON, the optional stretch tasks: their sources (skeleton
#   or solution, like the lab's) and tests become the program
#   `courseN_name_stretch`, labelled `courseN_stretch`, test names prefixed
#   `courseN_stretch.`, linked like the lab's program. They are not part of the
#   lab's grade, and the student preset leaves them out so that `ctest -R courseN`
#   means the lab alone.
function(kuiper_lab)
  cmake_parse_arguments(ARG "" "NUMBER;TIMEOUT" "STUDENT_SOURCES;TESTS;STRETCH_SOURCES;STRETCH_TESTS"
                        ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 60)
  endif()
  get_filename_component(lab ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  set(chosen_sources "")
  set(pristine_sources "")
  foreach(file IN LISTS ARG_STUDENT_SOURCES)
    kuiper_lab_file(LAB ${lab} FILE ${file} OUT chosen)
    list(APPEND chosen_sources ${chosen})
    set(pristine ${KUIPER_PRISTINE_DIR}/${lab}/${file})
    if(NOT EXISTS ${pristine})
      message(FATAL_ERROR "${lab}: no pristine copy ${pristine} (is ${file} under ${lab}/src?)")
    endif()
    list(APPEND pristine_sources ${pristine})
  endforeach()
  foreach(kind IN ITEMS objects pristine)
    if(kind STREQUAL "objects")
      add_library(${lab}_${kind} OBJECT ${chosen_sources})
    else()
      add_library(${lab}_${kind} OBJECT ${pristine_sources})
    endif()
    set_target_properties(${lab}_${kind} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_link_libraries(${lab}_${kind} PUBLIC kuiper_core_objects)
    target_compile_options(${lab}_${kind} PRIVATE ${KUIPER_ENGINE_OPTIONS})
  endforeach()
  # A stub's unused parameters are expected: the student sees those warnings in their own file.
  target_compile_options(${lab}_pristine PRIVATE -w)
  target_link_libraries(kuiper PRIVATE ${lab}_objects)
  # Full debug information (-g) where a student debugs: their lab files and the lab's tests.
  # The rest of the engine builds with the presets' -g1 (line tables only: backtraces and
  # gdb still name file and line), which compiles about a third faster.
  target_compile_options(${lab}_objects PRIVATE -g)
  set_property(GLOBAL APPEND PROPERTY KUIPER_LAB_NAMES ${lab})
  set_property(GLOBAL PROPERTY KUIPER_LAB_${lab}
               "{\"number\": ${ARG_NUMBER}, \"dir\": \"${lab}\", \"target\": \"${lab}\", \"label\": \"course${ARG_NUMBER}\", \"sources\": [\"${ARG_STUDENT_SOURCES}\"]}")

  kuiper_add_tests(TARGET ${lab} LABEL course${ARG_NUMBER} PREFIX "course${ARG_NUMBER}."
                   TIMEOUT ${ARG_TIMEOUT} ISOLATED LAB ${lab} SOURCES ${ARG_TESTS})
  target_link_libraries(${lab} PRIVATE ${lab}_objects)
  target_compile_options(${lab} PRIVATE -g)
  if(KUIPER_STRETCH AND ARG_STRETCH_TESTS)
    set(stretch_sources ${ARG_STRETCH_TESTS})
    foreach(file IN LISTS ARG_STRETCH_SOURCES)
      kuiper_lab_file(LAB ${lab} FILE ${file} OUT chosen)
      list(APPEND stretch_sources ${chosen})
    endforeach()
    kuiper_add_tests(TARGET ${lab}_stretch LABEL course${ARG_NUMBER}_stretch
                     PREFIX "course${ARG_NUMBER}_stretch." TIMEOUT ${ARG_TIMEOUT}
                     ISOLATED LAB ${lab} SOURCES ${stretch_sources})
    target_link_libraries(${lab}_stretch PRIVATE ${lab}_objects)
    target_compile_options(${lab}_stretch PRIVATE -g)
  endif()
  # Hidden tests (instructor tree only, never in the student release): every *.cpp of
  # grading/hidden/<lab>/ becomes the program `<lab>_hidden`, labelled
  # `courseN_hidden`, test names prefixed `courseN_hidden.`, linked like the lab's program.
  set(hidden_dir ${PROJECT_SOURCE_DIR}/grading/hidden/${lab})
  if(KUIPER_HIDDEN AND EXISTS ${hidden_dir})
    file(GLOB hidden_tests CONFIGURE_DEPENDS ${hidden_dir}/*.cpp)
    if(hidden_tests)
      kuiper_add_tests(TARGET ${lab}_hidden LABEL course${ARG_NUMBER}_hidden
                       PREFIX "course${ARG_NUMBER}_hidden." TIMEOUT ${ARG_TIMEOUT}
                       ISOLATED LAB ${lab} SOURCES ${hidden_tests})
      target_link_libraries(${lab}_hidden PRIVATE ${lab}_objects)
      target_include_directories(${lab}_hidden PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/test)
    endif()
  endif()
endfunction()

# kuiper_link_labs(): called once every lab is declared. Links each ISOLATED test
# program with the pristine objects of every lab but its own, and writes
# labs.json into the build directory (the labs, their labels, targets and
# sources) for tools/labs.
function(kuiper_link_labs)
  get_property(labs GLOBAL PROPERTY KUIPER_LAB_NAMES)
  get_property(programs GLOBAL PROPERTY KUIPER_ISOLATED_TESTS)
  foreach(entry IN LISTS programs)
    string(REPLACE "=" ";" entry "${entry}")
    list(GET entry 0 program)
    list(LENGTH entry length)
    set(own "")
    if(length GREATER 1)
      list(GET entry 1 own)
    endif()
    foreach(lab IN LISTS labs)
      if(NOT lab STREQUAL own)
        target_link_libraries(${program} PRIVATE ${lab}_pristine)
      endif()
    endforeach()
  endforeach()
  set(json "")
  foreach(lab IN LISTS labs)
    get_property(entry GLOBAL PROPERTY KUIPER_LAB_${lab})
    string(REPLACE ";" "\", \"" entry "${entry}")
    list(APPEND json "  ${entry}")
  endforeach()
  string(REPLACE ";" ",\n" json "${json}")
  file(WRITE ${PROJECT_BINARY_DIR}/labs.json "[\n${json}\n]\n")
endfunction()
