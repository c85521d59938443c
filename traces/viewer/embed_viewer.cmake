# Splices viewer.css and viewer.js into viewer.html and writes it as the C++ constant
# kViewerTemplate. Run at build time: cmake -DVIEWER_DIR=... -DOUTPUT=... -P embed_viewer.cmake
file(READ ${VIEWER_DIR}/viewer.html html)
file(READ ${VIEWER_DIR}/viewer.css css)
file(READ ${VIEWER_DIR}/viewer.js js)
foreach(marker NEURONSIM_CSS NEURONSIM_JS NEURONSIM_DATA)
  string(FIND "${html}" "/*${marker}*/" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "viewer.html lacks the /*${marker}*/ marker")
  endif()
endforeach()
string(FIND "${css}${js}" ")NSVIEW\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "viewer.css or viewer.js contains the raw-string delimiter )NSVIEW\"")
endif()
string(REPLACE "/*NEURONSIM_CSS*/\n" "${css}" html "${html}")
string(REPLACE "/*NEURONSIM_JS*/\n" "${js}" html "${html}")
file(WRITE ${OUTPUT}.tmp
  "// Generated from traces/viewer/viewer.{html,css,js} by embed_viewer.cmake: edit those files.\n"
  "#include \"traces/viewer/viewer.h\"\n\nnamespace neuronsim::traces {\n\n"
  "const char* const kViewerTemplate = R\"NSVIEW(${html})NSVIEW\";\n\n}  // namespace neuronsim::traces\n")
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
