/* A system-library target of the consumer package's own (a module map over a header, as for GLib). */
#pragma once

typedef enum { corner_round, corner_sharp } corner_kind;
