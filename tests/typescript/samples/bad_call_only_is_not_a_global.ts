// expect: Cannot find name 'search'.
return await search({ q: "x" });
