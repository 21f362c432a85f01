/* A C target of the consumer package's own: its enum conforms to CValue in MyWrapper. */
#pragma once

typedef enum { shape_circle, shape_square } shape_kind;

int shape_corners(shape_kind kind);
