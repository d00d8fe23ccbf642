// The parser recursing a million levels deep.
// expect: limit
// error: stack
return eval("[".repeat(1e6));
