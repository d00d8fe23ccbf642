// No way to open a socket or make a request.
// expect: ok
// value: ["undefined","undefined","undefined","undefined"]
return [typeof fetch, typeof XMLHttpRequest, typeof WebSocket, typeof globalThis.net];
