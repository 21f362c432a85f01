/* libjpeg's own pattern for errors, as its example.c writes it: a setjmp site around the decoding, an
   error manager whose error_exit longjmps back. Here error_exit is whatever the caller's table holds
   (a DelegateKit closure, which jumps with fx_jump_back). */
#include "DelegateKitFixtures.h"

#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <jpeglib.h>

int fx_jpeg_decode(const unsigned char *data, size_t size, void *error_manager, int *width, int *height) {
    struct jpeg_decompress_struct info;
    info.err = error_manager;
    jpeg_create_decompress(&info);
    jmp_buf site;
    jmp_buf **current = fx_jump_site();
    jmp_buf *outer = *current;
    *current = &site;
    int code = setjmp(site);
    if (code == 0) {
        jpeg_mem_src(&info, data, (unsigned long)size);
        jpeg_read_header(&info, TRUE);
        jpeg_start_decompress(&info);
        JSAMPLE row[4096 * 4];
        JSAMPROW rows[1] = {row};
        while (info.output_scanline < info.output_height) jpeg_read_scanlines(&info, rows, 1);
        jpeg_finish_decompress(&info);
        *width = (int)info.output_width;
        *height = (int)info.output_height;
    }
    *current = outer;
    jpeg_destroy_decompress(&info);
    return code;
}
