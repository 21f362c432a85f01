#include <libxml/xmlversion.h>
/* Debian's libxml2 is built with ICU, and its encoding.h then includes the system's ICU headers, whose
   UErrorCode clashes with the copy inside Swift's Foundation in any module that imports both. Nothing
   here uses the two ICU members of xmlCharEncodingHandler (reached only through pointers), so the
   Swift view leaves them out; the library's own layout is unaffected. */
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
