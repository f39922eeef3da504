// A shared library that is not a rewind model: it exports a function, but not the entry point
// REWIND_MODEL defines.
extern "C" __attribute__((visibility("default"))) int not_a_rewind_model(void) {
  return 42;
}
