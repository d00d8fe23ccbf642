// A getter on the returned value throws while it is serialised: the
// program's own error, `invalid`, naming it.
// expect: invalid
// error: boom in a getter
return { get x() { throw new Error("boom in a getter"); } };
