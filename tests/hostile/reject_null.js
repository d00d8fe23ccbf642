// The program returns a promise it rejected with null itself: `invalid`.
// expect: invalid
// error: uncaught exception: null
return Promise.reject(null);
