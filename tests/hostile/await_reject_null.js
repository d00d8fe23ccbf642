// The program awaits a promise it rejected with null itself: `invalid`.
// expect: invalid
// error: uncaught exception: null
await Promise.reject(null);
