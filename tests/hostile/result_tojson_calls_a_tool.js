// toJSON of the returned value calls a tool while the Result is written:
// the Result is still the one value toJSON gives, and nothing waits for
// the call (whether it reaches the parent is not checked here).
// expect: ok
// value: {"made": true}
return { toJSON() { host.call("echo", 1); return { made: true }; } };
