// expect: error TS2322: Type 'string' is not assignable to type 'number'.
return await move_shape({ name: "s", corners: [{ x: "0", y: 0 }], motion: "still" });
