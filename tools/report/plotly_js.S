/* plotly.js (Debian's python3-plotly: /usr/share/python3-plotly/plotly.js, or the path CMake
   found, FATHOM_PLOTLY_JS) embedded in the program for the HTML report (tools/report/page.cpp). */
    .section .rodata
    .global fathom_plotly_js_begin
    .global fathom_plotly_js_end
fathom_plotly_js_begin:
    .incbin FATHOM_PLOTLY_JS
fathom_plotly_js_end:
    .byte 0
    .section .note.GNU-stack,"",@progbits
