// 200,000 timers at once, all of them run: timers are the program's to
// use as it likes, within the wall clock and memory.
// expect: ok
// value: 200000
let fired = 0;
await new Promise((resolve) => {
  for (let i = 0; i < 200000; i++) setTimeout(() => { if (++fired === 200000) resolve(); }, i % 5);
});
return fired;
