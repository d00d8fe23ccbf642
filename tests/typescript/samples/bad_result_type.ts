// expect: error TS2322: Type 'string[]' is not assignable to type 'number'.
const n: number = await get_logs("db1");
return n;
