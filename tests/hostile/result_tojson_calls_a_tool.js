// toJSON of the returned value calls a tool: the program has ended, so
// the call is never sent, and the Result is the value toJSON gives.
// expect: ok
// value: {"made": true}
return { toJSON() { host.call("echo", 1); return { made: true }; } };
