// No environment, no arguments, no process object; Date and Math.random do work.
// expect: ok
// value: ["undefined","undefined","undefined",true,true]
return [typeof process, typeof scriptArgs, typeof environ, Date.now() > 0, Math.random() < 1];
