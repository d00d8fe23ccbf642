// No way to reach a file: no require, no std/os modules, no import.
// expect: ok
// value: ["undefined","undefined","undefined","refused"]
let imported = "loaded";
try { await import("/etc/passwd"); } catch (e) { imported = "refused"; }
return [typeof require, typeof std, typeof os, imported];
