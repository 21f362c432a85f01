#ifndef CDELEGATEKIT_PUBLISHING_H
#define CDELEGATEKIT_PUBLISHING_H

/* A function-pointer slot in a table C reads while Swift replaces it: the store must never tear, and a
   call that loads the new pointer must see everything written before it was stored. (The Swift half is
   Sources/DelegateKit/Delegates/SlotTable/Publishing.swift.) */
void cffi_store_pointer(void **slot, const void *value);
const void *cffi_load_pointer(void *const *slot);

#endif
