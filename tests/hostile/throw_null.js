// The program's own `throw null`, with memory to spare: its own exception,
// `invalid`, not an out-of-memory `null` from QuickJS.
// expect: invalid
// error: uncaught exception: null
throw null;
