// A spread of a million arguments: past QuickJS's cap on one call's
// arguments (65,535), a size cap.
// expect: limit
// error: size limit: RangeError: too many arguments in function call
return Math.max(...new Array(1e6).fill(1));
