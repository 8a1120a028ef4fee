# Issue 27 item 1 (docs/architecture.md, "GPU sharing: a layer above the core"): the
# whole-GPU core does not know GPU sharing. Fails when a core file under SRC includes the
# sharing layer's headers (sharing.h, layered.h) or names `Sharing` or a `sharing_` member,
# and when any file under SRC has the re-entry flag or the back-pointer (`in_core_`,
# `core_->`). The core: every src/*.h and *.cc except sharing*, share_choice*, layered*
# and scheduler.cc (the façade, which forwards to the layer) with its journal (journal_*:
# it records and replays the façade's calls on the layer). (share_choice.h, the stranded
# rule, includes nothing of either: the saved state's format, persistence_json.h, uses it.)
file(GLOB files ${SRC}/*.h ${SRC}/*.cc)
set(problems "")
foreach(f ${files})
  get_filename_component(name ${f} NAME)
  file(READ ${f} text)
  if(text MATCHES "in_core_|core_->")
    list(APPEND problems "${name}: re-entry flag or back-pointer (in_core_ / core_->)")
  endif()
  if(name MATCHES "^(sharing|share_choice|layered|journal_)" OR name STREQUAL "scheduler.cc")
    continue()
  endif()
  if(text MATCHES "#include \"src/(sharing|layered)\\.h\"")
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
message(STATUS "the core knows nothing of the sharing layer (${SRC})")
