# Issue 27 items 1 and 7 (docs/architecture.md, "GPU sharing: a layer above the core"): the
# whole-GPU core does not know GPU sharing. The compiler refuses the wrong direction (the
# core's include root has no sharing/: the probe `core_sharing` of layering.includes); this
# grep keeps what the compiler cannot see. Fails when a core file under SRC includes a header
# of the sharing layer (any spelling: sharing/..., src/sharing..., src/layered...) or names
# `Sharing` or a `sharing_` member; when a file of the layer is back under SRC; and when any
# file of SRC or SHARING (SRC/../sharing) has the re-entry flag or the back-pointer
# (`in_core_`, `core_->`). The core: every SRC/*.h and *.cc except scheduler.cc (the façade,
# which forwards to the layer) and its journal (journal_*: it records and replays the
# façade's calls on the layer); both are compiled in the `facade` module, which sees the
# layer. (share_choice.h, the stranded rule, is the core's: the saved state's format,
# persistence_json.h, uses it; it includes nothing of the layer.)
get_filename_component(SHARING ${SRC}/../sharing ABSOLUTE)
file(GLOB core_files ${SRC}/*.h ${SRC}/*.cc)
file(GLOB layer_files ${SHARING}/*.h ${SHARING}/*.cc)
if(NOT layer_files)
  message(FATAL_ERROR "no sharing layer at ${SHARING}")
endif()
set(problems "")
foreach(f ${core_files} ${layer_files})
  get_filename_component(name ${f} NAME)
  file(READ ${f} text)
  if(text MATCHES "in_core_|core_->")
    list(APPEND problems "${name}: re-entry flag or back-pointer (in_core_ / core_->)")
  endif()
endforeach()
# Sharing reaches the core only through the narrow interface's type (src/core_for_layer.h):
# no file of the component (sharing.h, sharing_*.cc) holds or takes a SchedulerImpl.
foreach(f ${layer_files})
  get_filename_component(name ${f} NAME)
  if(NOT name MATCHES "^sharing")
    continue()
  endif()
  file(READ ${f} text)
  if(text MATCHES "SchedulerImpl[ ]*[*&]")
    list(APPEND problems "${name}: Sharing holds the core itself (use WholeGpuCore)")
  endif()
endforeach()
foreach(f ${core_files})
  get_filename_component(name ${f} NAME)
  if(name MATCHES "^(sharing|layered)")
    list(APPEND problems "${name}: a file of the sharing layer under src/ (it belongs in sharing/)")
  endif()
  if(name MATCHES "^journal_" OR name STREQUAL "scheduler.cc")
    continue()
  endif()
  file(READ ${f} text)
  if(text MATCHES "#include \"(src/)?(sharing/[a-z_]+|sharing|layered)\\.h\"")
    list(APPEND problems "${name}: the core includes a header of the sharing layer")
  endif()
  if(text MATCHES "sharing_->|Sharing::|class Sharing")
    list(APPEND problems "${name}: the core names the sharing layer")
  endif()
endforeach()
if(problems)
  list(JOIN problems "\n  " msg)
  message(FATAL_ERROR "the core must not know the sharing layer:\n  ${msg}")
endif()
message(STATUS "the core knows nothing of the sharing layer (${SRC}, ${SHARING})")
