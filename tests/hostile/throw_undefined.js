// The program's own `throw undefined`: `invalid`.
// expect: invalid
// error: uncaught exception: undefined
throw undefined;
