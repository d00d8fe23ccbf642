// A large Map logged in a loop: the console shows 100 entries, but walked
// all 200,000 of them at every log (1,000 logs took about 13 s; Node: 50
// ms). It now stops after what it shows. Most lines are past the console's
// cap and dropped; the walk is what this measures.
// expect: ok
// value: 1000
const rows = new Map();
for (let i = 0; i < 200000; i++) rows.set(i, i);
let logged = 0;
for (let i = 0; i < 1000; i++) { console.log(rows); logged++; }
return logged;
