// expect: error TS2345: Argument of type 'number' is not assignable to parameter of type 'string'.
const lines = await get_logs(42, 10);
return lines;
