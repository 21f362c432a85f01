/* libjpeg's header uses FILE and size_t without including what declares them. */
#include <stddef.h>
#include <stdio.h>
#include <jpeglib.h>
