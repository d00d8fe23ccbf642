// expect: Object literal may only specify known properties, and 'verbose' does not exist
return await query({ table: "hosts", verbose: true });
