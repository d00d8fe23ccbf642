// A tool value one byte over max_bytes is refused with limit (never cut and
// delivered); uncaught, it ends the execution with that kind.
// expect: limit
// error: byte quota
// budget: max_bytes=1000000
return (await bytes(1000001)).length;
