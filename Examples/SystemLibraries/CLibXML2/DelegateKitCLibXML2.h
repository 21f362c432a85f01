#include <libxml/xmlversion.h>
/* Debian's libxml2 is built with ICU, and its encoding.h then includes the system's ICU headers, whose
   UErrorCode clashes with the copy inside Swift's Foundation in any module that imports both. Nothing
   here uses the two ICU members of xmlCharEncodingHandler (reached only through pointers), so the
   Swift view leaves them out; the library's own layout is unaffected. */
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

/* libxml2 2.12 made the structured error handler's error `const` (`xmlStructuredErrorFunc`, the SAX
   handler's `serror`), which Swift imports as UnsafePointer rather than UnsafeMutablePointer. A closure's
   type must be the member's exactly, so the examples spell the parameter with this name, which follows
   the headers in use (Debian 12 ships 2.9, Debian 13 and later 2.12 or newer). */
#if LIBXML_VERSION >= 21200
typedef const xmlError *dk_xml_error_pointer;
#else
typedef xmlError *dk_xml_error_pointer;
#endif
