// Console output far past the cap: cut with a marker, the execution goes on.
// expect: ok
// console: truncated
for (let i = 0; i < 300000; i++) console.log("flood " + i);
return "survived";
