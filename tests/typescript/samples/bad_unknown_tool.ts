// expect: No overload matches this call.
return await host.call("get_log", { host: "db1" });
