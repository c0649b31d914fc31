# Snapshot and data-source tests of the viewer, on synthetic recordings with exactly known
# content (synth.h), a real collector and the load generator. See the scripts for what each
# checks; tests/viewer/lib.sh holds their shared helpers.
find_path(MW_STB_INCLUDE_DIR stb_image.h PATH_SUFFIXES stb REQUIRED)
find_library(MW_STB_LIBRARY stb REQUIRED)

# Synthetic recordings: the collector core in-process with a recording open.
add_library(mw_synth STATIC synth.c synth_terrain.c)
target_include_directories(mw_synth PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(mw_synth PUBLIC mw_collector_core mw_testmsg)
add_executable(mw-synth mw-synth.c)
target_link_libraries(mw-synth PRIVATE mw_synth)

# Answers questions about a PNG's pixels (stb_image from libstb, which holds the
# implementation: STB_IMAGE_IMPLEMENTATION is not defined here).
add_executable(mw-pngprobe mw-pngprobe.c)
target_include_directories(mw-pngprobe PRIVATE ${MW_STB_INCLUDE_DIR})
target_link_libraries(mw-pngprobe PRIVATE ${MW_STB_LIBRARY} m)

# The data source (viewer/source*.c) on recordings: replay at speed 0 and as if live, rank
# requests.
add_executable(test_source test_source.c)
target_link_libraries(test_source PRIVATE mw_viewer_source mw_synth)
add_test(NAME viewer_source COMMAND test_source)
set_tests_properties(viewer_source PROPERTIES LABELS "viewer;unit" TIMEOUT 120)

# The data source on a live collector (feed and history), through a small probe program.
add_executable(mw-source-probe mw-source-probe.c)
target_link_libraries(mw-source-probe PRIVATE mw_viewer_source)
add_test(NAME viewer_source_live
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/source_live.sh
                 $<TARGET_FILE:mpiwatch-collector> $<TARGET_FILE:mpiwatch-loadgen>
                 $<TARGET_FILE:mw-source-probe>)
set_tests_properties(viewer_source_live PROPERTIES LABELS "viewer;integration" TIMEOUT 120
                                                   SKIP_RETURN_CODE 77)

# The status bar names the tier of what is shown: a replay ("windows") and a live viewer paging
# from a collector's history ("memory").
add_test(NAME viewer_snapshot_tier
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/snapshot_tier.sh
                 $<TARGET_FILE:mpiwatch-viewer> $<TARGET_FILE:mw-synth>
                 $<TARGET_FILE:mw-pngprobe> $<TARGET_FILE:mpiwatch-collector>
                 $<TARGET_FILE:mpiwatch-loadgen>)
set_tests_properties(viewer_snapshot_tier PROPERTIES LABELS "viewer;snapshot;integration"
                                                     TIMEOUT 180 SKIP_RETURN_CODE 77)

# Snapshots: the viewer drawn offscreen, its pixels checked against the synthetic content.
foreach(t stack outlier pick views)
  add_test(NAME viewer_snapshot_${t}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/snapshot_${t}.sh
                   $<TARGET_FILE:mpiwatch-viewer> $<TARGET_FILE:mw-synth>
                   $<TARGET_FILE:mw-pngprobe>)
  set_tests_properties(viewer_snapshot_${t} PROPERTIES LABELS "viewer;snapshot;integration"
                                                       TIMEOUT 180 SKIP_RETURN_CODE 77)
endforeach()

# Traced windows (docs/trace.md, "Viewing traced windows"): a recording of crafted windows with
# known per-call traces, the exact call view and the per-rank timeline checked pixel by pixel.
add_executable(mw-trace-synth mw-trace-synth.c)
target_link_libraries(mw-trace-synth PRIVATE mw_collector_core mw_trace)
add_test(NAME viewer_snapshot_trace
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/snapshot_trace.sh
                 $<TARGET_FILE:mpiwatch-viewer> $<TARGET_FILE:mw-trace-synth>
                 $<TARGET_FILE:mw-pngprobe>)
set_tests_properties(viewer_snapshot_trace PROPERTIES LABELS "viewer;snapshot;integration"
                                                      TIMEOUT 180 SKIP_RETURN_CODE 77)

# The terrain view (docs/viewer.md, "Terrain view"): windows with known per-rank figures per
# function and region (mw-synth --pattern terrain), drawn in 3D and as a heat map at 16 and
# 16,384 ranks: the meta against the known values, the largest cell's pixel, picking it.
add_test(NAME viewer_snapshot_terrain
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/snapshot_terrain.sh
                 $<TARGET_FILE:mpiwatch-viewer> $<TARGET_FILE:mw-synth>
                 $<TARGET_FILE:mw-pngprobe>)
set_tests_properties(viewer_snapshot_terrain PROPERTIES LABELS "viewer;snapshot;integration"
                                                        TIMEOUT 180 SKIP_RETURN_CODE 77)
