// JSON.parse of arrays nested 200,000 deep: QuickJS's JSON parser recurses
// in C, one level per bracket.
// expect: limit
// error: stack overflow
return JSON.parse("[".repeat(2e5) + "]".repeat(2e5)).length;
