# The model unit tests (written with the model, viewer/model_*.c): the viewer's numbers without SDL or GL.
add_executable(test_viewer_model ${CMAKE_CURRENT_SOURCE_DIR}/test_model.c)
target_link_libraries(test_viewer_model PRIVATE mw_viewer_model PkgConfig::CMOCKA)
add_test(NAME viewer_model COMMAND test_viewer_model)
set_tests_properties(viewer_model PROPERTIES LABELS "viewer;unit" TIMEOUT 120)

# The steering request code shared with mpiwatch-steer and the viewer's steering client,
# against a ROUTER of the test's own.
add_executable(test_viewer_control ${CMAKE_CURRENT_SOURCE_DIR}/test_control.c)
target_link_libraries(test_viewer_control PRIVATE mw_viewer_control PkgConfig::CMOCKA)
add_test(NAME viewer_control COMMAND test_viewer_control)
set_tests_properties(viewer_control PROPERTIES LABELS "viewer;unit" TIMEOUT 60)

# Traced windows in the model (docs/trace.md, "Viewing traced windows"): decoding, bounds, late
# traces, hostile traces, exact pixels, partly exact windows, picking, open calls, the rank
# timeline's rows, spans and messages.
add_executable(test_viewer_trace ${CMAKE_CURRENT_SOURCE_DIR}/test_trace.c)
target_link_libraries(test_viewer_trace PRIVATE mw_viewer_model PkgConfig::CMOCKA)
add_test(NAME viewer_trace COMMAND test_viewer_trace)
set_tests_properties(viewer_trace PROPERTIES LABELS "viewer;unit" TIMEOUT 60)

# The logical view's model (docs/viewer.md, "Logical view"): a ring with one late rank analysed
# into steps and lateness, cells in their colour, the marker, messages, aggregated rows and
# columns, picking, the selection, the cache, ranges without traces, the screen split.
add_executable(test_viewer_logical ${CMAKE_CURRENT_SOURCE_DIR}/test_logical.c)
target_link_libraries(test_viewer_logical PRIVATE mw_viewer_model PkgConfig::CMOCKA)
add_test(NAME viewer_logical COMMAND test_viewer_logical)
set_tests_properties(viewer_logical PROPERTIES LABELS "viewer;unit" TIMEOUT 60)

# The terrain's model (docs/viewer.md, "Terrain view"): known per-rank values summed over a
# range, columns and "other", every metric, 16,384 ranks aggregated into rows, the largest
# cells, picking in 3D and 2D, the cache, windows that do not add up.
add_executable(test_viewer_terrain ${CMAKE_CURRENT_SOURCE_DIR}/test_terrain.c)
target_link_libraries(test_viewer_terrain PRIVATE mw_viewer_model PkgConfig::CMOCKA)
add_test(NAME viewer_terrain COMMAND test_viewer_terrain)
set_tests_properties(viewer_terrain PROPERTIES LABELS "viewer;unit" TIMEOUT 60)
