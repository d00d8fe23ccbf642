// expect: error TS2322: Type '"users"' is not assignable to type '"hosts" | "alerts"'.
return await query({ table: "users" });
