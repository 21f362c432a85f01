/* GLib, GObject and GIO: the largest C callback ecosystem on Linux, used by the examples and tests only
   (the library itself does not depend on it). */
#include <glib.h>
#include <glib-object.h>
#include <gio/gio.h>
