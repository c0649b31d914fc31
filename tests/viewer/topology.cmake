# The topology and matrix views: the model's unit tests (topo.h's modules, the step store) and snapshot
# tests on recordings written by topo-synth (placement, hardware, pairs and steps of known
# content).
add_executable(test_viewer_topo ${CMAKE_CURRENT_SOURCE_DIR}/test_topo.c)
target_link_libraries(test_viewer_topo PRIVATE mw_viewer_model PkgConfig::CMOCKA)
add_test(NAME viewer_topo COMMAND test_viewer_topo)
set_tests_properties(viewer_topo PROPERTIES LABELS "viewer;unit" TIMEOUT 120)

# Job descriptions over the caps (proto/mw_limits.h): a 65,536-deep hardware chain laid out
# without recursion, and refused with every other claim over a cap by mw_topo_job_check.
add_executable(test_viewer_topo_caps ${CMAKE_CURRENT_SOURCE_DIR}/test_topo_caps.c)
target_link_libraries(test_viewer_topo_caps PRIVATE mw_viewer_model PkgConfig::CMOCKA)
add_test(NAME viewer_topo_caps COMMAND test_viewer_topo_caps)
set_tests_properties(viewer_topo_caps PROPERTIES LABELS "viewer;unit" TIMEOUT 120)

# The live source refuses a feed's job description over the caps (the 65,536-deep chain) and
# takes a valid one after it, through a real PUB socket.
add_executable(test_viewer_source_caps ${CMAKE_CURRENT_SOURCE_DIR}/test_source_caps.c)
target_link_libraries(test_viewer_source_caps PRIVATE mw_viewer_source PkgConfig::CMOCKA)
add_test(NAME viewer_source_caps COMMAND test_viewer_source_caps)
set_tests_properties(viewer_source_caps PROPERTIES LABELS "viewer;unit" TIMEOUT 120)

add_executable(topo-synth ${CMAKE_CURRENT_SOURCE_DIR}/topo-synth.c)
target_link_libraries(topo-synth PRIVATE mw_recording mw_proto)

foreach(t topology matrix scale)
  add_test(NAME viewer_snapshot_${t}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/snapshot_${t}.sh
                   $<TARGET_FILE:mpiwatch-viewer> $<TARGET_FILE:topo-synth>
                   $<TARGET_FILE:mw-pngprobe>)
  set_tests_properties(viewer_snapshot_${t} PROPERTIES LABELS "viewer;snapshot;integration"
                                                       TIMEOUT 180 SKIP_RETURN_CODE 77)
endforeach()

# The network layer (--network, docs/topology.md): groups, switches, link classes, gaps.
add_test(NAME viewer_snapshot_network
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/snapshot_network.sh
                 $<TARGET_FILE:mpiwatch-viewer> $<TARGET_FILE:topo-synth>
                 $<TARGET_FILE:mw-pngprobe> $<TARGET_FILE:mpiwatch-export>)
set_tests_properties(viewer_snapshot_network PROPERTIES LABELS "viewer;snapshot;integration"
                                                        TIMEOUT 180 SKIP_RETURN_CODE 77)

# The layout with a network and the NUMA level (unit).
add_executable(test_viewer_network_layout ${CMAKE_CURRENT_SOURCE_DIR}/test_network_layout.c)
target_link_libraries(test_viewer_network_layout PRIVATE mw_topo_layout PkgConfig::CMOCKA)
add_test(NAME viewer_network_layout COMMAND test_viewer_network_layout)
set_tests_properties(viewer_network_layout PROPERTIES LABELS "viewer;unit" TIMEOUT 60)
