/* export.h — PA_EXPORT marks the functions libpinarena.so exports besides the
 * malloc family (the memory hooks, the invalidation sinks, the registration
 * cache, the userfaultfd monitor). The shim compiles everything with
 * -fvisibility=hidden; a declaration with default visibility wins over it, and
 * src/shim/exports.map names what finally leaves the library. In the core
 * archive it changes nothing (default visibility anyway).
 *
 * Calls between these functions inside the shim go through the PLT: the
 * process has ONE sink table, the one of the first definition in symbol
 * lookup order (the shim when preloaded), and every hook, cache and Java
 * feed that binds by name uses it. */
#ifndef PA_EXPORT_H
#define PA_EXPORT_H
#define PA_EXPORT __attribute__((visibility("default")))
#endif
