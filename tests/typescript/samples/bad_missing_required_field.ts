// expect: Property 'name' is missing
return await move_shape({ corners: [], motion: "still" });
